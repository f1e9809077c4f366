// Router core: the demo product page across three subgraphs, batching, live publish, atomic swaps, restarts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishSubgraph, removeSubgraph, CompositionRejectedError } from '../../src/registry/subgraph-store.js';
import { compositionCheck } from '../../src/cli/registry-commands.js';
import { startRouter } from '../../src/cli/start-router.js';
import { openDatabase } from '../../src/registry/open-database.js';
import { createTestStore, databaseKind } from '../helpers/database.js';
import { eventually, postGraphQL } from '../helpers/http.js';
import { startStack, testConfig, type Stack } from '../helpers/stack.js';
import { startFixtureSubgraph, type RunningFixture } from '../helpers/fixture-subgraph.js';
import { demoSubgraphs } from '../../subgraphs/index.js';

const PRODUCT_PAGE = /* GraphQL */ `
  query ProductPage($id: ID!) {
    product(id: $id) { id name price reviews { id rating body author } inventory { inStock warehouse } }
  }
`;

describe(`router core (${databaseKind} database)`, () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  describe('the product page', () => {
    it('returns all three sections in one response', async () => {
      const { status, body, headers } = await stack.query(PRODUCT_PAGE, { variables: { id: '7' } });
      expect(status).toBe(200);
      expect(headers.get('content-type')).toContain('application/graphql-response+json');
      expect(body.errors).toBeUndefined();
      const product = body.data.product;
      expect(product).toMatchObject({ id: '7', name: expect.any(String), price: expect.any(Number) });
      expect(Array.isArray(product.reviews)).toBe(true);
      expect(product.inventory).toMatchObject({ inStock: expect.any(Number) });
    });

    it('answers the same data as the subgraphs hold (no section mixed up between products)', async () => {
      const { body } = await stack.query('{ a: product(id: "3") { name reviews { id } } b: product(id: "4") { name reviews { id } } }');
      // Straight from a reviews subgraph of our own (the stack's accepts only the router's tokens); the data is deterministic.
      const own = await demoSubgraphs.reviews({ env: {} }).listen(0);
      const direct = await postGraphQL(own.url, '{ _entities(representations: [{__typename: "Product", id: "3"}, {__typename: "Product", id: "4"}]) { ... on Product { reviews { id } } } }');
      expect(body.data.a.reviews).toEqual(direct.body.data._entities[0].reviews);
      expect(body.data.b.reviews).toEqual(direct.body.data._entities[1].reviews);
      await own.close();
    });

    it('a query for 50 products with reviews and inventory costs exactly one request to each subgraph', async () => {
      const subgraphs = Object.values(stack.subgraphs).map((s) => s.subgraph);
      for (const s of subgraphs) s.stats.reset();
      const { body } = await stack.query('{ products(first: 50) { id name reviews { rating } inventory { inStock } } }');
      expect(body.errors).toBeUndefined();
      expect(body.data.products).toHaveLength(50);
      for (const s of subgraphs) {
        const stats = s.stats.snapshot();
        expect({ name: s.name, requests: stats.graphqlRequests }).toEqual({ name: s.name, requests: 1 });
        const batches = Object.values(stats.dataSourceCalls).reduce((a, b) => a + b, 0);
        expect({ name: s.name, batches }).toEqual({ name: s.name, batches: 1 });
      }
    });
  });

  describe('GraphQL over HTTP', () => {
    it('serves GET queries (with a CSRF-prevention header) and refuses mutations over GET', async () => {
      const url = `${stack.router.url}?query=${encodeURIComponent('{ product(id: "1") { id } }')}`;
      const get = await fetch(url, { headers: { accept: 'application/graphql-response+json', 'x-graphql-yoga-csrf': '1' } });
      expect(get.status).toBe(200);
      expect((await get.json()).data.product.id).toBe('1');
      const mutation = await fetch(`${stack.router.url}?query=${encodeURIComponent('mutation { addReview(productId: "1", rating: 5, body: "x") { id } }')}`, {
        headers: { accept: 'application/graphql-response+json', 'x-graphql-yoga-csrf': '1' },
      });
      expect(mutation.status).toBe(405);
      const withoutHeader = await fetch(url, { headers: { accept: 'application/graphql-response+json' } });
      expect(withoutHeader.status).toBe(400);
    });

    it('speaks application/json to clients that ask for it', async () => {
      const { headers, body } = await stack.query('{ product(id: "2") { id } }', { accept: 'application/json' });
      expect(headers.get('content-type')).toContain('application/json');
      expect(body.data.product.id).toBe('2');
    });

    it('rejects an invalid document with 400 and GRAPHQL_VALIDATION_FAILED, calling no subgraph', async () => {
      const product = stack.subgraphs.product.subgraph;
      product.stats.reset();
      const { status, body } = await stack.query('{ product(id: "1") { nope } }');
      expect(status).toBe(400);
      expect(body.errors?.[0].extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
      expect(product.stats.snapshot().graphqlRequests).toBe(0);
    });

    it('reports health, readiness and Prometheus metrics', async () => {
      const base = stack.router.url.replace(/\/graphql$/, '');
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      expect((await fetch(`${base}/readyz`)).status).toBe(200);
      await stack.query('query MetricsProbe { product(id: "1") { id inventory { inStock } } }');
      const text = await (await fetch(`${base}/metrics`)).text();
      expect(text).toMatch(/switchyard_requests_total\{operation="MetricsProbe",status="200"\} 1/);
      expect(text).toMatch(/switchyard_subgraph_requests_total\{subgraph="inventory",outcome="ok"\} \d+/);
    });
  });

  describe('the live registry', () => {
    let extra: RunningFixture | undefined;
    afterAll(async () => {
      await extra?.close();
    });

    it('serves a subgraph that nobody here wrote, published at run time, without a restart', async () => {
      extra = await startFixtureSubgraph({
        sdl: /* GraphQL */ `
          extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
          type Product @key(fields: "id") { id: ID! shippingDays: Int! }
        `,
        resolvers: { Product: { __resolveReference: (ref: { id: string }) => ({ id: ref.id, shippingDays: Number(ref.id) % 5 + 1 }) } },
      });
      const swapped = stack.nextSwap();
      await publishSubgraph(stack.db, { name: 'shipping', url: extra.url, sdl: extra.sdl }, compositionCheck);
      await swapped;
      const { body } = await stack.query('{ product(id: "9") { name shippingDays } }');
      expect(body.errors).toBeUndefined();
      expect(body.data.product.shippingDays).toBe(9 % 5 + 1);
    });

    it('refuses a conflicting publish with the composition errors and keeps serving the old graph', async () => {
      const generation = stack.router.graph.current?.generation;
      const conflicting = publishSubgraph(
        stack.db,
        { name: 'rogue', url: 'http://127.0.0.1:9/graphql', sdl: 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"]) type Product @key(fields: "id") { id: ID! price: String }' },
        compositionCheck,
      );
      await expect(conflicting).rejects.toBeInstanceOf(CompositionRejectedError);
      const error = (await conflicting.catch((e) => e)) as CompositionRejectedError;
      expect(error.errors.map((e) => e.message).join('\n')).toMatch(/Product\.price/);
      await stack.router.database!.query('select 1'); // a round trip: any (wrong) change would have been seen by now
      expect(stack.router.graph.current?.generation).toBe(generation);
      const { body } = await stack.query('{ product(id: "1") { price } }');
      expect(typeof body.data.product.price).toBe('number');
    });

    it('finishes 20 requests in flight across a swap, all successfully', async () => {
      const reviews = stack.subgraphs.reviews.subgraph;
      reviews.faults.set({ latencyMs: 300 });
      try {
        const inFlight = Array.from({ length: 20 }, (_, i) => stack.query(PRODUCT_PAGE, { variables: { id: String(i + 1) } }));
        await eventually(() => reviews.stats.snapshot().inFlight >= 1, { what: 'requests to reach the reviews subgraph' });
        const swapped = stack.nextSwap();
        await publishSubgraph(stack.db, { name: 'shipping', url: extra!.url, sdl: extra!.sdl, route: { timeoutMs: 5_000 } }, compositionCheck);
        await swapped;
        const results = await Promise.all(inFlight);
        for (const { status, body } of results) {
          expect(status).toBe(200);
          expect(body.errors).toBeUndefined();
          expect(body.data.product.reviews).toBeDefined();
        }
      } finally {
        reviews.faults.set({ latencyMs: 0 });
      }
    });

    it('takes the fields away when a subgraph is removed', async () => {
      const swapped = stack.nextSwap();
      expect(await removeSubgraph(stack.db, 'shipping', compositionCheck)).toBe(true);
      await swapped;
      const { status, body } = await stack.query('{ product(id: "9") { shippingDays } }');
      expect(status).toBe(400);
      expect(body.errors?.[0].message).toMatch(/shippingDays/);
    });

    it('serves a new publish on a second router instance within a second', async () => {
      const second = await stack.startRouter();
      expect(second.graph.current?.generation).toBeGreaterThan(0);
      const both = Promise.all([stack.nextSwap(), stack.nextSwap(second)]);
      const started = Date.now();
      await publishSubgraph(stack.db, { name: 'shipping', url: extra!.url, sdl: extra!.sdl }, compositionCheck);
      await both;
      expect(Date.now() - started).toBeLessThan(1_000);
      const [a, b] = await Promise.all([postGraphQL(stack.router.url, '{ product(id: "2") { shippingDays } }'), postGraphQL(second.url, '{ product(id: "2") { shippingDays } }')]);
      expect(a.body.data).toEqual(b.body.data);
      expect(a.body.data.product.shippingDays).toBe(3);
    });
  });
});

describe(`router restarts (${databaseKind} database)`, () => {
  it('keeps the registry across a restart of the router', async () => {
    const store = await createTestStore();
    const fixture = await startFixtureSubgraph({
      sdl: 'type Query { hello: String! }',
      resolvers: { Query: { hello: () => 'world' } },
    });
    try {
      const config = testConfig(store);
      const first = await startRouter({ config });
      expect(first.graph.current).toBeUndefined();
      expect((await fetch(first.url.replace(/graphql$/, 'readyz'))).status).toBe(503);
      const notReady = await postGraphQL(first.url, '{ hello }');
      expect(notReady.status).toBe(503);
      expect(notReady.body.errors?.[0].extensions?.code).toBe('SCHEMA_NOT_READY');
      const swapped = new Promise((resolve) => first.graph.onSwap(resolve));
      const writer = await openDatabase({ databaseUrl: store.databaseUrl, dataDir: store.dataDir });
      await publishSubgraph(writer, { name: 'greeter', url: fixture.url, sdl: fixture.sdl }, compositionCheck);
      await writer.close();
      await swapped;
      await first.close();

      const second = await startRouter({ config });
      try {
        const { body } = await postGraphQL(second.url, '{ hello }');
        expect(body.data).toEqual({ hello: 'world' });
      } finally {
        await second.close();
      }
    } finally {
      await fixture.close();
      await store.destroy();
    }
  });
});
