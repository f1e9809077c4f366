// useDashboard in process (yoga.fetch): the page, its script file and their headers at their paths, nothing anywhere else.
import { describe, expect, it } from 'vitest';
import { createSchema, createYoga } from 'graphql-yoga';
import { useDashboard, type DashboardOptions } from './use-dashboard.js';

function server(options?: DashboardOptions) {
  return createYoga({
    schema: createSchema({ typeDefs: /* GraphQL */ `type Query { ok: Boolean }` }),
    landingPage: false,
    graphiql: false,
    plugins: [useDashboard(options)],
  });
}

describe('useDashboard', () => {
  it('answers GET /dashboard with the page: HTML, never cached, framed by nobody, its CSP', async () => {
    const response = await server().fetch('http://router.test/dashboard');
    expect(response.status).toBe(200);
    expect(Object.fromEntries(response.headers)).toMatchObject({
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      'content-security-policy': expect.stringMatching(/^default-src 'none'; script-src 'sha256-/),
    });
    const html = await response.text();
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain('"metricsUrl":"/metrics"');
  });

  it('serves the same bytes to every request (built once)', async () => {
    const yoga = server();
    const [a, b] = await Promise.all([yoga.fetch('http://router.test/dashboard'), yoga.fetch('http://router.test/dashboard')]);
    expect(await a.text()).toBe(await b.text());
  });

  it('leaves other paths and methods alone, and follows its options', async () => {
    const yoga = server({ endpoint: '/ops', metricsUrl: '/internal/metrics', pollMs: 5_000 });
    expect((await yoga.fetch('http://router.test/dashboard')).status).toBe(404);
    expect((await yoga.fetch('http://router.test/ops', { method: 'POST' })).status).toBe(404);
    const page = await (await yoga.fetch('http://router.test/ops')).text();
    expect(page).toContain('"metricsUrl":"/internal/metrics","pollMs":5000');
  });

  it('serves the script file at the path the page names, for ever cacheable, under its own endpoint', async () => {
    const yoga = server({ endpoint: '/ops' });
    const html = await (await yoga.fetch('http://router.test/ops')).text();
    const [, src] = /<script src="([^"]+)"/.exec(html)!;
    expect(src).toMatch(/^\/ops\/assets\/[0-9a-f]{12}\/dashboard\.js$/);
    const file = await yoga.fetch(`http://router.test${src}`);
    expect(file.status).toBe(200);
    expect(Object.fromEntries(file.headers)).toMatchObject({
      'content-type': 'text/javascript; charset=utf-8',
      'cache-control': 'public, max-age=31536000, immutable',
      'x-content-type-options': 'nosniff',
    });
    expect(await file.text()).toContain('function runDashboard(');
    expect((await yoga.fetch('http://router.test/ops/assets/000000000000/dashboard.js')).status).toBe(404);
  });

  describe('top operations by client', () => {
    const top = [{ clientName: 'web', total: 3, operations: [{ operationName: 'ProductPage', operationType: 'query', hash: 'ab', count: 3, lastSeen: new Date('2026-12-01T10:00:00Z') }] }];

    it('answers its JSON beside the page, and the page reads it; without a registry neither exists', async () => {
      const yoga = server({ topOperations: async () => top });
      const response = await yoga.fetch('http://router.test/dashboard/operations');
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(await response.json()).toEqual({ windowHours: 24, clients: [{ ...top[0], operations: [{ ...top[0]!.operations[0], lastSeen: '2026-12-01T10:00:00.000Z' }] }] });
      expect(await (await yoga.fetch('http://router.test/dashboard')).text()).toContain('<table id="clients">');
      const without = server();
      expect((await without.fetch('http://router.test/dashboard/operations')).status).toBe(404);
      expect(await (await without.fetch('http://router.test/dashboard')).text()).not.toContain('id="clients"');
    });

    it('reads the registry once for every page asking within its time to live, and does not keep a failure', async () => {
      let reads = 0;
      let fail = true;
      const yoga = server({
        topOperationsTtlMs: 60_000,
        topOperations: async () => {
          reads += 1;
          if (fail) throw new Error('database down');
          return top;
        },
      });
      expect((await yoga.fetch('http://router.test/dashboard/operations')).status).toBe(503);
      fail = false;
      const answers = await Promise.all([1, 2, 3].map(() => yoga.fetch('http://router.test/dashboard/operations')));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
      expect(reads).toBe(2);
    });
  });
});
