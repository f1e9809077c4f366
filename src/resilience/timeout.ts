// The per-attempt timeout: min(the subgraph's own timeout, the time left before the request deadline).
import { CallAborted, failureFromAbort, timeLeft, type CallWrapper } from './subgraph-call.js';

/**
 * 1. Refuse at once if the request's signal already fired or no time is left.
 * 2. Give the attempt its own signal that fires after `min(timeoutMs, time left)`, or when the
 *    request's signal fires (deadline, client gone) or the caller's (hedge loser).
 * 3. If the attempt ends because that signal fired, the failure says why: SUBGRAPH_TIMEOUT when the
 *    subgraph's own timeout passed, DEADLINE_EXCEEDED when the request's deadline did, cancelled otherwise.
 * The timer and the listener are released however the attempt ends.
 */
export function withTimeout(timeoutMs: number): CallWrapper {
  return (next) =>
    async function callWithTimeout(call) {
      if (call.signal.aborted) throw failureFromAbort(call.signal.reason, call.subgraph);
      const left = timeLeft(call);
      if (left <= 0) throw failureFromAbort(new CallAborted('deadline'), call.subgraph);
      const ownTimeout = timeoutMs < left;
      const controller = new AbortController();
      call.onAbortable?.((reason) => controller.abort(reason));
      const forward = () => controller.abort(call.signal.reason);
      call.signal.addEventListener('abort', forward, { once: true });
      const timer = setTimeout(() => controller.abort(new CallAborted(ownTimeout ? 'timeout' : 'deadline')), ownTimeout ? timeoutMs : left);
      try {
        return await next({ ...call, signal: controller.signal, onAbortable: undefined });
      } catch (error) {
        if (controller.signal.aborted) throw failureFromAbort(controller.signal.reason, call.subgraph);
        throw error;
      } finally {
        clearTimeout(timer);
        call.signal.removeEventListener('abort', forward);
      }
    };
}
