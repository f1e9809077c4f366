// Hedged subgraph queries: a backup attempt when the first is slower than usual; the first answer wins.
import { withdrawAll, type RetryBudget } from './retry-budget.js';
import { CallAborted, isUpstreamFailure, timeLeft, type CallWrapper, type SubgraphCall } from './subgraph-call.js';
import type { ExecutionResult } from 'graphql';

export interface HedgingOptions {
  /**
   * How long the first attempt may run before a backup is considered, in milliseconds: the
   * subgraph's p95. `undefined` (not enough data yet) means no hedging.
   */
  delayMs: () => number | undefined;
  /** Lowest hedge delay, in milliseconds, so a very fast subgraph is not hedged on noise. Default 10. */
  floorMs?: number;
  /** The subgraph's extra-load budget (~10%), shared with retries; every hedge takes a token. */
  extra: RetryBudget;
  /** The subgraph's hedge budget (~5%); every hedge also takes a token from it. */
  hedges: RetryBudget;
  /**
   * Also deposit into `extra` per logical call. Default false: `withRetry`, which sits outside this
   * wrapper, already does. Set it when hedging is used without retries.
   */
  recordExtraCall?: boolean;
  /** Clock in milliseconds, on the same scale as `call.deadlineAt`. Default `performance.now`. */
  now?: () => number;
  /** Called when a backup attempt starts, with that attempt's call. Runs in a timer callback: must not throw. */
  onHedge?: (call: SubgraphCall) => void;
  /** Called instead when the delay passed but the timer fired too late to blame the subgraph (see step 3). */
  onBusy?: (call: SubgraphCall) => void;
  /**
   * How the loser is aborted. `hook` (default, the executor's stack): the attempts keep the call's
   * signal and the attempt owner inside (withTimeout) hands back the abort of its own controller
   * through `call.onAbortable`: no controller and no listener per call here, and only valid with
   * withTimeout inside. `controller`: each attempt gets its own AbortController linked to the call's
   * signal, for a stack without withTimeout inside.
   */
  abortVia?: 'controller' | 'hook';
}

/**
 * How a query is hedged:
 * 1. Mutations pass straight through. A query's first attempt (`attempt: 'first'`, not a retry)
 *    deposits into `hedges` (and into `extra` if `recordExtraCall`). Without a delay (too little
 *    data), or with too little time left for a backup ever to start, the query passes through.
 * 2. Each attempt can be aborted alone: through the abort its attempt owner hands back (`hook`), or
 *    through its own AbortController, aborted (with the same reason) if the call's signal aborts
 *    (`controller`).
 * 3. After `max(floorMs, delayMs())` ms, if the first attempt has not settled, more time than that
 *    delay is left, and both budgets give a token (`withdrawAll(extra, hedges)`), one backup starts
 *    with `attempt: 'hedge'`, abortable alone as well, and `onHedge` is called. Unless the timer itself
 *    fired late (by more than `max(5 ms, delay / 4)`): then this process's event loop was too busy to
 *    run it in time, the first attempt's answer may be waiting unread in its socket, and a backup
 *    would only queue behind the same work, so none starts (`onBusy`). Without that check a
 *    saturated router hedged about 1% of its calls (every loser a cancelled request and a new
 *    connection) for no gain: its slowness was its own, not the subgraph's.
 * 4. The first attempt to resolve wins; the other one is aborted with
 *    `CallAborted('superseded')`, so its HTTP request is cancelled (and it ends `cancelled`). A
 *    failure while the other attempt still runs waits for it; when both fail, the first attempt's
 *    failure is rethrown, unless it is `cancelled` and the backup's is not.
 * 5. When it settles, the hedge timer is cleared and the abort listener removed, whatever happened.
 *
 * With `controller`, the attempts are linked to the call's signal by one listener removed at the end,
 * rather than by `AbortSignal.any`, which Node has been reported to leak with (nodejs/node#55351, #54614).
 */
/** A hedge timer this late (at least) says the event loop was busy, not that the subgraph was slow. */
const BUSY_LATENESS_MS = 5;

export function withHedging(options: HedgingOptions): CallWrapper {
  const { delayMs, floorMs = 10, extra, hedges, recordExtraCall = false, now = () => performance.now(), onHedge, onBusy } = options;
  const viaHook = (options.abortVia ?? 'hook') === 'hook';
  if (!(floorMs >= 0)) throw new RangeError(`floorMs must be non-negative, got ${floorMs}`);

  return function hedgingWrapper(next) {
    return function callWithHedge(call) {
      if (!call.isQuery) return next(call);
      if (call.attempt === 'first') {
        hedges.recordCall();
        if (recordExtraCall) extra.recordCall();
      }
      const typicalSlowMs = delayMs();
      if (typicalSlowMs === undefined || !Number.isFinite(typicalSlowMs) || call.signal.aborted) return next(call);
      const waitMs = Math.max(floorMs, typicalSlowMs);
      const startedAt = now();
      // At the timer, at least waitMs will have passed: a backup would need more than waitMs left then.
      if (timeLeft(call, startedAt) <= 2 * waitMs) return next(call);
      // No token in either budget: no hedge can start, so spare the controller, listener and timer.
      if (!extra.canWithdraw() || !hedges.canWithdraw()) return next(call);

      const dueAt = startedAt + waitMs;
      return new Promise<ExecutionResult>((resolve, reject) => {
        // Each attempt's abort: its own controller, or (hook mode) what its attempt owner hands back.
        const first = attemptHandle(call, viaHook);
        let backup: AttemptHandle | undefined;
        let timer: ReturnType<typeof setTimeout> | undefined;
        let running = 1;
        let settled = false;
        let firstFailure: unknown;
        let backupFailure: { error: unknown } | undefined;

        function onCallAbort() {
          first.abort(call.signal.reason);
          backup?.abort(call.signal.reason);
        }
        function finish() {
          settled = true;
          clearTimeout(timer);
          if (!viaHook) call.signal.removeEventListener('abort', onCallAbort);
        }
        function win(result: ExecutionResult, loser: AttemptHandle | undefined) {
          if (settled) return;
          finish();
          loser?.abort(new CallAborted('superseded'));
          resolve(result);
        }
        function attemptFailed() {
          if (settled || --running > 0) return;
          finish();
          reject(backupFailure && isCancelled(firstFailure) && !isCancelled(backupFailure.error) ? backupFailure.error : firstFailure);
        }

        // In hook mode the attempt owners already listen to the call's signal.
        if (!viaHook) call.signal.addEventListener('abort', onCallAbort, { once: true });
        timer = setTimeout(function hedgeDelayElapsed() {
          timer = undefined;
          const firedAt = now();
          if (settled || call.signal.aborted || timeLeft(call, firedAt) <= waitMs) return;
          if (firedAt - dueAt > Math.max(BUSY_LATENESS_MS, waitMs / 4)) {
            onBusy?.(call);
            return;
          }
          if (!withdrawAll(extra, hedges)) return;
          const handle = attemptHandle(call, viaHook);
          backup = handle;
          const hedgeCall: SubgraphCall = { ...handle.call, attempt: 'hedge' };
          running++;
          start(next, hedgeCall).then(
            function backupResolved(result) {
              win(result, first);
            },
            function backupFailed(error: unknown) {
              backupFailure = { error };
              attemptFailed();
            },
          );
          onHedge?.(hedgeCall);
        }, waitMs);

        start(next, first.call).then(
          function firstResolved(result) {
            win(result, backup);
          },
          function firstFailed(error: unknown) {
            firstFailure = error;
            attemptFailed();
          },
        );
      });
    };
  };
}

interface AttemptHandle {
  readonly call: SubgraphCall;
  abort(reason: unknown): void;
}

/** One racing attempt's call and the way to abort it alone. */
function attemptHandle(call: SubgraphCall, viaHook: boolean): AttemptHandle {
  if (viaHook) {
    let abort: ((reason: unknown) => void) | undefined;
    return {
      call: { ...call, onAbortable: (fn) => (abort = fn) },
      abort: (reason) => abort?.(reason),
    };
  }
  const controller = new AbortController();
  return { call: { ...call, signal: controller.signal }, abort: (reason) => controller.abort(reason) };
}

/** Calls the handler, turning a synchronous throw into a rejection. */
function start(next: (call: SubgraphCall) => Promise<ExecutionResult>, call: SubgraphCall): Promise<ExecutionResult> {
  try {
    return next(call);
  } catch (error) {
    return Promise.reject(error);
  }
}

function isCancelled(error: unknown): boolean {
  return isUpstreamFailure(error) && error.kind === 'cancelled';
}
