// The section cache's storage: this router's memory first, then Redis shared by every router when configured.
import type { Redis } from 'ioredis';
import { configDefaults } from '../config/schema.js';
import type { CachedSection } from './cached-section.js';
import { newFailFastRedisClient } from './redis-client.js';
import { MemorySections, expiresAt, isFresh } from './memory-sections.js';
import { RedisSections, type RedisBreakerOptions } from './redis-sections.js';

export type { CachedSection };

export interface SectionStore {
  /**
   * Sections by key, in the same order; undefined for a miss or an entry past fetchedAt+maxAgeMs+staleMs.
   * Answered at once (no promise) when memory decides every key, which is always the case without Redis.
   * Never throws or rejects; never waits on Redis longer than its budget.
   */
  getMany(keys: readonly string[]): (CachedSection | undefined)[] | Promise<(CachedSection | undefined)[]>;
  /** Stores sections: memory at once, Redis in the background (pipelined, TTL = maxAge + stale, less the time since fetchedAt). Never throws; Redis errors only counted. */
  setMany(entries: readonly (readonly [key: string, section: CachedSection])[]): void;
  /** Removes keys from memory (and Redis, background). */
  deleteMany(keys: readonly string[]): void;
  /** Bytes held in memory now (for the `switchyard_cache_bytes` gauge). */
  readonly bytes: number;
  /**
   * True once Redis is connected (at once if it is), false after `waitMs` (default 2000) or without Redis.
   * Await it before serving: a read while the client is still connecting counts as a Redis failure.
   */
  redisReady(waitMs?: number): Promise<boolean>;
  /** Resolves once every Redis write and delete started so far has been answered or has failed (tests, shutdown). Never rejects. */
  flush(): Promise<void>;
  /** Finishes pending Redis writes, then closes the Redis connection if the store opened it. */
  close(): Promise<void>;
}

export interface SectionStoreOptions {
  /** Memory bound in bytes; least recently used go first. Default: the config's `cacheMaxBytes`. */
  maxBytes?: number;
  /** Redis shared by all routers; absent: memory only. Either a URL (the store opens and owns an ioredis client) or a client. */
  redis?: {
    url?: string;
    client?: Redis;
    /** Key prefix, e.g. `switchyard:cache:<schema hash>:`; keys are prefix + key. */
    prefix: string;
    /** Longest wait for a Redis read, ms. Default 50. */
    timeoutMs?: number;
    /** When Redis is skipped after failures. Default: 3 consecutive failures skip it for 5000 ms. */
    breaker?: RedisBreakerOptions;
  };
  /** Told of each Redis failure (timeout, error, refused while its breaker is open is NOT an error): for `switchyard_cache_errors_total{backend="redis"}`. */
  onError?: (backend: 'redis' | 'memory', error: Error) => void;
  now?: () => number;
}

/** A cache read must cost a request little even when Redis is slow: past this, memory alone answers. */
const DEFAULT_REDIS_READ_TIMEOUT_MS = 50;
/** Background writes of a client the store opened give up after this (so flush and close cannot hang on a stalled Redis). */
const OWNED_CLIENT_COMMAND_TIMEOUT_MS = 1_000;
const OWNED_CLIENT_CONNECT_TIMEOUT_MS = 2_000;

/**
 * getMany, in order:
 * 1. Memory answers what it holds and has not seen expire (each hit becomes the most recently used).
 * 2. The keys it missed, or holds only as stale, go to Redis in one MGET, unless Redis is not configured, its breaker is open or
 *    its client is not connected; the read waits at most the budget, after which they stay misses.
 * 3. A Redis hit still alive is copied into memory with its original fetchedAt (its age is the data's,
 *    not the copy's), unless memory meanwhile got a section fetched as late or later.
 * setMany keeps nothing already past its life. deleteMany does not wait for Redis either.
 */
export function createSectionStore(options: SectionStoreOptions = {}): SectionStore {
  const now = options.now ?? Date.now;
  const memory = new MemorySections(options.maxBytes ?? configDefaults.cacheMaxBytes);
  const report = reporter(options.onError);
  const redis = options.redis ? openRedis(options.redis, now, report) : undefined;

  async function readThrough(keys: readonly string[], found: (CachedSection | undefined)[], shared: RedisSections): Promise<void> {
    const at = now();
    // A copy memory holds only as stale may have a fresh successor another router stored.
    const wanted = (section: CachedSection | undefined) => section === undefined || !isFresh(section, at);
    const missing = [...new Set(keys.filter((_, index) => wanted(found[index])))];
    if (missing.length === 0) return;
    const fromRedis = await shared.read(missing);
    if (fromRedis.size === 0) return;
    for (const [index, key] of keys.entries()) {
      const current = found[index];
      const section = wanted(current) ? fromRedis.get(key) : undefined;
      if (!section || expiresAt(section) <= at || (current && current.fetchedAt >= section.fetchedAt)) continue;
      found[index] = section;
      const held = memory.peek(key);
      if (!held || held.fetchedAt < section.fetchedAt) memory.set(key, section);
    }
  }

  return {
    getMany(keys) {
      const found: (CachedSection | undefined)[] = [];
      let fresh = 0;
      try {
        const at = now();
        for (const key of keys) {
          const section = memory.get(key, at);
          if (section && isFresh(section, at)) fresh += 1;
          found.push(section);
        }
      } catch (error) {
        // Not expected (the tiers do not throw); a cache must still never fail a request.
        report('memory', error);
        return keys.map(() => undefined);
      }
      // A promise (and its turns of the event loop) only when Redis may add something.
      if (!redis || fresh === keys.length) return found;
      return readThrough(keys, found, redis).then(
        () => found,
        (error: unknown) => {
          report('memory', error);
          return found;
        },
      );
    },
    setMany(entries) {
      try {
        const at = now();
        const alive = entries.filter(([, section]) => expiresAt(section) > at);
        for (const [key, section] of alive) memory.set(key, section);
        redis?.write(alive);
      } catch (error) {
        report('memory', error);
      }
    },
    deleteMany(keys) {
      try {
        for (const key of keys) memory.delete(key);
        redis?.delete(keys);
      } catch (error) {
        report('memory', error);
      }
    },
    get bytes() {
      return memory.bytes;
    },
    async redisReady(waitMs = OWNED_CLIENT_CONNECT_TIMEOUT_MS) {
      return redis ? redis.ready(waitMs) : false;
    },
    async flush() {
      await redis?.flush();
    },
    async close() {
      await redis?.close();
    },
  };
}

type Report = (backend: 'redis' | 'memory', error: unknown) => void;

/** onError, guarded: a metric callback that throws must not turn a cache miss into a failed request. */
function reporter(onError: SectionStoreOptions['onError']): Report {
  return function report(backend, error) {
    try {
      onError?.(backend, error instanceof Error ? error : new Error(String(error)));
    } catch {
      // Nothing else to tell.
    }
  };
}

function openRedis(config: NonNullable<SectionStoreOptions['redis']>, now: () => number, report: Report): RedisSections {
  const client = config.client ?? connect(config.url);
  return new RedisSections({
    client,
    ownsClient: config.client === undefined,
    prefix: config.prefix,
    timeoutMs: config.timeoutMs ?? DEFAULT_REDIS_READ_TIMEOUT_MS,
    breaker: config.breaker,
    now,
    onError: (error) => report('redis', error),
  });
}

/** A client the store owns, opened as the rate limiter opens its own (fail fast, reconnect in the background: redis-client.ts). */
function connect(url: string | undefined): Redis {
  if (!url) throw new Error('section store: redis needs a url or a client');
  // Failures are reported per command through onError (then skipped by the breaker).
  return newFailFastRedisClient(url, { commandTimeoutMs: OWNED_CLIENT_COMMAND_TIMEOUT_MS, connectTimeoutMs: OWNED_CLIENT_CONNECT_TIMEOUT_MS });
}
