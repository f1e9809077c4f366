// The origin language of the CORS allow-list (decision 037): an exact origin as browsers send it, or a pattern; checked once, matched per request.
import { isIPv4, isIPv6 } from 'node:net';

/**
 * What one entry of the allow-list may say. Entries are written as browsers send the `Origin` header
 * (RFC 6454 §6.2: lowercase scheme and host, the scheme's default port left out), so an entry either
 * matches an origin character for character or is refused when it is written; never silently dead.
 *
 * 1. `*`: any origin. Never with credentials (the Fetch standard refuses `*` then, and reflecting any
 *    origin with credentials hands every site the user's session).
 * 2. `scheme://host[:port]`: one origin. The scheme is `http` or `https`; the host a DNS name (labels of
 *    a-z, 0-9 and `-`, 1 to 63 characters each, not starting or ending with `-`, 253 at most in all), an
 *    IPv4 address or a bracketed IPv6 address; the port 1 to 65535, without leading zeros, and not the
 *    scheme's default (80, 443), which browsers leave out. No user, path, query or fragment: not even
 *    a trailing slash.
 * 3. `scheme://*.suffix[:port]`: one or more whole labels before `suffix`, on that scheme and port.
 *    `https://*.example.com` allows `https://a.example.com` and `https://a.b.example.com`, not
 *    `https://example.com`, `https://evilexample.com` or `https://a.example.com.evil.net`. The suffix is
 *    a DNS name of at least two labels (`https://*.com` is refused as too broad), never an address.
 * 4. A port `*` (`http://localhost:*`): any port on that scheme and host, the default one included.
 *
 * `*` means nothing anywhere else (`https://app*.example.com` and `*.example.com` are refused).
 */
export type OriginPattern =
  | { readonly kind: 'any'; readonly text: '*' }
  | { readonly kind: 'host'; readonly text: string; readonly scheme: string; readonly host: string; readonly subdomains: boolean; readonly port: string | undefined; readonly anyPort: boolean };

/** The longest host a DNS name may have (RFC 1035 §2.3.4, without the trailing dot). */
export const MAX_HOST_LENGTH = 253;
/** The longest DNS label (RFC 1035 §2.3.4). */
export const MAX_LABEL_LENGTH = 63;

const SCHEMES: Readonly<Record<string, string>> = { http: '80', https: '443' };
const LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;
const WHOLE = /^([^:/?#]*):\/\/([^/?#]*)(.*)$/s;

const ANY: OriginPattern = { kind: 'any', text: '*' };

/** A parsed entry, or the message of what is wrong with it (the words `cors set`, `config apply` and the start check all use). */
export function parseOriginPattern(value: unknown): OriginPattern | string {
  if (typeof value !== 'string' || value.length === 0) return `an origin is text such as https://app.example.com (got ${JSON.stringify(value) ?? String(value)})`;
  if (value === '*') return ANY;
  const invalid = (why: string) => `invalid origin ${JSON.stringify(value)}: ${why}`;
  const whole = WHOLE.exec(value);
  if (!whole) return invalid('write scheme://host[:port], e.g. https://app.example.com');
  const [, scheme, authority, rest] = whole;
  if (value !== value.toLowerCase()) return invalid(`write it in lowercase, as browsers send it: ${value.toLowerCase()}`);
  if (!(scheme in SCHEMES)) return invalid('the scheme must be http or https');
  if (rest === '/') return invalid(`an origin has no path, not even a trailing slash: ${scheme}://${authority}`);
  if (rest !== '') return invalid(`an origin is scheme://host[:port] only, with no path, query or fragment: ${scheme}://${authority}`);
  if (authority.includes('@')) return invalid('an origin names no user');
  const [, hostText, portText] = /^(\[[^\]]*\]|[^:]*)(?::(.*))?$/s.exec(authority) ?? [];
  const port = portProblem(portText, scheme);
  if (port.problem) return invalid(port.problem);
  const host = hostProblem(hostText ?? '');
  if (host.problem) return invalid(host.problem);
  return { kind: 'host', text: value, scheme, host: host.host, subdomains: host.subdomains, port: port.port, anyPort: port.any };
}

/** Why `value` cannot be an allow-list entry, or undefined. */
export function corsOriginProblem(value: unknown): string | undefined {
  const parsed = parseOriginPattern(value);
  return typeof parsed === 'string' ? parsed : undefined;
}

function portProblem(text: string | undefined, scheme: string): { problem?: string; port?: string; any: boolean } {
  if (text === undefined) return { any: false };
  if (text === '*') return { any: true };
  if (!/^[1-9]\d{0,4}$/.test(text) || Number(text) > 65_535) return { problem: `the port must be a number from 1 to 65535 without leading zeros, or * for any port (got ${JSON.stringify(text)})`, any: false };
  if (text === SCHEMES[scheme]) return { problem: `browsers leave the default port out: write ${scheme}://…, not …:${text}`, any: false };
  return { port: text, any: false };
}

function hostProblem(text: string): { problem?: string; host: string; subdomains: boolean } {
  const subdomains = text.startsWith('*.');
  const host = subdomains ? text.slice(2) : text;
  if (host.includes('*')) return { problem: '* stands for the whole list (*), the leftmost labels of a host (https://*.example.com) or the port (http://localhost:*), nothing else', host, subdomains };
  if (host.startsWith('[') && host.endsWith(']')) {
    if (subdomains || !isIPv6(host.slice(1, -1))) return { problem: subdomains ? 'an address has no subdomains: drop *.' : `${host} is not an IPv6 address`, host, subdomains };
    return { host, subdomains };
  }
  if (isIPv4(host)) return subdomains ? { problem: 'an address has no subdomains: drop *.', host, subdomains } : { host, subdomains };
  if (host.length === 0) return { problem: 'the host is missing', host, subdomains };
  if (host.length > MAX_HOST_LENGTH) return { problem: `the host has ${host.length} characters; a DNS name has at most ${MAX_HOST_LENGTH}`, host, subdomains };
  const labels = host.split('.');
  const bad = labels.find((label) => !LABEL.test(label) || label.length > MAX_LABEL_LENGTH);
  if (bad !== undefined) {
    const why = bad.length > MAX_LABEL_LENGTH ? `has ${bad.length} characters (at most ${MAX_LABEL_LENGTH})` : 'is not a DNS label (a-z, 0-9 and -, not at either end)';
    return { problem: `the host's label ${JSON.stringify(bad)} ${why}`, host, subdomains };
  }
  if (subdomains && labels.length < 2) return { problem: `*.${host} is too broad: give a domain of at least two labels, e.g. https://*.example.com`, host, subdomains };
  return { host, subdomains };
}

/** An incoming `Origin` header, split; undefined for anything a browser would not send for an http(s) page (`null`, other schemes, a path). */
export interface RequestOrigin {
  readonly scheme: string;
  readonly host: string;
  readonly port: string | undefined;
}

const REQUEST_ORIGIN = /^(https?):\/\/([a-z0-9.-]+|\[[0-9a-f:.]+\])(?::([0-9]{1,5}))?$/;

export function parseRequestOrigin(origin: string): RequestOrigin | undefined {
  const match = REQUEST_ORIGIN.exec(origin);
  return match ? { scheme: match[1], host: match[2], port: match[3] } : undefined;
}

/** Whether a pattern that is not an exact origin (a host wildcard, a port wildcard, `*`) allows `origin`. */
export function patternMatches(pattern: OriginPattern, origin: RequestOrigin): boolean {
  if (pattern.kind === 'any') return true;
  if (pattern.scheme !== origin.scheme) return false;
  if (!pattern.anyPort && pattern.port !== origin.port) return false;
  if (!pattern.subdomains) return pattern.host === origin.host;
  // One or more whole labels before the suffix: the dot is required, and so is something before it.
  return origin.host.length > pattern.host.length + 1 && origin.host.endsWith(`.${pattern.host}`);
}

/** Whether a pattern names exactly one origin (then a map look-up finds it, and it wins over every pattern). */
export const isExactOrigin = (pattern: OriginPattern): boolean => pattern.kind === 'host' && !pattern.subdomains && !pattern.anyPort;

/**
 * The order patterns are tried in, most specific first, so an origin gets the rule written for it:
 * exact hosts with any port, then host wildcards by longest suffix, then `*`; ties in code-unit order.
 */
export function comparePatterns(a: OriginPattern, b: OriginPattern): number {
  const rank = (p: OriginPattern) => (p.kind === 'any' ? 2 : p.subdomains ? 1 : 0);
  const length = (p: OriginPattern) => (p.kind === 'any' ? 0 : p.host.length);
  return rank(a) - rank(b) || length(b) - length(a) || (a.text < b.text ? -1 : a.text > b.text ? 1 : 0);
}
