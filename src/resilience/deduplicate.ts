// Identical queries in flight to one subgraph share one call: the first caller's, while it runs.
import type { ExecutionResult } from 'graphql';
import { failureFromAbort, isUpstreamFailure, timeLeft, type CallWrapper, type SubgraphCall } from './subgraph-call.js';

export interface DeduplicationOptions {
  /** The bytes that make two calls identical (document, variables, headers), or undefined to never share this one. */
  keyOf: (call: SubgraphCall) => string | undefined;
  /**
   * A result for a caller that joined: its own copy, since the stitching layer annotates result
   * objects per request. Typically a fresh parse of the body the subgraph sent.
   */
  copy: (result: ExecutionResult) => ExecutionResult;
  /** Told when a call joined one in flight instead of calling the subgraph. */
  onShared?: (call: SubgraphCall) => void;
  now?: () => number;
}

interface InFlight {
  readonly promise: Promise<ExecutionResult>;
  readonly deadlineAt: number;
}

/**
 * Placed after the per-subgraph token (the key holds the headers, so callers whose tokens differ
 * never share) and before retries and hedges (a shared call is the whole logical call):
 * 1. Mutations are never shared.
 * 2. A query whose key is in flight joins it when its own deadline is no earlier than the running
 *    call's (so the shared call never outlives what the joiner may wait); otherwise it calls itself.
 * 3. A joiner that leaves (its client went away) stops waiting at once; the call goes on for the others.
 * 4. If the shared call was cancelled or ran out of its caller's deadline, a joiner with time left
 *    makes its own call: another request's disconnect or deadline never fails this one.
 * 5. The entry is removed when the call settles: only calls in flight are shared, nothing is cached.
 */
export function withDeduplication(options: DeduplicationOptions): CallWrapper {
  const { keyOf, copy, onShared } = options;
  const now = options.now ?? (() => performance.now());
  const inFlight = new Map<string, InFlight>();
  return (next) =>
    function callOnceForAll(call) {
      if (!call.isQuery) return next(call);
      const key = keyOf(call);
      if (key === undefined) return next(call);
      const running = inFlight.get(key);
      if (running && running.deadlineAt <= call.deadlineAt) {
        onShared?.(call);
        return join(running, call);
      }
      const promise = next(call);
      if (!running) {
        const entry: InFlight = { promise, deadlineAt: call.deadlineAt };
        inFlight.set(key, entry);
        const settle = () => {
          if (inFlight.get(key) === entry) inFlight.delete(key);
        };
        promise.then(settle, settle);
      }
      return promise;

      async function join(shared: InFlight, joiner: SubgraphCall): Promise<ExecutionResult> {
        try {
          return copy(await untilAborted(shared.promise, joiner.signal));
        } catch (error) {
          if (joiner.signal.aborted) throw failureFromAbort(joiner.signal.reason, joiner.subgraph);
          if (isUpstreamFailure(error) && (error.kind === 'cancelled' || error.kind === 'deadline') && timeLeft(joiner, now()) > 0) return next(joiner);
          throw error;
        }
      }
    };
}

/** `promise`, or a rejection as soon as `signal` aborts (the promise itself goes on). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
