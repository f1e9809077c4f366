// Rate-limit buckets shared by every router through Redis, falling back to this process's own while Redis does not answer.
import { newFailFastRedisClient } from '../cache/redis-client.js';
import { memoryBuckets, type TokenBuckets } from '../plugins/rate-limit/token-buckets.js';
import { redisBuckets } from '../plugins/rate-limit/redis-buckets.js';
import type { Logger } from '../telemetry/logger.js';
import type { RouterMetrics } from '../telemetry/metrics.js';

/** How long a rate-limit draw may wait for Redis before the router decides with its own buckets, in ms. */
const REDIS_COMMAND_TIMEOUT_MS = 250;
/** How long start-up waits for Redis to answer; the router starts anyway (on its own buckets) if it does not. */
const REDIS_CONNECT_WAIT_MS = 2_000;

/**
 * Rate-limit buckets in Redis, shared by every router. Commands fail at once while disconnected (no
 * offline queue) and after REDIS_COMMAND_TIMEOUT_MS, so a Redis outage costs a request at most that
 * long; the client keeps reconnecting in the background. Draws during an outage come from this
 * process's buckets, counted in switchyard_rate_limit_fallbacks_total; the outage is logged once.
 */
export async function connectRateLimitBuckets(url: string, metrics: RouterMetrics, logger: Logger): Promise<TokenBuckets> {
  // Connection errors are reported by the buckets (once per outage).
  const redis = newFailFastRedisClient(url, { commandTimeoutMs: REDIS_COMMAND_TIMEOUT_MS, connectTimeoutMs: REDIS_CONNECT_WAIT_MS });
  const ready = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => done(false), REDIS_CONNECT_WAIT_MS);
    const onReady = () => done(true);
    const done = (value: boolean) => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      resolve(value);
    };
    redis.once('ready', onReady);
  });
  if (!ready) logger.warn('rate limit: Redis does not answer; limits are per router instance until it does');
  return redisBuckets({
    redis,
    fallback: memoryBuckets(),
    startsDown: !ready,
    onFallback: () => metrics.rateLimitFallbacks.inc(),
    onOutage: (error) => logger.warn({ err: error }, 'rate limit: Redis does not answer; limits are per router instance until it does'),
    onRecovery: () => logger.info('rate limit: Redis answers again; buckets are shared by every router'),
  });
}
