// Traffic control set live by ops: per-operation capacity, FIFO queues, waiting tickets, timeouts, client aborts.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_FAULT_SETTINGS } from '../../subgraphs/index.js';
import { setPolicy, type PolicyLimits } from '../../src/registry/policy-store.js';
import { publishSubgraph } from '../../src/registry/subgraph-store.js';
import { compositionCheck } from '../../src/cli/registry-commands.js';
import { databaseKind } from '../helpers/database.js';
import { eventually, postGraphQL } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/stack.js';

describe(`traffic control (${databaseKind} database)`, () => {
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

  /** Sets a policy and waits until this router applies it. */
  async function policy(operation: string, limits: { [K in keyof PolicyLimits]?: number | null }) {
    await setPolicy(stack.db, operation, limits);
    await eventually(
      () => Object.entries(limits).every(([key, value]) => stack.router.policies.resolve(operation)[key as keyof PolicyLimits] === (value ?? undefined)),
      { what: `the ${operation} policy to reach the router` },
    );
  }

  const query = (name: string, options: Parameters<Stack['query']>[1] = {}) => stack.query(`query ${name} { products(first: 1) { id } }`, options);

  describe('operation queue', () => {
    it('serves exactly capacity + queue length of 12 concurrent requests and hands the rest a waiting ticket', async () => {
      await policy('Burst', { maxConcurrency: 2, queueLength: 4, maxWaitMs: 10_000 });
      stack.subgraphs.product.subgraph.faults.set({ latencyMs: 200 });
      const answers = await Promise.all(Array.from({ length: 12 }, () => query('Burst')));
      const served = answers.filter((a) => a.status === 200 && a.body.data);
      const full = answers.filter((a) => a.body.errors?.[0]?.extensions?.code === 'QUEUE_FULL');
      expect(served).toHaveLength(6);
      expect(full).toHaveLength(6);
      for (const answer of full) {
        expect(answer.status).toBe(503);
        expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(answer.body.errors?.[0].extensions?.queue).toEqual({ ticket: expect.stringMatching(/^[\w-]{16,}$/), retryAfterMs: expect.any(Number) });
      }
      expect(await stack.metric('switchyard_queue_rejected_total', { operation: 'Burst', reason: 'full' })).toBe(6);
    });

    it('admits a ticket holder ahead of the waiting newcomers, even when the queue is full, once', async () => {
      await policy('Tickets', { maxConcurrency: 1, queueLength: 2, maxWaitMs: 10_000 });
      // Long enough that the refused request and the ticket holder's arrive while the first still runs,
      // however loaded the machine: at 150 ms a busy CI run let the first finish before the holder queued.
      stack.subgraphs.product.subgraph.faults.set({ latencyMs: 600 });
      const finished: string[] = [];
      const track = (label: string, promise: ReturnType<typeof query>) => promise.then((a) => (finished.push(label), a));
      const running = track('running', query('Tickets'));
      await eventually(async () => (await stack.metric('switchyard_queue_inflight', { operation: 'Tickets' })) === 1, { what: 'the first request to run' });
      const w1 = track('w1', query('Tickets'));
      const w2 = track('w2', query('Tickets'));
      await eventually(async () => (await stack.metric('switchyard_queue_waiting', { operation: 'Tickets' })) === 2, { what: 'two waiters' });
      const refused = await query('Tickets');
      const ticket = refused.body.errors?.[0].extensions?.queue.ticket as string;
      expect(ticket).toBeTruthy();
      const holder = track('ticket', query('Tickets', { headers: { 'switchyard-queue-ticket': ticket } }));
      const answers = await Promise.all([running, w1, w2, holder]);
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
      expect(finished).toEqual(['running', 'ticket', 'w1', 'w2']);
      // A ticket works once: used again while the queue is full, its holder is an ordinary newcomer and is refused.
      const again = [query('Tickets')];
      await eventually(async () => (await stack.metric('switchyard_queue_inflight', { operation: 'Tickets' })) === 1, { what: 'a request to run' });
      again.push(query('Tickets'), query('Tickets'));
      await eventually(async () => (await stack.metric('switchyard_queue_waiting', { operation: 'Tickets' })) === 2, { what: 'two waiters' });
      const reused = await query('Tickets', { headers: { 'switchyard-queue-ticket': ticket } });
      expect(reused.body.errors?.[0].extensions?.code).toBe('QUEUE_FULL');
      await Promise.all(again);
    });

    it('answers QUEUE_TIMEOUT with Retry-After to a request that waited longer than max_wait_ms', async () => {
      await policy('Patience', { maxConcurrency: 1, queueLength: 10, maxWaitMs: 100 });
      stack.subgraphs.product.subgraph.faults.set({ latencyMs: 400 });
      const [first, second] = await Promise.all([query('Patience'), query('Patience')]);
      expect(first.status).toBe(200);
      expect(second.status).toBe(503);
      expect(second.body.errors?.[0].extensions).toMatchObject({ code: 'QUEUE_TIMEOUT', queue: { retryAfterMs: expect.any(Number) } });
      expect(second.headers.get('retry-after')).toMatch(/^\d+$/);
    });

    // Generous bounds (events awaited, never slept): 501 connections on a loaded 2-core CI machine take a while to queue.
    it('lets 500 clients that give up leave the queue at once; nothing stays waiting or in flight', { timeout: 60_000 }, async () => {
      await policy('Crowd', { maxConcurrency: 1, queueLength: 1000, maxWaitMs: 60_000 });
      stack.subgraphs.product.subgraph.faults.set({ mode: 'hang' });
      const controllers = Array.from({ length: 501 }, () => new AbortController());
      const requests = controllers.map((c) => query('Crowd', { signal: c.signal, headers: { 'switchyard-deadline-ms': '60000' } }).catch(() => undefined));
      await eventually(async () => (await stack.metric('switchyard_queue_waiting', { operation: 'Crowd' })) === 500, { what: '500 waiters', timeoutMs: 30_000 });
      for (const c of controllers) c.abort();
      await Promise.all(requests);
      await eventually(
        async () => (await stack.metric('switchyard_queue_waiting', { operation: 'Crowd' })) === 0 && (await stack.metric('switchyard_queue_inflight', { operation: 'Crowd' })) === 0,
        { what: 'the queue to empty', timeoutMs: 15_000 },
      );
      stack.subgraphs.product.subgraph.faults.set({ mode: 'ok' });
      const next = await query('Crowd');
      expect(next.status).toBe(200);
      expect(await stack.metric('switchyard_queue_waiting', { operation: 'Crowd' })).toBe(0);
    });

    it('applies a capacity change live: waiters are admitted as soon as it is raised', async () => {
      await policy('Live', { maxConcurrency: 1, queueLength: 10, maxWaitMs: 30_000 });
      stack.subgraphs.product.subgraph.faults.set({ latencyMs: 300 });
      const requests = Array.from({ length: 4 }, () => query('Live'));
      await eventually(async () => (await stack.metric('switchyard_queue_waiting', { operation: 'Live' })) === 3, { what: 'three waiters' });
      await policy('Live', { maxConcurrency: 4 });
      await eventually(async () => (await stack.metric('switchyard_queue_inflight', { operation: 'Live' })) === 4, { what: 'all four to run' });
      expect((await Promise.all(requests)).every((a) => a.status === 200)).toBe(true);
    });

    it('shares the * queue between operations without a policy of their own', async () => {
      await policy('*', { maxConcurrency: 50, queueLength: 10 });
      await query('SomeInventedName');
      expect(await stack.metric('switchyard_queue_inflight', { operation: '*' })).toBe(0);
      const text = await (await fetch(stack.router.url.replace(/graphql$/, 'metrics'))).text();
      expect(text).not.toMatch(/switchyard_queue_\w+\{operation="SomeInventedName"/);
      await setPolicy(stack.db, '*', { maxConcurrency: null, queueLength: null });
    });
  });

  describe('query cost', () => {
    it('refuses an operation over its cost limit with 400 before any subgraph call', async () => {
      await policy('BigPage', { costLimit: 100 });
      for (const { subgraph } of Object.values(stack.subgraphs)) subgraph.stats.reset();
      const plannedBefore = await stack.metric('switchyard_plans_total', { outcome: 'planned' });
      const { status, body } = await stack.query('query BigPage { products(first: 50) { id name reviews { rating } inventory { inStock } } }');
      expect(status).toBe(400);
      // Refused before it was planned: costly documents cost the router no planning either.
      expect(await stack.metric('switchyard_plans_total', { outcome: 'planned' })).toBe(plannedBefore);
      expect(body.errors?.[0].extensions).toMatchObject({ code: 'COST_LIMIT_EXCEEDED', cost: { estimated: expect.any(Number), limit: 100 } });
      expect(body.errors?.[0].extensions?.cost.estimated).toBeGreaterThan(100);
      expect(body.data).toBeUndefined();
      for (const { subgraph } of Object.values(stack.subgraphs)) expect(subgraph.stats.snapshot().graphqlRequests).toBe(0);
      // The same operation asking for less fits.
      const small = await stack.query('query BigPage { products(first: 2) { id name } }');
      expect(small.status).toBe(200);
      expect(await stack.metric('switchyard_cost_rejected_total', { operation: 'BigPage' })).toBe(1);
    });

    it('skips only the sections of a subgraph over its cost budget, and serves the rest', async () => {
      const { running, subgraph } = stack.subgraphs.inventory;
      const swapped = stack.nextSwap();
      await publishSubgraph(stack.db, { name: 'inventory', url: running.url, sdl: subgraph.sdl, route: { costBudget: 5 } }, compositionCheck);
      await swapped;
      try {
        subgraph.stats.reset();
        const { status, body } = await stack.query('{ products(first: 20) { id name inventory { inStock } } }');
        expect(status).toBe(200);
        expect(body.data.products).toHaveLength(20);
        expect(body.data.products.every((p: { name: string; inventory: unknown }) => typeof p.name === 'string' && p.inventory === null)).toBe(true);
        expect(body.errors?.[0].extensions).toMatchObject({ code: 'SUBGRAPH_COST_EXCEEDED', subgraph: 'inventory' });
        expect(body.extensions?.completeness.missing[0]).toEqual({ path: ['products', 0, 'inventory'], subgraph: 'inventory', code: 'SUBGRAPH_COST_EXCEEDED' });
        expect(subgraph.stats.snapshot().graphqlRequests).toBe(0);
        // Within budget, the section is served.
        const one = await stack.query('{ product(id: "1") { inventory { inStock } } }');
        expect(one.body.data.product.inventory).not.toBeNull();
      } finally {
        const restored = stack.nextSwap();
        await publishSubgraph(stack.db, { name: 'inventory', url: running.url, sdl: subgraph.sdl, route: {} }, compositionCheck);
        await restored;
      }
    });

    it('limits the cost a client spends per second, and refills', async () => {
      await policy('Spender', { costRatePerSecond: 20, costBurst: 20 });
      const spend = () => stack.query('query Spender { products(first: 10) { id name } }', { headers: { 'x-test': 'rate' } });
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push(await spend());
      const limited = answers.find((a) => a.status === 429);
      expect(limited).toBeDefined();
      expect(limited!.body.errors?.[0].extensions).toMatchObject({ code: 'RATE_LIMITED', rateLimit: { ratePerSecond: 20, burst: 20 } });
      expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      await eventually(async () => (await spend()).status === 200, { what: 'the bucket to refill', timeoutMs: 5_000, intervalMs: 200 });
    });

    it('exports estimated and actual cost so ops can tune limits from data', async () => {
      await stack.query('{ products(first: 3) { id reviews { rating } } }');
      const text = await (await fetch(stack.router.url.replace(/graphql$/, 'metrics'))).text();
      expect(text).toMatch(/switchyard_operation_cost_count\{kind="estimated"\} [1-9]/);
      expect(text).toMatch(/switchyard_operation_cost_count\{kind="actual"\} [1-9]/);
    });
  });

  it('keeps an anonymous request in the default queue and a second router unaffected by this one', async () => {
    const second = await stack.startRouter();
    try {
      const answer = await postGraphQL(second.url, '{ products(first: 1) { id } }');
      expect(answer.status).toBe(200);
    } finally {
      await second.close();
    }
  });
});
