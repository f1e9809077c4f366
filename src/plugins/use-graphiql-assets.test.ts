// useGraphiQLAssets in process (yoga.fetch): files at their exact versioned path with immutable caching, the page's security headers, nothing else touched.
import { describe, expect, it } from 'vitest';
import { createSchema, createYoga } from 'graphql-yoga';
import type { GraphiQLAssets } from '../graphiql/graphiql-assets.js';
import { GRAPHIQL_CONTENT_SECURITY_POLICY } from '../graphiql/graphiql-page.js';
import { useGraphiQLAssets } from './use-graphiql-assets.js';

const BASE = '/graphiql/1.2.3-0123456789ab/';

/** Two small files stand in for GraphiQL's build, so the test loads nothing big. */
const assets: GraphiQLAssets = {
  basePath: BASE,
  files: new Map([
    [`${BASE}graphiql.js`, { body: new TextEncoder().encode('window.ok = 1;'), contentType: 'text/javascript; charset=utf-8' }],
    [`${BASE}graphiql.css`, { body: new TextEncoder().encode('body {}'), contentType: 'text/css; charset=utf-8' }],
  ]),
  urls: { script: `${BASE}graphiql.js`, style: `${BASE}graphiql.css`, start: `${BASE}start.js`, workers: {} },
};

function server() {
  return createYoga({
    schema: createSchema({ typeDefs: /* GraphQL */ `type Query { ok: Boolean }`, resolvers: { Query: { ok: () => true } } }),
    landingPage: false,
    graphiql: { title: 'Test' },
    renderGraphiQL: () => '<!doctype html><title>Test</title>',
    plugins: [useGraphiQLAssets({ assets: async () => assets })],
  });
}

describe('useGraphiQLAssets', () => {
  it('serves a file at its versioned path: its content type, cached for a year as immutable', async () => {
    const response = await server().fetch(`http://router.test${BASE}graphiql.js`);
    expect(response.status).toBe(200);
    expect(Object.fromEntries(response.headers)).toMatchObject({
      'content-type': 'text/javascript; charset=utf-8',
      'cache-control': 'public, max-age=31536000, immutable',
      'x-content-type-options': 'nosniff',
    });
    expect(await response.text()).toBe('window.ok = 1;');
  });

  it('answers 404 for another version or an unknown file, and serves nothing but GET', async () => {
    const yoga = server();
    expect((await yoga.fetch('http://router.test/graphiql/1.2.2-0123456789ab/graphiql.js')).status).toBe(404);
    expect((await yoga.fetch(`http://router.test${BASE}missing.js`)).status).toBe(404);
    expect((await yoga.fetch(`http://router.test${BASE}graphiql.js`, { method: 'POST' })).status).not.toBe(200);
  });

  it("gives Yoga's GraphiQL page one content type, no caching, no framing and the page's CSP", async () => {
    const response = await server().fetch('http://router.test/graphql', { headers: { accept: 'text/html' } });
    expect(response.status).toBe(200);
    expect([...response.headers].filter(([name]) => name.toLowerCase() === 'content-type')).toEqual([['content-type', 'text/html; charset=utf-8']]);
    expect(Object.fromEntries(response.headers)).toMatchObject({
      'cache-control': 'no-store',
      'content-security-policy': GRAPHIQL_CONTENT_SECURITY_POLICY,
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
    });
    expect(await response.text()).toContain('<title>Test</title>');
  });

  it('leaves GraphQL responses alone', async () => {
    const response = await server().fetch('http://router.test/graphql?query={ok}', { headers: { accept: 'application/json' } });
    expect(await response.json()).toEqual({ data: { ok: true } });
    expect(response.headers.get('content-security-policy')).toBeNull();
  });
});
