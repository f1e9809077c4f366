// The section cache: each part fetched once per max age, shared by routers through Redis, purged live, never wrong for its viewer.
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { Redis } from 'ioredis';
import { DEFAULT_FAULT_SETTINGS } from '../../subgraphs/index.js';
import { publishSubgraph } from '../../src/registry/subgraph-store.js';
import { recordPurge, removeCacheRule, setCacheRule } from '../../src/registry/cache-store.js';
import { compositionCheck } from '../../src/cli/registry-commands.js';
import type { RunningRouter } from '../../src/cli/start-router.js';
import { startTestIdentityProvider, type TestIdentityProvider } from '../helpers/identity-provider.js';
import { startFixtureSubgraph, type RunningFixture } from '../helpers/fixture-subgraph.js';
import { databaseKind } from '../helpers/database.js';
import { eventually, postGraphQL, type GraphQLResponse } from '../helpers/http.js';
import { readMetric, startStack, type Stack } from '../helpers/stack.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const AUDIENCE = 'switchyard-api';

const PAGE = /* GraphQL */ `
  query ProductPage($id: ID!) {
    product(id: $id) { id name price reviews { id rating } inventory { inStock } }
  }
`;

/** A Redis in front of the real one that the test can stop: the router reaches Redis only through it. */
async function startRedisProxy(target: URL): Promise<{ url: string; stop(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => socket.destroy());
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The demo schema's hints plus a fixture whose answers depend on who asks (the `sub` of the token it receives). */
const VIEWER_SDL = /* GraphQL */ `
  extend schema
    @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key", "@composeDirective"])
    @link(url: "https://switchyard.dev/cache/v1.0", import: ["@cacheControl"])
    @composeDirective(name: "@cacheControl")
  enum CacheControlScope {
    PUBLIC
    PRIVATE
  }
  directive @cacheControl(maxAge: Int, scope: CacheControlScope, inheritMaxAge: Boolean) on FIELD_DEFINITION | OBJECT | INTERFACE | UNION
  type Query {
    "Private by its hint."
    me: Viewer @cacheControl(maxAge: 60, scope: PRIVATE)
    "No scope said: private for signed-in viewers, since this subgraph receives a per-user token."
    greeting: String @cacheControl(maxAge: 60)
  }
  type Viewer {
    name: String!
  }
`;

function subjectOf(context: { request: Request }): string {
  const header = context.request.headers.get('authorization');
  return header ? String(decodeJwt(header.replace(/^Bearer /, '')).sub) : 'nobody';
}

describe(`section cache (${databaseKind} database, Redis)`, () => {
  let stack: Stack;
  let second: RunningRouter;
  let idp: TestIdentityProvider;
  let viewer: RunningFixture;
  let kid: string;
  const prefix = `switchyard:test:${randomBytes(4).toString('hex')}:`;
  const now = () => Math.floor(Date.now() / 1000);
  const token = async (sub: string) => `Bearer ${await idp.sign({ iss: idp.issuer, aud: AUDIENCE, sub, exp: now() + 300, iat: now() }, { kid })}`;
  const calls = (name: 'product' | 'reviews' | 'inventory') => stack.subgraphs[name].subgraph.stats.snapshot().graphqlRequests;
  const allCalls = () => calls('product') + calls('reviews') + calls('inventory');
  /** Products no test has asked for yet: a page of one is fetched whole, so its header shows the policies in force. */
  let unseen = 100;
  const inForce = (cacheControl: string) =>
    eventually(async () => (await stack.query(PAGE, { variables: { id: String(unseen++) } })).headers.get('cache-control') === cacheControl, { what: `a new page answered with ${cacheControl}` });

  beforeAll(async () => {
    idp = await startTestIdentityProvider();
    kid = await idp.addKey();
    stack = await startStack({
      config: { sectionCache: true, redisUrl: REDIS_URL, cacheRedisPrefix: prefix, authMode: 'optional', jwksUrl: idp.jwksUrl, jwtIssuer: idp.issuer, jwtAudience: AUDIENCE },
    });
    second = await stack.startRouter();
    viewer = await startFixtureSubgraph({
      sdl: VIEWER_SDL,
      resolvers: {
        Query: {
          me: (_: unknown, __: unknown, context: { request: Request }) => ({ name: subjectOf(context) }),
          greeting: (_: unknown, __: unknown, context: { request: Request }) => `hello ${subjectOf(context)}`,
        },
      },
    });
    const swapped = Promise.all([stack.nextSwap(), stack.nextSwap(second)]);
    await publishSubgraph(stack.db, { name: 'viewer', url: viewer.url, sdl: VIEWER_SDL }, compositionCheck);
    await swapped;
  });
  afterAll(async () => {
    await stack?.close();
    await viewer?.close();
    await idp?.close();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });
  afterEach(() => {
    for (const { subgraph } of Object.values(stack.subgraphs)) subgraph.faults.set(DEFAULT_FAULT_SETTINGS);
  });

  it('answers a repeated page from the cache: no subgraph is called, and the answer says how long it may be kept', async () => {
    const first = await stack.query(PAGE, { variables: { id: '1' } });
    expect(first.body.errors).toBeUndefined();
    const before = allCalls();
    const again = await stack.query(PAGE, { variables: { id: '1' } });
    expect(again.body).toEqual(first.body);
    expect(allCalls()).toBe(before);
    // Inventory's 5 s is the page's smallest max age; every part is public.
    expect(again.headers.get('cache-control')).toMatch(/^max-age=[0-5], public$/);
    expect(await stack.metric('switchyard_cache_requests_total', { subgraph: 'inventory', type: 'Product', result: 'hit' })).toBeGreaterThanOrEqual(1);
  });

  it('fetches only the entities it does not hold: a list with one new product costs one look-up of one entity', async () => {
    await stack.query(PAGE, { variables: { id: '2' } });
    const reviewsBefore = stack.subgraphs.reviews.subgraph.stats.snapshot().graphqlRequests;
    const { body } = await stack.query('{ products(first: 3) { id reviews { id } } }');
    expect(body.data.products.map((p: { id: string }) => p.id)).toEqual(['1', '2', '3']);
    // Products 1 and 2 are held; only product 3's reviews are looked up.
    expect(stack.subgraphs.reviews.subgraph.stats.snapshot().graphqlRequests).toBe(reviewsBefore + 1);
  });

  it('shares parts between routers through Redis', async () => {
    await stack.query(PAGE, { variables: { id: '4' } });
    await eventually(
      async () => {
        const before = allCalls();
        const { body } = await postGraphQL(second.url, PAGE, { variables: { id: '4' } });
        return body.errors === undefined && allCalls() === before;
      },
      { what: 'the second router answering product 4 from Redis' },
    );
  });

  it('treats a part in Redis it cannot read as a miss, never as a failed page', async () => {
    await stack.query(PAGE, { variables: { id: '77' } });
    const redis = new Redis(REDIS_URL);
    try {
      // Product 77's parts as something else might leave them: a valid header, then text that is not JSON.
      let keys: string[] = [];
      await eventually(async () => (keys = await redis.keys(`${prefix}*"77"*`)).length >= 3, { what: "product 77's three parts in Redis" });
      for (const key of keys) await redis.set(key, `[2,${Date.now()},60000,300000,0]\n{"truncated":`, 'PX', 60_000);
    } finally {
      await redis.quit();
    }
    const before = allCalls();
    // The second router never held product 77 in memory: every part comes from Redis, unreadable.
    const { status, body } = await postGraphQL(second.url, PAGE, { variables: { id: '77' } });
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    expect(body.data.product.id).toBe('77');
    expect(allCalls()).toBe(before + 3);
  });

  it('expires a part after its max age (a rule set live overrides the SDL hint)', async () => {
    await setCacheRule(stack.db, { coordinate: 'Product.inventory', maxAgeSeconds: 1 });
    try {
      await inForce('max-age=1, public');
      await stack.query(PAGE, { variables: { id: '5' } });
      const inventoryCalls = calls('inventory');
      await stack.query(PAGE, { variables: { id: '5' } });
      expect(calls('inventory')).toBe(inventoryCalls);
      await eventually(
        async () => {
          await stack.query(PAGE, { variables: { id: '5' } });
          return calls('inventory') > inventoryCalls;
        },
        { what: 'inventory fetched again once its part expired' },
      );
    } finally {
      await removeCacheRule(stack.db, 'Product.inventory');
    }
  });

  it('purges by entity and by subgraph on every router', async () => {
    for (const router of [stack.router, second]) for (const id of ['6', '7']) await postGraphQL(router.url, PAGE, { variables: { id } });
    const productCalls = calls('product');
    await recordPurge(stack.db, { typeName: 'Product', entityKey: { id: '6' } });
    for (const router of [stack.router, second]) {
      await eventually(
        async () => {
          const before = calls('product');
          await postGraphQL(router.url, PAGE, { variables: { id: '6' } });
          return calls('product') > before;
        },
        { what: 'product 6 fetched again after its purge' },
      );
    }
    expect(calls('product')).toBeGreaterThan(productCalls);
    // Product 7 was not purged.
    const before7 = allCalls();
    await postGraphQL(second.url, PAGE, { variables: { id: '7' } });
    expect(allCalls()).toBe(before7);

    await recordPurge(stack.db, { subgraph: 'inventory' });
    for (const router of [stack.router, second]) {
      await eventually(
        async () => {
          const before = calls('inventory');
          await postGraphQL(router.url, PAGE, { variables: { id: '7' } });
          return calls('inventory') > before;
        },
        { what: 'inventory fetched again after the subgraph purge' },
      );
    }
  });

  it('a mutation purges the entities it returns: the next page shows the new review', async () => {
    const before = await stack.query(PAGE, { variables: { id: '8' } });
    const mutation = await stack.query('mutation { addReview(productId: "8", rating: 5, body: "Cached no more") { id product { id } } }');
    expect(mutation.body.errors).toBeUndefined();
    const after = await stack.query(PAGE, { variables: { id: '8' } });
    expect(after.body.data.product.reviews).toHaveLength(before.body.data.product.reviews.length + 1);
    // The other router learns of the purge through the registry.
    await eventually(async () => (await postGraphQL(second.url, PAGE, { variables: { id: '8' } })).body.data.product.reviews.length === after.body.data.product.reviews.length, {
      what: 'the second router showing the new review',
    });
  });

  it('never serves a private part to another viewer, and never caches one for an anonymous request', async () => {
    const alice = { authorization: await token('alice') };
    const bob = { authorization: await token('bob') };
    const ask = (headers: Record<string, string> = {}) => stack.query('{ me { name } greeting }', { headers });
    expect((await ask(alice)).body.data).toEqual({ me: { name: 'alice' }, greeting: 'hello alice' });
    const seen = viewer.requests.length;
    const again = await ask(alice);
    expect(again.body.data).toEqual({ me: { name: 'alice' }, greeting: 'hello alice' });
    expect(viewer.requests.length).toBe(seen);
    expect(again.headers.get('cache-control')).toMatch(/^max-age=\d+, private$/);
    expect((await ask(bob)).body.data).toEqual({ me: { name: 'bob' }, greeting: 'hello bob' });
    const anonymous = await ask();
    expect(anonymous.body.data.me.name).not.toBe('alice');
    expect(anonymous.body.data.me.name).not.toBe('bob');
    const afterAnonymous = viewer.requests.length;
    await ask();
    expect(viewer.requests.length).toBe(afterAnonymous + 1);
    expect(await stack.metric('switchyard_cache_requests_total', { subgraph: 'viewer', type: 'Query', result: 'bypass' })).toBeGreaterThanOrEqual(2);
  });

  it('never stores a failed part', async () => {
    stack.subgraphs.reviews.subgraph.faults.set({ mode: 'error' });
    const failed = await stack.query(PAGE, { variables: { id: '9' } });
    expect(failed.body.data.product.reviews).toBeNull();
    expect(failed.headers.get('cache-control')).toBe('no-store');
    stack.subgraphs.reviews.subgraph.faults.set(DEFAULT_FAULT_SETTINGS);
    const reviewsBefore = calls('reviews');
    const healed = await stack.query(PAGE, { variables: { id: '9' } });
    expect(healed.body.errors).toBeUndefined();
    expect(healed.body.data.product.reviews).not.toBeNull();
    expect(calls('reviews')).toBe(reviewsBefore + 1);
  });

  it('serves a stale copy while its subgraph is down, labelled STALE and not cacheable', async () => {
    await setCacheRule(stack.db, { coordinate: 'Product.inventory', maxAgeSeconds: 1 });
    try {
      await inForce('max-age=1, public');
      const fresh = await stack.query(PAGE, { variables: { id: '10' } });
      stack.subgraphs.inventory.subgraph.faults.set({ mode: 'down' });
      let stale: GraphQLResponse | undefined;
      await eventually(
        async () => {
          stale = await stack.query(PAGE, { variables: { id: '10' } });
          return stale.body.extensions?.completeness !== undefined;
        },
        { what: 'the part expiring while inventory is down' },
      );
      expect(stale!.body.errors).toBeUndefined();
      expect(stale!.body.data.product.inventory).toEqual(fresh.body.data.product.inventory);
      expect(stale!.body.extensions?.completeness).toEqual({ complete: false, missing: [{ subgraph: 'inventory', code: 'STALE', ageMs: expect.any(Number) }] });
      expect(stale!.headers.get('cache-control')).toBe('no-store');
      // A product the cache never held fails as usual.
      const unseen = await stack.query(PAGE, { variables: { id: '11' } });
      expect(unseen.body.data.product.inventory).toBeNull();
      expect(unseen.body.extensions?.completeness.missing).toEqual([{ path: ['product', 'inventory'], subgraph: 'inventory', code: 'SUBGRAPH_UNAVAILABLE' }]);
    } finally {
      await removeCacheRule(stack.db, 'Product.inventory');
    }
  });

  it('keeps answering complete pages when Redis goes away mid-run, and counts the failures', async () => {
    const proxy = await startRedisProxy(new URL(REDIS_URL));
    const router = await stack.startRouter({ redisUrl: proxy.url });
    try {
      expect((await postGraphQL(router.url, PAGE, { variables: { id: '12' } })).headers.get('switchyard-completed')).toBe('true');
      await proxy.stop();
      for (const id of ['12', '13', '14', '15']) {
        const { body, headers } = await postGraphQL(router.url, PAGE, { variables: { id } });
        expect(body.errors).toBeUndefined();
        expect(headers.get('switchyard-completed')).toBe('true');
      }
    } finally {
      await proxy.stop().catch(() => {});
    }
    expect(await readMetric(router, 'switchyard_cache_errors_total', { backend: 'redis' })).toBeGreaterThanOrEqual(1);
    // Memory still serves what this router fetched itself.
    const before = allCalls();
    await postGraphQL(router.url, PAGE, { variables: { id: '13' } });
    expect(allCalls()).toBe(before);
  });

  it('serves uncached pages as before with the cache switched off', async () => {
    const off = await stack.startRouter({ sectionCache: false });
    const before = allCalls();
    const { headers } = await postGraphQL(off.url, PAGE, { variables: { id: '1' } });
    expect(allCalls()).toBeGreaterThan(before);
    expect(headers.get('cache-control')).toBe('no-store');
    expect(await readMetric(off, 'switchyard_cache_requests_total', { subgraph: 'product', type: 'Query', result: 'hit' })).toBe(0);
  });
});
