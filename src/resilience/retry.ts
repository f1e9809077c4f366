// Retries of failed subgraph queries: jittered backoff, only while time and the retry budget allow.
import type { RetryBudget } from './retry-budget.js';
import type { ExecutionResult } from 'graphql';
import { isUpstreamFailure, timeLeft, type CallWrapper, type SubgraphCall, type UpstreamFailure } from './subgraph-call.js';

export interface RetryOptions {
  /** Retries after the first attempt, at most. Default 2. */
  maxRetries?: number;
  /** The subgraph's extra-load budget (~10%), shared with hedging; every retry takes a token. */
  budget: RetryBudget;
  /**
   * The subgraph's typical latency in milliseconds (its p50), or `undefined` while unknown.
   * A retry is made only if more time than this is left after the backoff.
   */
  typicalLatencyMs: () => number | undefined;
  /** Backoff ceiling before the first retry, in milliseconds; doubles per retry. Also the time needed when the latency is unknown. Default 25. */
  baseDelayMs?: number;
  /** Highest backoff ceiling, in milliseconds. Default 250. */
  maxDelayMs?: number;
  /** Uniform random number in [0, 1). Default `Math.random`. */
  random?: () => number;
  /** Clock in milliseconds, on the same scale as `call.deadlineAt`. Default `performance.now`. */
  now?: () => number;
  /** Called just before each retry; `retryNumber` counts from 1. */
  onRetry?: (call: SubgraphCall, failure: UpstreamFailure, retryNumber: number) => void;
  /** Waits `ms` milliseconds, rejecting early if `signal` aborts. Default: a cleared-on-abort `setTimeout`. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/**
 * How a logical call is retried:
 * 1. The first attempt is made, and `budget.recordCall()` deposits the call's share of tokens
 *    (mutations too: they are load the budget is a share of).
 * 2. A failure is considered for retry only if it is an `UpstreamFailure` that is `retryable`
 *    (network, timeout, 502/503/504), the call is a query, fewer than `maxRetries` retries were made
 *    and the call's signal has not aborted. A GraphQL error is a result, not a failure, and is never
 *    retried; nor are `deadline`, `cancelled` and `circuit_open`, which are not retryable.
 * 3. The backoff uses "full jitter": `random() * min(maxDelayMs, baseDelayMs * 2 ** retryIndex)`.
 *    The retry is made only if the time left after the backoff exceeds the subgraph's typical
 *    latency (`baseDelayMs` while unknown), so it has a chance to finish, and the budget gives a
 *    token. Otherwise the last failure is rethrown.
 * 4. The backoff is slept, abortably: if the call's signal aborts meanwhile, the last failure is
 *    rethrown. Then `onRetry` is called and the next attempt is made with `attempt: 'retry'`.
 */
export function withRetry(options: RetryOptions): CallWrapper {
  const {
    maxRetries = 2,
    budget,
    typicalLatencyMs,
    baseDelayMs = 25,
    maxDelayMs = 250,
    random = Math.random,
    now = () => performance.now(),
    onRetry,
    sleep = abortableSleep,
  } = options;
  if (!Number.isInteger(maxRetries) || maxRetries < 0) throw new RangeError(`maxRetries must be a non-negative integer, got ${maxRetries}`);
  if (!(baseDelayMs >= 0) || !(maxDelayMs >= 0)) throw new RangeError(`baseDelayMs and maxDelayMs must be non-negative, got ${baseDelayMs} and ${maxDelayMs}`);

  return function retryWrapper(next) {
    /** After a failed attempt: retry while the rules allow, else rethrow the last failure. */
    async function retryAfter(call: SubgraphCall, firstFailure: unknown): Promise<ExecutionResult> {
      let error = firstFailure;
      for (let retries = 0; ; retries++) {
        if (!isUpstreamFailure(error) || !error.retryable || !call.isQuery || retries >= maxRetries || call.signal.aborted) throw error;
        const backoffMs = random() * Math.min(maxDelayMs, baseDelayMs * 2 ** retries);
        const neededMs = typicalLatencyMs() ?? baseDelayMs;
        if (timeLeft(call, now()) - backoffMs <= neededMs || !budget.tryWithdraw()) throw error;
        try {
          await sleep(backoffMs, call.signal);
        } catch {
          throw error;
        }
        if (call.signal.aborted) throw error;
        const attemptCall: SubgraphCall = { ...call, attempt: 'retry' };
        onRetry?.(attemptCall, error, retries + 1);
        try {
          return await next(attemptCall);
        } catch (failure) {
          error = failure;
        }
      }
    }
    // The first attempt's promise is returned as it is: a call that succeeds (nearly all) pays for no
    // async frame of its own here.
    return function callWithRetries(call) {
      budget.recordCall();
      let first: Promise<ExecutionResult>;
      try {
        first = next(call);
      } catch (error) {
        return retryAfter(call, error);
      }
      return first.catch((error: unknown) => retryAfter(call, error));
    };
  };
}

/** Resolves after `ms` milliseconds, or rejects with the signal's reason as soon as it aborts; leaves no timer or listener behind. */
function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(function backoffElapsed() {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    function onAbort() {
      clearTimeout(timer);
      reject(signal.reason);
    }
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
