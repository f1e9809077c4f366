// The section store with Redis: shared by every router on one prefix, and never a cost to a request while Redis fails.
import { randomBytes } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { RedisTimeoutError } from './redis-sections.js';
import { createSectionStore, type CachedSection, type SectionStore, type SectionStoreOptions } from './section-store.js';

const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** Every key this file writes starts with it (deleted after the file). */
const BASE_PREFIX = `switchyard:test:cache:${randomBytes(6).toString('hex')}:`;
const PREFIX = `${BASE_PREFIX}a:`;
const OTHER_PREFIX = `${BASE_PREFIX}b:`;
/** Nothing listens there: connections are refused. */
const DOWN_URL = 'redis://127.0.0.1:1';

function section(json: string, overrides: Partial<CachedSection> = {}): CachedSection {
  return { json, fetchedAt: Date.now(), maxAgeMs: 60_000, staleMs: 30_000, purgeSeq: 4, ...overrides };
}

const stores: SectionStore[] = [];
async function store(options: SectionStoreOptions['redis'] & object, rest: Omit<SectionStoreOptions, 'redis'> = {}): Promise<SectionStore> {
  const created = createSectionStore({ ...rest, redis: options });
  stores.push(created);
  return created;
}
/**
 * A store of its own client on the test Redis, connected. Its read budget is generous: these tests are
 * about sharing, and on a loaded machine a read can take longer than the default 50 ms (then a miss).
 */
async function sharedStore(prefix = PREFIX, rest: Omit<SectionStoreOptions, 'redis'> = {}): Promise<SectionStore> {
  const created = await store({ url: TEST_REDIS_URL, prefix, timeoutMs: 5_000 }, rest);
  expect(await created.redisReady(5_000)).toBe(true);
  return created;
}

const raw = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
raw.on('error', () => {});

beforeAll(async () => {
  await raw.connect();
});

afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});
afterAll(async () => {
  for await (const keys of raw.scanStream({ match: `${BASE_PREFIX}*`, count: 100 })) if ((keys as string[]).length > 0) await raw.del(...(keys as string[]));
  raw.disconnect();
});

describe('section store shared through Redis (TEST_REDIS_URL, default redis://127.0.0.1:6379)', () => {
  it('lets one router read what another stored on the same prefix, with the original fetchedAt, TTL = maxAge + stale', async () => {
    const [writer, reader] = [await sharedStore(), await sharedStore()];
    const value = section('{"upc":"1","name":"Chair"}', { fetchedAt: Date.now() - 1_000 });
    writer.setMany([['product:1', value]]);
    await writer.flush();
    expect(await reader.getMany(['product:1', 'product:2'])).toEqual([value, undefined]);
    const ttl = await raw.pttl(`${PREFIX}product:1`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(value.maxAgeMs + value.staleMs);
  });

  it('keeps a Redis hit in memory, so a second read needs Redis no more', async () => {
    const [writer, reader] = [await sharedStore(), await sharedStore()];
    writer.setMany([['product:copied', section('{"upc":"2"}')]]);
    await writer.flush();
    expect(reader.bytes).toBe(0);
    expect((await reader.getMany(['product:copied']))[0]?.json).toBe('{"upc":"2"}');
    expect(reader.bytes).toBeGreaterThan(0);
    await raw.del(`${PREFIX}product:copied`);
    expect((await reader.getMany(['product:copied']))[0]?.json).toBe('{"upc":"2"}');
  });

  it('asks Redis for a key memory holds only as stale, and takes the fresher copy another router stored', async () => {
    const [writer, reader] = [await sharedStore(), await sharedStore()];
    const old = section('{"upc":"3","v":1}', { fetchedAt: Date.now() - 70_000 });
    reader.setMany([['product:refreshed', old]]);
    // Past its max age, memory's copy is only a fallback: with nothing fresher in Redis it is what the reader gets.
    expect((await reader.getMany(['product:refreshed']))[0]?.json).toBe(old.json);
    writer.setMany([['product:refreshed', section('{"upc":"3","v":2}')]]);
    await writer.flush();
    expect((await reader.getMany(['product:refreshed']))[0]?.json).toBe('{"upc":"3","v":2}');
  });

  it('does not share across prefixes (another schema hash is another cache)', async () => {
    const [writer, other] = [await sharedStore(), await sharedStore(OTHER_PREFIX)];
    writer.setMany([['product:3', section('{"upc":"3"}')]]);
    await writer.flush();
    expect(await other.getMany(['product:3'])).toEqual([undefined]);
  });

  it('deletes from Redis too', async () => {
    const [writer, reader] = [await sharedStore(), await sharedStore()];
    writer.setMany([['product:4', section('{"upc":"4"}')]]);
    await writer.flush();
    writer.deleteMany(['product:4']);
    await writer.flush();
    expect(await writer.getMany(['product:4'])).toEqual([undefined]);
    expect(await reader.getMany(['product:4'])).toEqual([undefined]);
  });

  it('misses a Redis entry past its life on the reader’s clock, without an error', async () => {
    const writer = await sharedStore();
    const onError = vi.fn();
    const reader = await sharedStore(PREFIX, { onError, now: () => Date.now() + 100_000 });
    writer.setMany([['product:5', section('{"upc":"5"}')]]);
    await writer.flush();
    expect(await reader.getMany(['product:5'])).toEqual([undefined]);
    expect(onError).not.toHaveBeenCalled();
  });

  it('reads a value that does not decode as a miss, and reports it, without opening the breaker', async () => {
    const onError = vi.fn();
    const [writer, reader] = [await sharedStore(), await sharedStore(PREFIX, { onError })];
    await raw.set(`${PREFIX}bad:1`, 'garbage', 'PX', 60_000);
    await raw.set(`${PREFIX}bad:2`, '[1,2]\n{}', 'PX', 60_000);
    writer.setMany([['good', section('{"ok":true}')]]);
    await writer.flush();
    for (let i = 0; i < 3; i++) expect((await reader.getMany(['bad:1', 'bad:2'])).every((s) => s === undefined)).toBe(true);
    expect(onError).toHaveBeenCalledTimes(6);
    expect(onError.mock.calls.every(([backend, error]) => backend === 'redis' && /cached section in Redis/.test(error.message))).toBe(true);
    expect((await reader.getMany(['good']))[0]?.json).toBe('{"ok":true}');
  });
});

describe('section store while Redis is down', () => {
  it('answers from memory at once, reports failures, then opens its breaker and reports nothing until it probes again', async () => {
    let time = 1_000_000;
    const onError = vi.fn();
    const down = await store({ url: DOWN_URL, prefix: PREFIX }, { onError, now: () => time });
    const started = Date.now();
    down.setMany([['a', section('{"a":1}', { fetchedAt: time })]]); // failure 1: the write cannot go out
    const [a, b] = await down.getMany(['a', 'b']); // failure 2
    expect(a?.json).toBe('{"a":1}');
    expect(b).toBeUndefined();
    expect(await down.getMany(['b'])).toEqual([undefined]); // failure 3: the breaker opens
    expect(onError).toHaveBeenCalledTimes(3);
    expect(onError.mock.calls.every(([backend]) => backend === 'redis')).toBe(true);

    for (let i = 0; i < 10; i++) {
      expect(await down.getMany(['a', 'b'])).toEqual([expect.objectContaining({ json: '{"a":1}' }), undefined]);
      down.setMany([[`c${i}`, section('{}', { fetchedAt: time })]]);
      down.deleteMany(['zzz']);
    }
    time += 4_999;
    await down.getMany(['b']);
    expect(onError).toHaveBeenCalledTimes(3); // skipped while open: not an error

    time += 1;
    await down.getMany(['b']); // the probe fails: open for another 5 s
    expect(onError).toHaveBeenCalledTimes(4);
    await down.getMany(['b']);
    down.setMany([['d', section('{}', { fetchedAt: time })]]);
    expect(onError).toHaveBeenCalledTimes(4);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('honours a configured breaker', async () => {
    let time = 0;
    const onError = vi.fn();
    const down = await store({ url: DOWN_URL, prefix: PREFIX, breaker: { failures: 1, openMs: 100 } }, { onError, now: () => time });
    await down.getMany(['x']);
    await down.getMany(['x']);
    expect(onError).toHaveBeenCalledTimes(1);
    time = 100;
    await down.getMany(['x']);
    expect(onError).toHaveBeenCalledTimes(2);
  });

  it('answers misses within its budget when Redis accepts the read but never replies (counted as an error)', async () => {
    const silent = await silentServer();
    // No handshake to wait for: RESP2, no CLIENT SETINFO, no ready check.
    const client = new Redis({ port: silent.port, host: '127.0.0.1', protocol: 2, disableClientInfo: true, enableReadyCheck: false, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => {});
    const onError = vi.fn();
    const slow = createSectionStore({ redis: { client, prefix: PREFIX, timeoutMs: 50 }, onError });
    try {
      expect(await slow.redisReady(5_000)).toBe(true);
      const started = Date.now();
      expect(await slow.getMany(['x', 'y'])).toEqual([undefined, undefined]);
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(onError).toHaveBeenCalledTimes(1);
      expect(onError.mock.calls[0][1]).toBeInstanceOf(RedisTimeoutError);
    } finally {
      client.disconnect(); // the store does not own it: closing the store leaves it open
      await slow.close();
      await silent.close();
    }
  });
});

/** A TCP server that takes connections and never answers a byte. */
async function silentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
