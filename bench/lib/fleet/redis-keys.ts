// Deletes a run's own keys from a shared Redis (SCAN, never KEYS or FLUSH: other tests use the same server).
import { Redis } from 'ioredis';

/** Deletes every key matching one of `patterns` (SCAN MATCH syntax); returns how many. */
export async function deleteRedisKeys(url: string, patterns: readonly string[]): Promise<number> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  let deleted = 0;
  try {
    await redis.connect();
    for (const pattern of patterns) {
      for await (const keys of redis.scanStream({ match: pattern, count: 1_000 }) as AsyncIterable<string[]>) {
        if (keys.length > 0) deleted += await redis.unlink(...keys);
      }
    }
  } finally {
    redis.disconnect();
  }
  return deleted;
}
