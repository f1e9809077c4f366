// useDashboard in process (yoga.fetch): the page and its headers at its path, nothing anywhere else.
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
});
