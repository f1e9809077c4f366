// Unit tests of the CORS origin language: what an entry may say (each limit at its boundary and one past it), and what each pattern matches.
import { describe, expect, it } from 'vitest';
import { corsOriginProblem, parseOriginPattern, parseRequestOrigin, patternMatches, type OriginPattern } from './cors-origins.js';
import { ConfigError, loadConfig } from './load-config.js';

const label = (n: number) => 'a'.repeat(n);

function matches(entry: string, origin: string): boolean {
  const pattern = parseOriginPattern(entry) as OriginPattern;
  expect(typeof pattern, entry).toBe('object');
  const parsed = parseRequestOrigin(origin);
  return parsed !== undefined && patternMatches(pattern, parsed);
}

describe('CORS origin entries', () => {
  it('accepts exact origins as browsers send them, patterns and *', () => {
    for (const entry of ['*', 'https://app.example.com', 'http://localhost:3000', 'http://127.0.0.1:8080', 'http://[::1]:3000', 'https://*.example.com', 'http://localhost:*', 'https://*.example.com:*', 'http://example.com:443']) {
      expect(corsOriginProblem(entry), entry).toBeUndefined();
    }
  });

  it('refuses paths and trailing slashes, naming the origin to write', () => {
    expect(corsOriginProblem('https://app.example.com/')).toBe('invalid origin "https://app.example.com/": an origin has no path, not even a trailing slash: https://app.example.com');
    expect(corsOriginProblem('https://app.example.com/graphql')).toBe('invalid origin "https://app.example.com/graphql": an origin is scheme://host[:port] only, with no path, query or fragment: https://app.example.com');
    expect(corsOriginProblem('https://app.example.com?x=1')).toMatch(/no path, query or fragment/);
    expect(corsOriginProblem('https://app.example.com#top')).toMatch(/no path, query or fragment/);
  });

  it('refuses what a browser never sends: other schemes, capitals, default ports, users', () => {
    expect(corsOriginProblem('ftp://example.com')).toMatch(/the scheme must be http or https/);
    expect(corsOriginProblem('app.example.com')).toMatch(/write scheme:\/\/host\[:port\]/);
    expect(corsOriginProblem('https://App.Example.com')).toMatch(/lowercase, as browsers send it: https:\/\/app\.example\.com/);
    expect(corsOriginProblem('https://example.com:443')).toMatch(/browsers leave the default port out/);
    expect(corsOriginProblem('http://example.com:80')).toMatch(/browsers leave the default port out/);
    expect(corsOriginProblem('https://user@example.com')).toMatch(/names no user/);
    expect(corsOriginProblem('null')).toMatch(/write scheme:\/\/host/);
    expect(corsOriginProblem('')).toMatch(/an origin is text/);
    expect(corsOriginProblem(42)).toMatch(/an origin is text/);
  });

  it('refuses * anywhere but the whole entry, the leftmost labels or the port, and a wildcard too broad or on an address', () => {
    for (const entry of ['*.example.com', 'https://app*.example.com', 'https://*example.com', 'https://example.*', 'https://a.*.example.com', 'https://**.example.com']) {
      expect(corsOriginProblem(entry), entry).toMatch(/invalid origin/);
    }
    expect(corsOriginProblem('https://*.com')).toMatch(/too broad/);
    expect(corsOriginProblem('https://*.10.0.0.1')).toMatch(/an address has no subdomains/);
    expect(corsOriginProblem('http://[::g]')).toMatch(/not an IPv6 address/);
  });

  it('holds ports to 1..65535 without leading zeros: each end and one past it', () => {
    expect(corsOriginProblem('http://localhost:1')).toBeUndefined();
    expect(corsOriginProblem('http://localhost:65535')).toBeUndefined();
    expect(corsOriginProblem('http://localhost:0')).toMatch(/from 1 to 65535/);
    expect(corsOriginProblem('http://localhost:65536')).toMatch(/from 1 to 65535/);
    expect(corsOriginProblem('http://localhost:08080')).toMatch(/without leading zeros/);
  });

  it('holds labels to 63 characters and hosts to 253: at the limit and one past it', () => {
    expect(corsOriginProblem(`https://${label(63)}.com`)).toBeUndefined();
    expect(corsOriginProblem(`https://${label(64)}.com`)).toMatch(/has 64 characters \(at most 63\)/);
    const host253 = [label(63), label(63), label(63), label(61)].join('.');
    expect(host253).toHaveLength(253);
    expect(corsOriginProblem(`https://${host253}`)).toBeUndefined();
    expect(corsOriginProblem(`https://${host253}a`)).toMatch(/the host has 254 characters; a DNS name has at most 253/);
  });

  it('checks SWITCHYARD_CORS_ORIGINS at start: every wrong entry named; none, or the environment default', () => {
    expect(loadConfig({}, { SWITCHYARD_CORS_ORIGINS: 'https://app.example.com, https://*.example.com' }).corsOrigins).toEqual(['https://app.example.com', 'https://*.example.com']);
    expect(loadConfig({}, { SWITCHYARD_CORS_ORIGINS: 'none', NODE_ENV: 'development' }).corsOrigins).toEqual([]);
    expect(loadConfig({}, {}).corsOrigins).toEqual(['*']);
    expect(loadConfig({ authMode: 'off' }, { NODE_ENV: 'production' }).corsOrigins).toEqual([]);
    let error: unknown;
    try {
      loadConfig({}, { SWITCHYARD_CORS_ORIGINS: 'https://ok.example.com,https://bad.example.com/,ftp://x.example.com' });
    } catch (caught) {
      error = caught;
    }
    expect((error as ConfigError).problems).toEqual([
      'corsOrigins (SWITCHYARD_CORS_ORIGINS): invalid origin "https://bad.example.com/": an origin has no path, not even a trailing slash: https://bad.example.com (got "https://ok.example.com,https://bad.example.com/,ftp://x.example.com")',
      'corsOrigins (SWITCHYARD_CORS_ORIGINS): invalid origin "ftp://x.example.com": the scheme must be http or https (got "https://ok.example.com,https://bad.example.com/,ftp://x.example.com")',
    ]);
  });
});

describe('CORS origin patterns', () => {
  it('a host wildcard stands for one or more whole labels before the suffix, on the same scheme and port', () => {
    expect(matches('https://*.example.com', 'https://a.example.com')).toBe(true);
    expect(matches('https://*.example.com', 'https://a.b.example.com')).toBe(true);
    expect(matches('https://*.example.com', 'https://example.com')).toBe(false);
    expect(matches('https://*.example.com', 'https://a.example.com.evil.net')).toBe(false);
    expect(matches('https://*.example.com', 'https://evilexample.com')).toBe(false);
    expect(matches('https://*.example.com', 'https://.example.com')).toBe(false);
    expect(matches('https://*.example.com', 'http://a.example.com')).toBe(false);
    expect(matches('https://*.example.com', 'https://a.example.com:8443')).toBe(false);
    expect(matches('https://*.example.com:*', 'https://a.example.com:8443')).toBe(true);
  });

  it('a port wildcard stands for any port, the default included, on that host only', () => {
    expect(matches('http://localhost:*', 'http://localhost:3000')).toBe(true);
    expect(matches('http://localhost:*', 'http://localhost')).toBe(true);
    expect(matches('http://localhost:*', 'http://localhost.evil.net:3000')).toBe(false);
    expect(matches('http://localhost:*', 'https://localhost:3000')).toBe(false);
  });

  it('* matches any http(s) origin, never one a browser sends for a sandboxed page or a file (null)', () => {
    expect(matches('*', 'https://anything.example')).toBe(true);
    expect(matches('*', 'null')).toBe(false);
  });
});
