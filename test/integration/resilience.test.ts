// Aggregation resilience around each subgraph call: retries, hedging, circuit breaker, cancellation.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_FAULT_SETTINGS } from '../../subgraphs/index.js';
import { databaseKind } from '../helpers/database.js';
import { eventually } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/stack.js';

const PAGE = 'query ProductPage($id: ID!) { product(id: $id) { id name reviews { rating } inventory { inStock } } }';

/** Runs `count` product pages with at most `concurrency` at once; returns each page's latency and body. */
async function runPages(stack: Stack, count: number, concurrency: number) {
  const results: { ms: number; complete: boolean; missing: any[] }[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const id = String((next++ % 1000) + 1);
        const started = performance.now();
        const { headers, body } = await stack.query(PAGE, { variables: { id } });
        results.push({ ms: performance.now() - started, complete: headers.get('switchyard-completed') === 'true', missing: body.extensions?.completeness?.missing ?? [] });
      }
    }),
  );
  return results;
}

describe(`resilience (${databaseKind} database)`, () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.close();
  });
  afterEach(async () => {
    for (const { subgraph } of Object.values(stack.subgraphs)) subgraph.faults.set(DEFAULT_FAULT_SETTINGS);
  });

  describe('a hanging subgraph under short client deadlines', () => {
    // First in the file: the subgraphs' latency history is that of healthy calls, not of the loaded
    // runs below (a call cut by the deadline counts as slow once it ran the subgraph's usual p95).
    it('trips its breaker on slow calls: after 30 pages cut at 150 ms, the next page gets CIRCUIT_OPEN on reviews without calling it', async () => {
      const reviews = stack.subgraphs.reviews.subgraph;
      // One page at the default deadline first: a router's first request (connections, token keys, plans)
      // can take longer than 150 ms on its own, and would lose more than the hanging section.
      const warm = await stack.query(PAGE, { variables: { id: '1' } });
      expect(warm.body.errors).toBeUndefined();
      reviews.faults.set({ mode: 'hang' });
      try {
        for (let i = 0; i < 30; i++) {
          const { body } = await stack.query(PAGE, { variables: { id: String(i + 1) }, headers: { 'switchyard-deadline-ms': '150' } });
          // Only reviews is lost; the rest of each page is served.
          expect(body.data.product).toMatchObject({ id: String(i + 1), reviews: null });
        }
        expect(await stack.metric('switchyard_circuit_state', { subgraph: 'reviews' })).toBe(1);
        reviews.stats.reset();
        const { body } = await stack.query(PAGE, { variables: { id: '31' }, headers: { 'switchyard-deadline-ms': '150' } });
        expect(body.data.product).toMatchObject({ id: '31', reviews: null, inventory: { inStock: expect.any(Number) } });
        expect(body.extensions?.completeness.missing).toEqual([{ path: ['product', 'reviews'], subgraph: 'reviews', code: 'CIRCUIT_OPEN' }]);
        expect(reviews.stats.snapshot().requests).toBe(0);
      } finally {
        reviews.faults.set(DEFAULT_FAULT_SETTINGS);
        // A fresh breaker for the tests after this one (a route change replaces it).
        await stack.publishRoute('reviews', { breaker: { openMs: 100 } });
        await stack.publishRoute('reviews', {});
      }
    });

    it('does not trip on calls that a short deadline starves before the subgraph could usually answer', async () => {
      // Enough healthy pages for every subgraph to know its usual answer time.
      await runPages(stack, 40, 2);
      // 1 ms deadlines cut healthy calls before any subgraph's usual answer time: they say nothing of its health.
      for (let i = 0; i < 30; i++) await stack.query(PAGE, { variables: { id: '2' }, headers: { 'switchyard-deadline-ms': '1' } });
      expect(await stack.metric('switchyard_circuit_state', { subgraph: 'reviews' })).toBe(0);
      expect(await stack.metric('switchyard_circuit_state', { subgraph: 'product' })).toBe(0);
      expect((await stack.query(PAGE, { variables: { id: '2' } })).headers.get('switchyard-completed')).toBe('true');
    });
  });

  describe('retries', () => {
    it('recover most calls of a 10% flaky subgraph (HTTP 503), within a budget of about 10% extra calls', async () => {
      const inventory = stack.subgraphs.inventory.subgraph;
      inventory.faults.set({ errorRate: 0.1, errorStatus: 503 });
      const retriesBefore = await stack.metric('switchyard_subgraph_retries_total', { subgraph: 'inventory' });
      const failedBefore = await stack.metric('switchyard_subgraph_requests_total', { subgraph: 'inventory', outcome: 'http_error' });
      const pages = await runPages(stack, 200, 4);
      const retries = (await stack.metric('switchyard_subgraph_retries_total', { subgraph: 'inventory' })) - retriesBefore;
      const failures = (await stack.metric('switchyard_subgraph_requests_total', { subgraph: 'inventory', outcome: 'http_error' })) - failedBefore;
      const partial = pages.filter((p) => !p.complete);
      expect(failures).toBeGreaterThan(0);
      expect(retries).toBeGreaterThan(0);
      // Retried calls that then succeeded are the pages that did not go partial.
      expect(partial.length).toBeLessThan(failures);
      // The budget: 10% of 200 calls plus what it saved up before (at most its 10 tokens: the tests above
      // made healthy calls to inventory, which deposit too).
      expect(retries).toBeLessThanOrEqual(0.1 * 200 + 10);
      for (const page of partial) expect(page.missing).toEqual([{ path: ['product', 'inventory'], subgraph: 'inventory', code: 'SUBGRAPH_UNAVAILABLE' }]);
    });

    it('never retries a mutation', async () => {
      const reviews = stack.subgraphs.reviews.subgraph;
      reviews.faults.set({ errorRate: 1, errorStatus: 503 });
      reviews.stats.reset();
      const { body } = await stack.query('mutation { addReview(productId: "1", rating: 4, body: "Solid.") { id } }');
      expect(body.errors?.[0].extensions).toMatchObject({ code: 'SUBGRAPH_UNAVAILABLE', subgraph: 'reviews' });
      expect(reviews.stats.snapshot().graphqlRequests).toBe(1);
      // The same failure on a query is retried.
      reviews.stats.reset();
      await stack.query('{ review(id: "r-1") { id } }');
      expect(reviews.stats.snapshot().graphqlRequests).toBeGreaterThan(1);
    });

    it('does not retry a GraphQL error (the subgraph answered)', async () => {
      const reviews = stack.subgraphs.reviews.subgraph;
      reviews.faults.set({ mode: 'error' });
      reviews.stats.reset();
      await stack.query('{ review(id: "r-1") { id } }');
      expect(reviews.stats.snapshot().graphqlRequests).toBe(1);
    });
  });

  describe('hedging', () => {
    it('cuts the p99 of the page when a subgraph is slow for a few percent of calls', async () => {
      // 3% of inventory calls take 1.5 s more (under the 2 s deadline). Without hedging more than 1% of pages are slow, so
      // the page p99 is slow; a backup call once a call outlives the subgraph's p95 cuts the slow pages
      // at least in half (in practice to 0-2). The threshold is far above what a loaded test machine
      // adds to a normal page, so only the injected slowness counts.
      // Hedging runs first, while the latency history holds no slow calls (a hedge that wins keeps the
      // slow attempt out of the history, so p95 stays the p95 of healthy calls). A 200 ms floor keeps
      // healthy calls that merely pass the p95 from spending the 5% budget the slow 3% need: without
      // it, a loaded machine ran out of tokens and left up to half the slow calls unhedged (7 of 13).
      const SLOW_PAGE_MS = 1_000;
      const PAGES = 600;
      const inventory = stack.subgraphs.inventory.subgraph;
      await stack.publishRoute('inventory', { hedge: { enabled: true, floorMs: 200 }, retry: { enabled: false } });
      inventory.faults.set({ slowRate: 0.03, slowMs: 1_500 });
      const hedgesBefore = await stack.metric('switchyard_subgraph_hedges_total', { subgraph: 'inventory' });
      const hedged = await runPages(stack, PAGES, 10);
      const hedges = (await stack.metric('switchyard_subgraph_hedges_total', { subgraph: 'inventory' })) - hedgesBefore;

      await stack.publishRoute('inventory', { hedge: { enabled: false }, retry: { enabled: false } });
      const unhedged = await runPages(stack, PAGES, 10);

      const slow = (pages: { ms: number }[]) => pages.filter((p) => p.ms > SLOW_PAGE_MS).length;
      if (process.env.SY_DEBUG) console.log({ hedges, slowHedged: slow(hedged), slowUnhedged: slow(unhedged) });
      expect(slow(unhedged)).toBeGreaterThan(PAGES * 0.01);
      expect(slow(hedged)).toBeLessThanOrEqual(slow(unhedged) / 2);
      expect(hedges).toBeGreaterThan(0);
      // Capped at 5% of calls, plus at most the 5 tokens the hedge bucket can save up beforehand.
      expect(hedges).toBeLessThanOrEqual(PAGES * 0.05 + 5);
      expect(hedged.every((p) => p.complete)).toBe(true);
      await stack.publishRoute('inventory', {});
    });
  });

  describe('circuit breaker', () => {
    it('opens after repeated failures, fails fast with CIRCUIT_OPEN, and closes after a good probe', async () => {
      await stack.publishRoute('inventory', { breaker: { minRequests: 5, failureRatio: 0.5, openMs: 300 }, retry: { enabled: false }, hedge: { enabled: false } });
      const inventory = stack.subgraphs.inventory.subgraph;
      inventory.faults.set({ mode: 'down' });
      for (let i = 0; i < 5; i++) await stack.query(PAGE, { variables: { id: '1' } });
      expect(await stack.metric('switchyard_circuit_state', { subgraph: 'inventory' })).toBe(1);

      inventory.stats.reset();
      const { body } = await stack.query(PAGE, { variables: { id: '1' } });
      expect(body.data.product.inventory).toBeNull();
      expect(body.errors?.[0].extensions).toMatchObject({ code: 'CIRCUIT_OPEN', subgraph: 'inventory', status: 503 });
      expect(inventory.stats.snapshot().requests).toBe(0);

      inventory.faults.set({ mode: 'ok' });
      // After openMs, the next call is the probe; its success closes the circuit.
      await eventually(async () => (await stack.query(PAGE, { variables: { id: '1' } })).headers.get('switchyard-completed') === 'true', {
        what: 'the breaker to let a probe through',
      });
      expect(await stack.metric('switchyard_circuit_state', { subgraph: 'inventory' })).toBe(0);
      await stack.publishRoute('inventory', {});
    });
  });

  describe('cancellation', () => {
    it('aborts the subgraph calls of a client that disconnects', async () => {
      const inventory = stack.subgraphs.inventory.subgraph;
      inventory.faults.set({ mode: 'hang' });
      inventory.stats.reset();
      const controller = new AbortController();
      const request = stack.query(PAGE, { variables: { id: '4' }, headers: { 'switchyard-deadline-ms': '60000' }, signal: controller.signal }).catch((e: Error) => e);
      await eventually(() => inventory.stats.snapshot().inFlight >= 1, { what: 'the call to reach the inventory subgraph' });
      controller.abort();
      expect(await request).toBeInstanceOf(Error);
      // Every call the router had open (a hedge too, if one started) is closed by the router.
      await eventually(() => inventory.stats.snapshot().inFlight === 0, { what: 'the router to abort the inventory calls' });
      expect(inventory.stats.snapshot().aborted).toBeGreaterThanOrEqual(1);
      expect(inventory.stats.snapshot().inFlight).toBe(0);
    });
  });
});
