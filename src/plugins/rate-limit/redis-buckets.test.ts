// Rate-limit buckets in Redis: one budget for every router drawing from it, and this process's own buckets while Redis does not answer.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryBuckets, type TokenBuckets } from './token-buckets.js';
import { redisBuckets } from './redis-buckets.js';

const TEST_REDIS_URL = process.env.TEST_REDIS_URL || undefined;
// A rate this low refills next to nothing during a test. With a burst of 5 and draws costing 2, three
// draws are admitted (5 → 3 → 1 → -1, the last one into debt) and every later one is refused.
const limits = { ratePerSecond: 0.001, burst: 5 };
const COST = 2;
const ADMITTED = 3;

const clients: Redis[] = [];
function client(url: string): Redis {
  const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 250, lazyConnect: true, retryStrategy: () => null });
  redis.on('error', () => {});
  clients.push(redis);
  return redis;
}
afterEach(() => {
  for (const redis of clients.splice(0)) redis.disconnect();
});

async function drawMany(stores: TokenBuckets[], key: string, times: number): Promise<boolean[]> {
  const admitted: boolean[] = [];
  for (let i = 0; i < times; i++) admitted.push((await stores[i % stores.length].draw(key, COST, limits)).admitted);
  return admitted;
}

/** A port where nothing listens (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe.skipIf(!TEST_REDIS_URL)('rate-limit buckets shared through Redis (TEST_REDIS_URL; skipped without it)', () => {
  it('two routers drawing from one client bucket admit one burst between them, not once each', async () => {
    const key = `test-${randomBytes(6).toString('hex')}`;
    const routers = [0, 1].map(() => {
      const redis = client(TEST_REDIS_URL!);
      return redisBuckets({ redis, fallback: memoryBuckets() });
    });
    await Promise.all(clients.map((c) => c.connect()));
    const admitted = await drawMany(routers, key, 8);
    expect(admitted).toEqual([true, true, true, false, false, false, false, false]);
  });

  it('draws in parallel from both routers never spend more than the burst (the script is atomic)', async () => {
    const key = `test-${randomBytes(6).toString('hex')}`;
    const routers = [0, 1].map(() => redisBuckets({ redis: client(TEST_REDIS_URL!), fallback: memoryBuckets() }));
    await Promise.all(clients.map((c) => c.connect()));
    const draws = await Promise.all(Array.from({ length: 40 }, (_, i) => routers[i % 2].draw(key, COST, limits)));
    expect(draws.filter((d) => d.admitted)).toHaveLength(ADMITTED);
  });

  it('a refused draw tells how deep the debt is, so Retry-After can be computed', async () => {
    const key = `test-${randomBytes(6).toString('hex')}`;
    const buckets = redisBuckets({ redis: client(TEST_REDIS_URL!), fallback: memoryBuckets() });
    await clients[0].connect();
    expect(await buckets.draw(key, 12, limits)).toMatchObject({ admitted: true });
    const refused = await buckets.draw(key, 1, limits);
    expect(refused.admitted).toBe(false);
    expect(refused.tokens).toBeCloseTo(-7, 1);
  });
});

describe('rate-limit buckets while Redis does not answer', () => {
  it('falls back to the router’s own buckets: requests are still decided (and limited), each fallback counted, the outage reported once', async () => {
    const redis = client(`redis://127.0.0.1:${await closedPort()}`);
    await redis.connect().catch(() => {});
    let fallbacks = 0;
    const outages: Error[] = [];
    const buckets = redisBuckets({ redis, fallback: memoryBuckets(), onFallback: () => fallbacks++, onOutage: (error) => outages.push(error) });
    const admitted = await drawMany([buckets], 'client:mobile|*', 7);
    expect(admitted).toEqual([true, true, true, false, false, false, false]);
    expect(fallbacks).toBe(7);
    expect(outages).toHaveLength(1);
  });
});
