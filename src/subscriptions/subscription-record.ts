// A subscription's stream record on its request state: its payloads counted and timed, and its end, for metrics, audit and telemetry.
import type { RequestState } from '../request/request-state.js';

/**
 * Opens the record: the request's answer is the stream, so audit, telemetry and metrics write their
 * records at its end (`RequestState.whenAnswered`). Returns what settles `ended`: called once the
 * last payload went out, or the client left.
 */
export function openRecord(state: RequestState): () => void {
  let resolve!: () => void;
  const ended = new Promise<void>((r) => (resolve = r));
  state.stream = { ended, payloads: 0, firstAt: undefined, lastAt: undefined, errorCodes: [], complete: true };
  return resolve;
}

/** One payload went out to the client. */
export function recordPayload(state: RequestState): void {
  const stream = state.stream;
  if (!stream) return;
  stream.payloads++;
  stream.lastAt = performance.now();
  stream.firstAt ??= stream.lastAt;
}

/** The subscription ended: why (`client`, `complete` or a code), and the error's code when the client is told one. */
export function recordEnd(state: RequestState, reason: string, errorCode: string | undefined): void {
  const stream = state.stream;
  if (!stream) return;
  stream.endReason = reason;
  if (errorCode === undefined) return;
  stream.errorCodes.push(errorCode);
  stream.complete = false;
}
