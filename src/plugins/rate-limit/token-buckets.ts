// Token buckets of the cost rate limit, kept in this process: the shared store's fallback, and the only store without Redis.
import { BoundedMap } from '../../cache/bounded-map.js';

/** What one request's draw from a bucket decided. */
export interface BucketDraw {
  admitted: boolean;
  /** Points left after the draw (admitted) or now (refused; zero or less, a debt to repay). */
  tokens: number;
}

export interface BucketLimits {
  /** Points refilled per second. */
  ratePerSecond: number;
  /** Most points the bucket holds. */
  burst: number;
}

/** Where buckets live: this process, or Redis shared by every router. */
export interface TokenBuckets {
  draw(key: string, cost: number, limits: BucketLimits): BucketDraw | Promise<BucketDraw>;
  /** Releases connections (the caller owns the store). */
  close?(): Promise<void>;
}

export interface MemoryBucketsOptions {
  /**
   * Buckets kept (least recently used dropped first). Default 100000: more than the callers one router
   * meets within a refill; a dropped bucket comes back full, so only a caller idle long enough to be
   * the least recently used of them all can gain a burst from it.
   */
  maxBuckets?: number;
  /** Clock in ms. Default Date.now. */
  now?: () => number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/**
 * The token bucket, in memory:
 * 1. A new bucket starts full (`burst` points).
 * 2. On each draw it first refills `ratePerSecond` points per elapsed second, up to `burst`.
 * 3. While it holds more than zero points, the draw is admitted and spends `cost`, possibly going into
 *    debt (so a request costlier than the bucket is not refused forever); otherwise it is refused and
 *    spends nothing.
 * The Lua script in redis-buckets.ts is the same algorithm; keep them in step.
 */
export function memoryBuckets(options: MemoryBucketsOptions = {}): TokenBuckets {
  const now = options.now ?? Date.now;
  const maxBuckets = options.maxBuckets ?? 100_000;
  const buckets = new BoundedMap<string, Bucket>(maxBuckets);
  return {
    draw(key, cost, { ratePerSecond, burst }) {
      const at = now();
      let bucket = buckets.get(key);
      if (bucket) {
        bucket.tokens = Math.min(burst, bucket.tokens + (Math.max(0, at - bucket.updatedAt) / 1000) * ratePerSecond);
        bucket.updatedAt = at;
      } else {
        buckets.set(key, (bucket = { tokens: burst, updatedAt: at }));
      }
      if (bucket.tokens <= 0) return { admitted: false, tokens: bucket.tokens };
      bucket.tokens -= cost;
      return { admitted: true, tokens: bucket.tokens };
    },
  };
}
