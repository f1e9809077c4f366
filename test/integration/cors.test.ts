// CORS by allow-list as ops and browsers meet it over HTTP: the defaults, live rules from the CLI and from a configuration file, the start list, streams, refusals.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRouter, type RunningRouter } from '../../src/cli/start-router.js';
import { listCorsRules } from '../../src/registry/cors-store.js';
import { createLogger } from '../../src/telemetry/logger.js';
import { runCli } from '../helpers/cli.js';
import { databaseKind, type TestStore } from '../helpers/database.js';
import { eventually } from '../helpers/http.js';
import { startStack, testConfig, type Stack } from '../helpers/stack.js';

const QUERY = JSON.stringify({ query: '{ products(first: 1) { id } }' });
const storeEnv = (store: TestStore) => (store.databaseUrl ? { DATABASE_URL: store.databaseUrl } : { SWITCHYARD_DATA_DIR: store.dataDir });

/** A browser's preflight: OPTIONS with the origin, the method and the headers the real request will have. */
const preflight = (url: string, origin: string, requestHeaders = 'content-type') =>
  fetch(url, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': requestHeaders } });

/** The real request that follows an allowed preflight. */
const post = (url: string, origin: string) => fetch(url, { method: 'POST', headers: { origin, 'content-type': 'application/json', accept: 'application/json' }, body: QUERY });

/** Every Access-Control-* header of an answer, by name. */
function corsHeaders(response: Response): Record<string, string> {
  const found: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    if (name.startsWith('access-control-')) found[name] = value;
  });
  return found;
}

async function allowed(url: string, origin: string): Promise<boolean> {
  const response = await preflight(url, origin);
  return response.headers.get('access-control-allow-origin') === origin;
}

describe(`CORS by allow-list (${databaseKind} database)`, () => {
  let stack: Stack;
  let production: RunningRouter;
  let dir: string;
  const debugLines: Record<string, unknown>[] = [];
  const cors = (args: string[]) => runCli(['cors', ...args], storeEnv(stack.store));

  beforeAll(async () => {
    // The stack's router runs in development (any origin); a production router shares its registry.
    stack = await startStack();
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) debugLines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    production = await startRouter({ config: testConfig(stack.store, { nodeEnv: 'production', authMode: 'off', logLevel: 'debug' }), logger: createLogger({ level: 'debug', destination }) });
    dir = await mkdtemp(path.join(tmpdir(), 'switchyard-cors-'));
  });
  afterAll(async () => {
    await production?.close();
    await stack?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  describe('the defaults', () => {
    it('production: no cross-origin access, a refused preflight carries no Access-Control-* header, and the refusal is logged at debug', async () => {
      const refused = await preflight(production.url, 'https://app.example.com');
      expect(refused.status).toBe(204);
      expect(corsHeaders(refused)).toEqual({});
      expect(refused.headers.get('vary')).toMatch(/\bOrigin\b/);
      const answer = await post(production.url, 'https://app.example.com');
      // Served (CORS is the browser's to enforce), but nothing lets a page read it.
      expect(answer.status).toBe(200);
      expect(corsHeaders(answer)).toEqual({});
      expect(answer.headers.get('vary')).toMatch(/\bOrigin\b/);
      expect(debugLines).toContainEqual(expect.objectContaining({ level: 20, origin: 'https://app.example.com', preflight: true, msg: 'cross-origin request refused: origin not in the CORS allow-list' }));
      expect(debugLines).toContainEqual(expect.objectContaining({ level: 20, origin: 'https://app.example.com', preflight: false, method: 'POST' }));
    });

    it('development: any origin, with the default methods, the headers asked for, no credentials', async () => {
      const answer = await preflight(stack.router.url, 'https://anything.test', 'content-type, x-custom');
      expect(answer.status).toBe(204);
      expect(corsHeaders(answer)).toEqual({ 'access-control-allow-origin': 'https://anything.test', 'access-control-allow-methods': 'GET, POST', 'access-control-allow-headers': 'content-type, x-custom' });
      const real = await post(stack.router.url, 'https://anything.test');
      expect(real.status).toBe(200);
      expect(corsHeaders(real)).toEqual({ 'access-control-allow-origin': 'https://anything.test', 'access-control-expose-headers': 'retry-after, switchyard-completed, x-request-id' });
      expect(real.headers.get('vary')).toMatch(/\bOrigin\b/);
    });

    it('a request from the router\'s own host is not cross-origin: nothing added, nothing logged', async () => {
      const own = new URL(production.url).origin;
      const before = debugLines.length;
      const answer = await post(production.url, own);
      expect(answer.status).toBe(200);
      expect(corsHeaders(answer)).toEqual({});
      expect(debugLines.slice(before).filter((line) => line.origin === own)).toEqual([]);
    });

    it('the start list (SWITCHYARD_CORS_ORIGINS) allows its origins in production, and only them', async () => {
      const started = await stack.startRouter({ nodeEnv: 'production', authMode: 'off', corsOrigins: 'https://start.example.com, http://localhost:*' });
      expect(await allowed(started.url, 'https://start.example.com')).toBe(true);
      expect(await allowed(started.url, 'http://localhost:5173')).toBe(true);
      expect(await allowed(started.url, 'https://other.example.com')).toBe(false);
      await started.close();
    });
  });

  describe('live rules from the CLI', () => {
    it('cors set reaches the router: a pattern at its boundary, credentials, max age, methods and headers', async () => {
      const set = await cors(['set', 'https://*.example.com', '--credentials', '--max-age', '600', '--methods', 'get,post', '--headers', 'Content-Type,authorization']);
      expect({ code: set.code, stderr: set.stderr }).toEqual({ code: 0, stderr: '' });
      expect(set.stdout.trim()).toBe('CORS origin https://*.example.com: methods GET, POST; headers authorization, content-type; credentials yes; max-age 600s');
      await eventually(() => allowed(production.url, 'https://a.example.com'), { timeoutMs: 2_000, what: 'the rule to reach the router' });
      const answer = await preflight(production.url, 'https://a.example.com');
      expect(corsHeaders(answer)).toEqual({
        'access-control-allow-origin': 'https://a.example.com',
        'access-control-allow-methods': 'GET, POST',
        'access-control-allow-headers': 'authorization, content-type',
        'access-control-allow-credentials': 'true',
        'access-control-max-age': '600',
      });
      expect(corsHeaders(await post(production.url, 'https://a.b.example.com'))).toMatchObject({ 'access-control-allow-origin': 'https://a.b.example.com', 'access-control-allow-credentials': 'true' });
      // The boundary: the suffix alone, a look-alike and the suffix inside another host stay refused.
      for (const origin of ['https://example.com', 'https://evilexample.com', 'https://a.example.com.evil.net', 'http://a.example.com']) {
        expect(corsHeaders(await preflight(production.url, origin)), origin).toEqual({});
      }
    });

    it('an exact origin wins over the pattern: its own max age (0) and no credentials', async () => {
      expect((await cors(['set', 'https://exact.example.com', '--max-age', '0'])).code).toBe(0);
      await eventually(async () => (await preflight(production.url, 'https://exact.example.com')).headers.get('access-control-max-age') === '0', { what: 'the exact rule' });
      const answer = await preflight(production.url, 'https://exact.example.com');
      expect(answer.headers.get('access-control-allow-credentials')).toBeNull();
      expect(answer.headers.get('access-control-allow-headers')).toBe('content-type');
    });

    it('cors list shows the rules, and --json too', async () => {
      const listed = await cors(['list']);
      expect(listed.stdout).toMatch(/^https:\/\/\*\.example\.com\s+methods GET, POST; headers authorization, content-type; credentials yes; max-age 600s$/m);
      expect(listed.stdout).toMatch(/^https:\/\/exact\.example\.com\s+methods GET, POST \(default\); headers as asked \(default\); credentials no; max-age 0s$/m);
      const json = JSON.parse((await cors(['list', '--json'])).stdout) as { origin: string }[];
      expect(json.map((rule) => rule.origin)).toEqual(['https://*.example.com', 'https://exact.example.com']);
    });

    it('refuses bad input with exit 2, writing nothing; a missing rule is exit 1', async () => {
      const before = await listCorsRules(stack.db);
      const cases: [string[], RegExp][] = [
        [['set', '*', '--credentials'], /credentials are never allowed for \*/],
        [['set', 'https://app.example.com/'], /an origin has no path, not even a trailing slash: https:\/\/app\.example\.com/],
        [['set', 'https://app.example.com', '--max-age', '86401'], /from 0 to 86400 \(got 86401\)/],
        [['set', 'https://app.example.com', '--max-age', 'soon'], /--max-age must be a whole number of seconds/],
        [['set', 'https://app.example.com', '--methods', 'TRACE'], /unknown method "TRACE"/],
        [['remove', 'https://*.com'], /too broad/],
      ];
      for (const [args, message] of cases) {
        const refused = await cors(args);
        expect({ args, code: refused.code }).toEqual({ args, code: 2 });
        expect(refused.stderr).toMatch(message);
      }
      expect(await listCorsRules(stack.db)).toEqual(before);
      const missing = await cors(['remove', 'https://nothing.example.com']);
      expect({ code: missing.code, stderr: missing.stderr.trim() }).toEqual({ code: 1, stderr: 'error: no CORS rule for "https://nothing.example.com"' });
    });

    it('cors remove reaches the router', async () => {
      expect((await cors(['remove', 'https://*.example.com'])).code).toBe(0);
      await eventually(async () => !(await allowed(production.url, 'https://a.example.com')), { timeoutMs: 2_000, what: 'the removal to reach the router' });
      expect(await allowed(production.url, 'https://exact.example.com')).toBe(true);
    });
  });

  describe('a cors section in config apply', () => {
    it('shows the difference, applies it live, and round-trips through export', async () => {
      await writeFile(path.join(dir, 'cors.yaml'), ['version: 1', 'cors:', '  https://shop.example.com: { credentials: true, maxAgeSeconds: 120, methods: [post] }', '  https://exact.example.com: {}', ''].join('\n'));
      const applied = await runCli(['config', 'apply', path.join(dir, 'cors.yaml'), '--prune'], storeEnv(stack.store));
      expect({ code: applied.code, stderr: applied.stderr }).toEqual({ code: 0, stderr: '' });
      expect(applied.stdout.split('\n').slice(0, 4)).toEqual(['~ CORS origin https://exact.example.com', '    maxAgeSeconds: 0 → (not set)', '+ CORS origin https://shop.example.com  (methods: ["POST"], credentials: true, maxAgeSeconds: 120)', 'not in the file, so not managed by it: subgraphs, policies, permissions, cacheRules, trustedDocuments']);
      await eventually(() => allowed(production.url, 'https://shop.example.com'), { timeoutMs: 2_000, what: 'the applied rule to reach the router' });
      expect((await preflight(production.url, 'https://shop.example.com')).headers.get('access-control-allow-methods')).toBe('POST');

      const exported = await runCli(['config', 'export', '--output', path.join(dir, 'live.yaml')], storeEnv(stack.store));
      expect(exported.code).toBe(0);
      const again = await runCli(['config', 'apply', path.join(dir, 'live.yaml')], storeEnv(stack.store));
      expect(again.stdout.trim()).toBe('no changes');
    });

    it('refuses an invalid cors section whole, every problem at once (exit 2)', async () => {
      await writeFile(path.join(dir, 'bad.yaml'), ['version: 1', 'cors:', '  "*": { credentials: true }', '  https://a.example.com/: {}', '  https://b.example.com: { maxAgeSeconds: 86401 }', ''].join('\n'));
      const refused = await runCli(['config', 'apply', path.join(dir, 'bad.yaml')], storeEnv(stack.store));
      expect(refused.code).toBe(2);
      expect(refused.stderr.trim().split('\n').slice(1)).toEqual([
        '  line 3, cors."*".credentials: credentials are never allowed for * (any origin): name the origins that may send cookies, e.g. https://app.example.com or https://*.example.com',
        '  line 4, cors."https://a.example.com/": invalid origin "https://a.example.com/": an origin has no path, not even a trailing slash: https://a.example.com',
        '  line 5, cors."https://b.example.com".maxAgeSeconds: max age must be a whole number of seconds from 0 to 86400 (got 86401)',
      ]);
    });
  });

  describe('streams', () => {
    it('a subscription over SSE carries the CORS headers of the pipeline', async () => {
      const controller = new AbortController();
      const response = await fetch(stack.router.url, {
        method: 'POST',
        headers: { origin: 'https://stream.example.com', 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ query: 'subscription CorsStream { inventoryChanged(productId: "2") { inStock } }' }),
        signal: controller.signal,
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(response.headers.get('access-control-allow-origin')).toBe('https://stream.example.com');
      expect(response.headers.get('vary')).toMatch(/\bOrigin\b/);
      controller.abort();
      await response.body?.cancel().catch(() => {});
    });
  });
});
