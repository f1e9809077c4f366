// Token buckets shared by every router through Redis (one atomic script per draw), falling back to this process's own buckets while Redis does not answer.
import type { Redis } from 'ioredis';
import type { BucketDraw, BucketLimits, TokenBuckets } from './token-buckets.js';

/**
 * One draw, atomically on the Redis server (a script runs alone, so two routers drawing from one
 * bucket at once cannot both spend the last points). The same token bucket as memoryBuckets():
 * 1. Time is Redis's own clock (`TIME`), so routers with skewed clocks share one notion of "now".
 * 2. A missing bucket starts full; an existing one refills `rate` points per elapsed second, up to `burst`.
 * 3. Above zero points the draw is admitted and spends `cost` (possibly into debt); otherwise refused.
 * 4. The key expires once it would have refilled completely (plus a second): an idle client costs no memory.
 * Numbers go back as strings: Redis would truncate a Lua number to an integer.
 * (Scripts may call TIME since Redis 5, which replicates a script's effects, not the script.)
 */
const DRAW_SCRIPT = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1])
local at = tonumber(state[2])
if tokens == nil or at == nil then
  tokens = burst
else
  tokens = math.min(burst, tokens + math.max(0, now - at) / 1000 * rate)
end
local admitted = 0
if tokens > 0 then
  tokens = tokens - cost
  admitted = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) / rate * 1000) + 1000)
return { admitted, tostring(tokens) }
`;

/** Key prefix of the buckets in Redis. */
const BUCKET_KEY_PREFIX = 'switchyard:rate:';

export interface RedisBucketsOptions {
  redis: Redis;
  /** Buckets used while Redis does not answer (this process's own). */
  fallback: TokenBuckets;
  /** Called for every draw taken from the fallback (a metric). */
  onFallback?: () => void;
  /** Called once when Redis stops answering, with the error, and once when it answers again. */
  onOutage?: (error: Error) => void;
  onRecovery?: () => void;
  /** Redis did not answer at start (already reported): the first failed draw is not a new outage. */
  startsDown?: boolean;
}

type RedisWithDraw = Redis & { switchyardDraw(key: string, rate: number, burst: number, cost: number): Promise<[number, string]> };

/**
 * Draws from the bucket in Redis. When Redis does not answer (refused, not connected, a command
 * past its timeout), the draw is taken from the fallback buckets instead: the request is served under
 * a per-router limit rather than failed or left waiting (a rate limiter must never take serving down).
 * The outage is reported once, not per request; the fallback counts every draw.
 */
export function redisBuckets(options: RedisBucketsOptions): TokenBuckets {
  const { redis, fallback } = options;
  // defineCommand: EVALSHA, loading the script on NOSCRIPT (a restarted Redis) by itself.
  if (!('switchyardDraw' in redis)) redis.defineCommand('switchyardDraw', { numberOfKeys: 1, lua: DRAW_SCRIPT });
  const shared = redis as RedisWithDraw;
  let down = options.startsDown ?? false;
  return {
    async draw(key: string, cost: number, limits: BucketLimits): Promise<BucketDraw> {
      try {
        const [admitted, tokens] = await shared.switchyardDraw(BUCKET_KEY_PREFIX + key, limits.ratePerSecond, limits.burst, cost);
        if (down) {
          down = false;
          options.onRecovery?.();
        }
        return { admitted: admitted === 1, tokens: Number(tokens) };
      } catch (error) {
        if (!down) {
          down = true;
          options.onOutage?.(error as Error);
        }
        options.onFallback?.();
        return fallback.draw(key, cost, limits);
      }
    },
    async close() {
      redis.disconnect();
    },
  };
}
