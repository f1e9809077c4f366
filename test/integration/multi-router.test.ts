// Two routers on one store, as behind a load balancer: live policies and permissions, waiting tickets, subgraph tokens and (with Redis) one rate-limit budget.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_FAULT_SETTINGS } from '../../subgraphs/index.js';
import { removePolicy, setPolicy } from '../../src/registry/policy-store.js';
import { grantPermission, revokePermission } from '../../src/registry/permission-store.js';
import type { RunningRouter } from '../../src/cli/start-router.js';
import { runCli } from '../helpers/cli.js';
import { databaseKind } from '../helpers/database.js';
import { eventually, postGraphQL, type PostOptions } from '../helpers/http.js';
import { readMetric, startStack, type Stack } from '../helpers/stack.js';

const TEST_REDIS_URL = process.env.TEST_REDIS_URL || undefined;
const PAGE = 'query Page { product(id: "2") { name reviews { rating } inventory { inStock } } }';
/** A name of its own per run: policies, queues and Redis buckets of earlier runs never meet this one's. */
const unique = (name: string) => `${name}_${randomBytes(4).toString('hex')}`;
/** A counter without labels from a router's /metrics (absent counts as 0). */
async function fallbacksOf(router: RunningRouter): Promise<number> {
  const text = await (await fetch(router.url.replace(/graphql$/, 'metrics'))).text();
  const line = text.split('\n').find((l) => l.startsWith('switchyard_rate_limit_fallbacks_total '));
  return line ? Number(line.split(' ').at(-1)) : 0;
}
const jwksOf = (router: RunningRouter) => router.url.replace(/\/graphql$/, '/.well-known/jwks.json');

/** A port where nothing listens (bound, then released): a Redis that does not answer. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

// PGlite serves a second router in the same process through its socket (decision 001), polled for changes;
// PostgreSQL carries them by LISTEN/NOTIFY. Both are what ops run, so both paths run this file.
describe(`two routers on one ${databaseKind} database`, () => {
  let stack: Stack;
  let a: RunningRouter;
  let b: RunningRouter;
  const routers = () => [a, b];
  const ask = (router: RunningRouter, query: string, options?: PostOptions) => postGraphQL(router.url, query, options);

  beforeAll(async () => {
    // Without registryPollMs's test value (50 ms): the shipped 250 ms re-check on the embedded database, as ops run it.
    stack = await startStack({ config: { registryPollMs: 250, redisUrl: TEST_REDIS_URL } });
    a = stack.router;
    b = await stack.startRouter();
  });
  afterAll(async () => {
    await stack?.close();
  });
  afterEach(() => {
    for (const { subgraph } of Object.values(stack.subgraphs)) subgraph.faults.set(DEFAULT_FAULT_SETTINGS);
  });

  it('a policy change reaches both routers within a second', async () => {
    const name = unique('Page');
    const query = PAGE.replace('query Page', `query ${name}`);
    for (const router of routers()) expect((await ask(router, query)).status).toBe(200);
    await setPolicy(stack.db, name, { costLimit: 1 });
    try {
      await Promise.all(
        routers().map((router) =>
          eventually(async () => (await ask(router, query)).body.errors?.[0]?.extensions?.code === 'COST_LIMIT_EXCEEDED', {
            timeoutMs: 1_000,
            what: `the cost limit to reach the router on port ${router.port}`,
          }),
        ),
      );
    } finally {
      await removePolicy(stack.db, name);
    }
    await Promise.all(routers().map((router) => eventually(async () => (await ask(router, query)).status === 200, { timeoutMs: 1_000, what: 'the removal to reach both routers' })));
  });

  it('a permission change reaches both routers within a second', async () => {
    await grantPermission(stack.db, 'scope:reviews:read', 'Product.reviews');
    try {
      await Promise.all(
        routers().map((router) =>
          eventually(
            async () => {
              const { body } = await ask(router, PAGE);
              return body.data?.product?.reviews === null && body.errors?.[0]?.extensions?.code === 'FORBIDDEN';
            },
            { timeoutMs: 1_000, what: `the rule to reach the router on port ${router.port}` },
          ),
        ),
      );
    } finally {
      await revokePermission(stack.db, 'scope:reviews:read', 'Product.reviews');
    }
    await Promise.all(
      routers().map((router) => eventually(async () => Array.isArray((await ask(router, PAGE)).body.data?.product?.reviews), { timeoutMs: 1_000, what: 'the revocation to reach both routers' })),
    );
  });

  it('a waiting ticket handed out by one router lets its holder in ahead of newcomers on the other', async () => {
    const name = unique('Tickets');
    const query = `query ${name} { products(first: 1) { id name } }`;
    await setPolicy(stack.db, name, { maxConcurrency: 1, queueLength: 0, maxWaitMs: 10_000 });
    try {
      for (const router of routers()) await eventually(() => router.policies.resolve(name).maxConcurrency === 1, { what: 'the policy to reach the router' });
      stack.subgraphs.product.subgraph.faults.set({ latencyMs: 400 });
      const inflight = (router: RunningRouter) => readMetric(router, 'switchyard_queue_inflight', { operation: name });
      // Router A is full: its next request is refused with a ticket.
      const busyOnA = ask(a, query);
      await eventually(async () => (await inflight(a)) === 1, { what: 'a request in flight on router A' });
      const refused = await ask(a, query);
      expect(refused.status).toBe(503);
      const ticket = refused.body.errors?.[0]?.extensions?.queue?.ticket as string;
      expect(ticket).toBeTruthy();
      // Router B is full too: a newcomer there is refused, the ticket holder from A is admitted.
      const busyOnB = ask(b, query);
      await eventually(async () => (await inflight(b)) === 1, { what: 'a request in flight on router B' });
      const newcomer = await ask(b, query);
      expect(newcomer.body.errors?.[0]?.extensions?.code).toBe('QUEUE_FULL');
      const holder = await ask(b, query, { headers: { 'switchyard-queue-ticket': ticket } });
      expect(holder.status).toBe(200);
      expect(holder.body.data.products).toHaveLength(1);
      expect((await busyOnA).status).toBe(200);
      expect((await busyOnB).status).toBe(200);
    } finally {
      await removePolicy(stack.db, name);
    }
  });

  it('subgraph tokens minted by one router verify against the other router’s JWKS', async () => {
    const [keysA, keysB] = await Promise.all(routers().map(async (r) => (await (await fetch(jwksOf(r))).json()) as { keys: { kid: string }[] }));
    expect(keysA.keys.map((k) => k.kid).sort()).toEqual(keysB.keys.map((k) => k.kid).sort());
    const requireTokensFrom = (router: RunningRouter) => {
      for (const { subgraph } of Object.values(stack.subgraphs)) subgraph.requireTokens({ jwksUrl: jwksOf(router) });
    };
    try {
      // Subgraphs that trust only B's JWKS serve a page asked through A (A minted every token), and the other way round.
      for (const [verifier, caller] of [
        [b, a],
        [a, b],
      ] as const) {
        requireTokensFrom(verifier);
        const page = await ask(caller, PAGE);
        expect(page.body.errors).toBeUndefined();
        expect(page.body.data.product).toMatchObject({ name: expect.any(String), reviews: expect.any(Array), inventory: { inStock: expect.any(Number) } });
        expect(page.headers.get('switchyard-completed')).toBe('true');
      }
    } finally {
      requireTokensFrom(a);
    }
  });

  it('policy list says whether rate limits are per router instance or shared through Redis', async () => {
    const where = stack.store.databaseUrl ? ['--database-url', stack.store.databaseUrl] : ['--data-dir', stack.store.dataDir];
    const alone = await runCli(['policy', 'list', ...where], { REDIS_URL: '' });
    expect(alone.code).toBe(0);
    expect(alone.stdout).toMatch(/limits are per router instance/);
    const shared = await runCli(['policy', 'list', ...where], { REDIS_URL: 'redis://127.0.0.1:6379' });
    expect(shared.code).toBe(0);
    expect(shared.stdout).toMatch(/rate limits .* are shared by every router through Redis/);
  });

  describe.skipIf(!TEST_REDIS_URL)('with REDIS_URL (TEST_REDIS_URL; skipped without it)', () => {
    it('both routers spend one rate-limit budget: requests over it are refused whichever router they reach', async () => {
      const name = unique('Spender');
      // A page of ten products costs about 10: a burst of 40 admits four or five of them, then the bucket
      // refills one point a second. Per router instance, each router would admit its own four or five.
      const query = `query ${name} { products(first: 10) { id } }`;
      await setPolicy(stack.db, name, { costRatePerSecond: 1, costBurst: 40 });
      try {
        for (const router of routers()) await eventually(() => router.policies.resolve(name).costBurst === 40, { what: 'the policy to reach the router' });
        const answers = [];
        for (let i = 0; i < 8; i++) answers.push(await ask(routers()[i % 2], query));
        const refused = answers.filter((answer) => answer.status === 429);
        expect(refused.length).toBeGreaterThanOrEqual(3);
        expect(refused.every((answer) => answer.body.errors?.[0]?.extensions?.code === 'RATE_LIMITED')).toBe(true);
        // Both routers refused some: the budget one of them spent is gone for the other too.
        expect(new Set(answers.map((answer, i) => (answer.status === 429 ? i % 2 : -1)).filter((i) => i >= 0)).size).toBe(2);
        for (const router of routers()) expect(await fallbacksOf(router)).toBe(0);
      } finally {
        await removePolicy(stack.db, name);
      }
    });
  });

  describe('with a REDIS_URL whose Redis does not answer', () => {
    it('the router keeps serving, limits with its own buckets, and counts each fallback', async () => {
      const lonely = await stack.startRouter({ redisUrl: `redis://127.0.0.1:${await closedPort()}` });
      const name = unique('Fallback');
      const query = `query ${name} { products(first: 10) { id } }`;
      await setPolicy(stack.db, name, { costRatePerSecond: 1, costBurst: 40 });
      try {
        await eventually(() => lonely.policies.resolve(name).costBurst === 40, { what: 'the policy to reach the router' });
        const page = await ask(lonely, PAGE);
        expect(page.status).toBe(200);
        expect(page.body.errors).toBeUndefined();
        const answers = [];
        for (let i = 0; i < 8; i++) answers.push(await ask(lonely, query));
        expect(answers.slice(0, 4).map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
        expect(answers.filter((answer) => answer.status === 429).length).toBeGreaterThanOrEqual(3);
        // Fallen back, not silently shared nor unlimited: every draw was decided by this router's own bucket.
        expect(await fallbacksOf(lonely)).toBe(8);
      } finally {
        await removePolicy(stack.db, name);
      }
    });
  });
});
