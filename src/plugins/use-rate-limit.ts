// A cost-based rate limit per client: a bucket of cost points refilled per second, from the operation's policy; in this process, or in Redis shared by every router.
import type { Plugin } from 'graphql-yoga';
import { alsoOnSubscribe } from './subscribe-hooks.js';
import { requestError } from '../errors/client-error.js';
import { DEFAULT_POLICY, type PolicyBook } from '../registry/policy-store.js';
import { requestStateOf, type RequestState } from '../request/request-state.js';
import type { RouterMetrics } from '../telemetry/metrics.js';
import { memoryBuckets, type BucketDraw, type TokenBuckets } from './rate-limit/token-buckets.js';

export interface RateLimitOptions {
  policies: PolicyBook;
  metrics?: RouterMetrics;
  /** Where buckets live. Default: this process (memoryBuckets(), bounded by its `maxBuckets`, least recently used out first). */
  buckets?: TokenBuckets;
}

/** Who pays: the token's client id, else its subject, else the client's address. */
function clientKeyOf(context: Record<string, any>, state: RequestState = requestStateOf(context)): string {
  const principal = state.principal;
  if (principal?.clientId) return `client:${principal.clientId}`;
  if (principal?.subject && principal.subject !== 'anonymous') return `sub:${principal.subject}`;
  const address = context.req?.socket?.remoteAddress as string | undefined;
  return address ? `ip:${address}` : 'anonymous';
}

/**
 * 1. A bucket per (client, policy): operations with a policy of their own have their own bucket,
 *    the others share the `*` one.
 * 2. The bucket holds up to `cost_burst` points (default 10 × the rate) and refills `cost_rate_per_second`.
 * 3. A request is admitted while the bucket is not empty and spends its estimated cost, possibly going
 *    into debt (so a request costlier than the bucket is not refused forever); while the bucket is
 *    empty or in debt: 429 RATE_LIMITED with `Retry-After` (time until it is positive again).
 * Policies without a rate leave requests alone (and never reach the bucket store).
 */
export function useRateLimit(options: RateLimitOptions): Plugin {
  const { policies, metrics } = options;
  const buckets = options.buckets ?? memoryBuckets();
  return alsoOnSubscribe({
    onExecute({ args, setResultAndStopExecution }) {
      const state = requestStateOf(args.contextValue);
      const name = state.operationName;
      const limits = policies.resolve(name);
      const rate = limits.costRatePerSecond;
      if (!rate) return;
      const burst = limits.costBurst ?? rate * 10;
      // The estimate use-cost-limit (before this plugin) left in the request state.
      const cost = state.cost?.total ?? 1;
      const key = `${clientKeyOf(args.contextValue as Record<string, any>, state)}|${policies.hasOwn(name) ? name : DEFAULT_POLICY}`;
      const refuseWhenEmpty = (draw: BucketDraw) => {
        if (draw.admitted) return;
        const retryAfterMs = Math.ceil(((-draw.tokens + 1) / rate) * 1000);
        metrics?.rateLimited.inc({ operation: metrics.operationLabel(name) });
        setResultAndStopExecution({
          errors: [
            requestError('RATE_LIMITED', `Rate limit reached: this client spent its cost budget; retry after ${retryAfterMs} ms.`, {
              httpHeaders: { 'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) },
              extensions: { rateLimit: { cost, ratePerSecond: rate, burst, retryAfterMs } },
            }),
          ],
        });
      };
      const draw = buckets.draw(key, cost, { ratePerSecond: rate, burst });
      // In-process buckets answer at once: no promise, no extra tick on the request path.
      if (draw instanceof Promise) return draw.then(refuseWhenEmpty);
      refuseWhenEmpty(draw);
    },
  });
}
