// Partial results that tell the truth: nullability decides what a failed subgraph costs, and the response says what is missing.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_FAULT_SETTINGS } from '../../subgraphs/index.js';
import { setPolicy, removePolicy } from '../../src/registry/policy-store.js';
import { databaseKind } from '../helpers/database.js';
import { eventually, postGraphQL } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/stack.js';

const PAGE = /* GraphQL */ `
  query ProductPage($id: ID!) {
    product(id: $id) { id name price reviews { id rating } inventory { inStock } }
  }
`;

async function postReviewQuery(stack: Stack) {
  return stack.query('{ review(id: "r-1") { id rating product { id name } } }');
}

const PROBLEM_MEMBERS = { type: expect.stringMatching(/^urn:switchyard:error:/), title: expect.any(String), status: expect.any(Number), detail: expect.any(String) };

describe(`partial results (${databaseKind} database)`, () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.close();
  });
  afterEach(() => {
    for (const { subgraph } of Object.values(stack.subgraphs)) subgraph.faults.set(DEFAULT_FAULT_SETTINGS);
  });

  it('says a complete answer is complete in its header, and keeps its body to the data', async () => {
    const { status, headers, body } = await stack.query(PAGE, { variables: { id: '2' } });
    expect(status).toBe(200);
    expect(body.extensions?.completeness).toBeUndefined();
    expect(headers.get('switchyard-completed')).toBe('true');
    // Complete but not made of cached parts (the section cache is off here): nothing may keep it.
    expect(headers.get('cache-control')).toBe('no-store');
  });

  it('puts completeness in every executed body with SWITCHYARD_COMPLETENESS_EXTENSION=always', async () => {
    const always = await stack.startRouter({ completenessExtension: 'always' });
    const { headers, body } = await postGraphQL(always.url, PAGE, { variables: { id: '2' } });
    expect(body.extensions?.completeness).toEqual({ complete: true, missing: [] });
    expect(headers.get('switchyard-completed')).toBe('true');
  });

  describe('with the resilience layer off (SWITCHYARD_RESILIENCE=false)', () => {
    it('still says whether an answer is whole, and how long it may be kept', async () => {
      const plain = await stack.startRouter({ resilience: false });
      const complete = await postGraphQL(plain.url, PAGE, { variables: { id: '2' } });
      expect(complete.headers.get('switchyard-completed')).toBe('true');
      expect(complete.headers.get('cache-control')).toBe('no-store');
      stack.subgraphs.reviews.subgraph.faults.set({ mode: 'down' });
      const partial = await postGraphQL(plain.url, PAGE, { variables: { id: '2' } });
      expect(partial.body.data.product.reviews).toBeNull();
      expect(partial.headers.get('switchyard-completed')).toBe('false');
      expect(partial.body.extensions?.completeness).toEqual({ complete: false, missing: [{ path: ['product', 'reviews'], subgraph: 'reviews', code: 'SUBGRAPH_UNAVAILABLE' }] });
    });

    it('labels an answer the section cache made with the freshness left of its parts', async () => {
      const cached = await stack.startRouter({ resilience: false, sectionCache: true });
      await postGraphQL(cached.url, PAGE, { variables: { id: '3' } });
      const again = await postGraphQL(cached.url, PAGE, { variables: { id: '3' } });
      // Inventory's 5 s is the page's smallest max age; every part is public.
      expect(again.headers.get('cache-control')).toMatch(/^max-age=[0-5], public$/);
      expect(again.headers.get('switchyard-completed')).toBe('true');
    });
  });

  describe('an optional section whose subgraph is down', () => {
    it('is null with a precise error, and the rest of the page is served', async () => {
      stack.subgraphs.reviews.subgraph.faults.set({ mode: 'down' });
      const { status, headers, body } = await stack.query(PAGE, { variables: { id: '2' } });
      expect(status).toBe(200);
      expect(body.data.product).toMatchObject({ id: '2', name: expect.any(String), reviews: null, inventory: { inStock: expect.any(Number) } });
      expect(body.errors).toEqual([
        {
          message: 'subgraph "reviews" is unreachable',
          // Where the field stands in the client's own document (GraphQL spec 7.1.2).
          locations: [{ line: expect.any(Number), column: expect.any(Number) }],
          path: ['product', 'reviews'],
          extensions: { code: 'SUBGRAPH_UNAVAILABLE', subgraph: 'reviews', ...PROBLEM_MEMBERS, status: 502 },
        },
      ]);
      expect(body.extensions?.completeness).toEqual({ complete: false, missing: [{ path: ['product', 'reviews'], subgraph: 'reviews', code: 'SUBGRAPH_UNAVAILABLE' }] });
      expect(headers.get('switchyard-completed')).toBe('false');
      expect(headers.get('cache-control')).toBe('no-store');
    });

    it('puts one error on each list item that lost its section, at its index', async () => {
      stack.subgraphs.inventory.subgraph.faults.set({ mode: 'error' });
      const { body } = await stack.query('{ products(first: 3) { id inventory { inStock } } }');
      expect(body.data.products.map((p: { inventory: unknown }) => p.inventory)).toEqual([null, null, null]);
      expect(body.errors?.map((e) => e.path)).toEqual([
        ['products', 0, 'inventory'],
        ['products', 1, 'inventory'],
        ['products', 2, 'inventory'],
      ]);
      // The subgraph's own message passes through; its code is kept beside ours.
      expect(body.errors?.[0]).toMatchObject({
        message: 'inventory subgraph failed (injected fault)',
        extensions: { code: 'SUBGRAPH_ERROR', subgraph: 'inventory', subgraphCode: 'INJECTED_FAULT' },
      });
    });
  });

  describe('one deadline per request', () => {
    it('answers at the deadline with what arrived, and the hanging subgraph sees its call closed', async () => {
      const inventory = stack.subgraphs.inventory.subgraph;
      inventory.faults.set({ mode: 'hang' });
      inventory.stats.reset();
      const { status, body } = await stack.query(PAGE, { variables: { id: '3' }, headers: { 'switchyard-deadline-ms': '300' } });
      expect(status).toBe(200);
      expect(body.data.product).toMatchObject({ id: '3', reviews: expect.any(Array), inventory: null });
      expect(body.errors?.[0]).toMatchObject({ path: ['product', 'inventory'], extensions: { code: 'DEADLINE_EXCEEDED', subgraph: 'inventory', status: 504 } });
      await eventually(() => inventory.stats.snapshot().aborted >= 1, { what: 'the inventory subgraph to see the call aborted' });
      expect(inventory.stats.snapshot().inFlight).toBe(0);
    });

    it('takes the deadline from the operation policy, set live', async () => {
      await setPolicy(stack.db, 'ProductPage', { deadlineMs: 250 });
      try {
        await eventually(() => stack.router.policies.resolve('ProductPage').deadlineMs === 250, { what: 'the policy to reach the router' });
        stack.subgraphs.inventory.subgraph.faults.set({ mode: 'hang' });
        const { body } = await stack.query(PAGE, { variables: { id: '3' } });
        expect(body.extensions?.completeness.missing).toEqual([{ path: ['product', 'inventory'], subgraph: 'inventory', code: 'DEADLINE_EXCEEDED' }]);
      } finally {
        await removePolicy(stack.db, 'ProductPage');
      }
    });

    it('refuses a Switchyard-Deadline-Ms header that is not a positive whole number', async () => {
      for (const value of ['0', '-5', 'soon', '1.5']) {
        const { status, body } = await stack.query(PAGE, { variables: { id: '1' }, headers: { 'switchyard-deadline-ms': value } });
        expect(status).toBe(400);
        expect(body.errors?.[0].extensions?.code).toBe('BAD_REQUEST');
      }
    });
  });

  describe('a required section that fails takes its parent with it', () => {
    it('answers 502 to graphql-response+json clients when data is null, 200 to application/json ones', async () => {
      stack.subgraphs.product.subgraph.faults.set({ mode: 'down' });
      // Query.products is [Product!]!: its failure nulls the whole data.
      const modern = await stack.query('{ products(first: 2) { id name } }');
      expect(modern.status).toBe(502);
      expect(modern.body.data).toBeNull();
      expect(modern.body.errors?.[0]).toMatchObject({ path: ['products'], extensions: { code: 'SUBGRAPH_UNAVAILABLE', subgraph: 'product' } });
      expect(modern.headers.get('cache-control')).toBe('no-store');
      const legacy = await stack.query('{ products(first: 2) { id name } }', { accept: 'application/json' });
      expect(legacy.status).toBe(200);
      expect(legacy.body.data).toBeNull();
    });

    it('keeps 200 when the failed field is a nullable root: Query.product becomes null', async () => {
      stack.subgraphs.product.subgraph.faults.set({ mode: 'down' });
      const { status, body } = await stack.query(PAGE, { variables: { id: '1' } });
      expect(status).toBe(200);
      expect(body.data).toEqual({ product: null });
      expect(body.extensions?.completeness.missing).toEqual([{ path: ['product'], subgraph: 'product', code: 'SUBGRAPH_UNAVAILABLE' }]);
    });

    it('nulls the nearest nullable parent when a required field of an entity fails', async () => {
      // Review.product.name is String! from the product subgraph: its failure nulls Review.product (nullable).
      stack.subgraphs.product.subgraph.faults.set({ mode: 'down' });
      const { body } = await postReviewQuery(stack);
      expect(body.data.review).toMatchObject({ id: 'r-1', product: null });
      expect(body.errors?.map((e) => [e.path, e.extensions?.code])).toEqual([[['review', 'product', 'name'], 'SUBGRAPH_UNAVAILABLE']]);
    });

    it('answers 504 when the deadline caused it', async () => {
      stack.subgraphs.product.subgraph.faults.set({ mode: 'hang' });
      const { status, body } = await stack.query('query Page { products(first: 2) { id name } }', { headers: { 'switchyard-deadline-ms': '200' } });
      expect(status).toBe(504);
      expect(body.data).toBeNull();
      expect(body.extensions?.completeness).toEqual({ complete: false, missing: [{ path: ['products'], subgraph: 'product', code: 'DEADLINE_EXCEEDED' }] });
    });

    it('never shows an internal address or a stack trace', async () => {
      stack.subgraphs.product.subgraph.faults.set({ errorRate: 1, errorStatus: 503 });
      const { body } = await stack.query(PAGE, { variables: { id: '1' } });
      const text = JSON.stringify(body);
      expect(text).not.toMatch(/127\.0\.0\.1|localhost|:\d{4,5}\/|\bat .*\.js/);
      expect(body.errors?.[0].extensions?.code).toBe('SUBGRAPH_UNAVAILABLE');
    });
  });

  // Stale copies while a subgraph fails come from the section cache: test/integration/section-cache.test.ts.

  it('counts partial responses and missing sections in the metrics', async () => {
    stack.subgraphs.reviews.subgraph.faults.set({ mode: 'error' });
    await stack.query(PAGE, { variables: { id: '8' } });
    const text = await (await fetch(stack.router.url.replace(/graphql$/, 'metrics'))).text();
    expect(text).toMatch(/switchyard_partial_responses_total\{operation="ProductPage"\} [1-9]/);
    expect(text).toMatch(/switchyard_missing_sections_total\{subgraph="reviews",code="SUBGRAPH_ERROR"\} [1-9]/);
    expect(text).toMatch(/switchyard_subgraph_requests_total\{subgraph="reviews",outcome="graphql_error"\} [1-9]/);
  });
});
