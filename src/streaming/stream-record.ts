// The record of a streamed answer (a deferred query's payloads, a subscription's events): what metrics, audit, telemetry and the queue read at its end.
import type { GraphQLError } from 'graphql';
import type { RequestState, StreamRecord } from '../request/request-state.js';

/**
 * Writes a request's `StreamRecord` (request-state.ts): `sent` counts and times each payload,
 * `ended` settles once, whoever ends the stream first. `whenAnswered` waits for it, so the audit
 * row, the access line, the request span, the duration and the queue place are written and released
 * once, at the stream's end, for `@defer` and subscriptions alike.
 */
export class StreamRecorder implements StreamRecord {
  readonly ended: Promise<void>;
  payloads = 0;
  firstAt: number | undefined = undefined;
  lastAt: number | undefined = undefined;
  readonly errorCodes: string[] = [];
  complete: boolean;
  endReason: string | undefined = undefined;
  #resolve!: () => void;
  readonly #until: AbortSignal | undefined;

  /**
   * Opens the stream of `state`'s answer. `complete` is what a stream without payloads is (a
   * subscription that ends without an error is whole). With `until`, the stream ends at once when
   * it fires (a client that leaves a deferred query frees its queue place and gets its audit row then,
   * whatever the payloads still wait for).
   */
  constructor(state: RequestState, options: { complete: boolean; until?: AbortSignal }) {
    this.ended = new Promise<void>((resolve) => (this.#resolve = resolve));
    this.complete = options.complete;
    this.#until = options.until;
    this.#until?.addEventListener('abort', this.#resolve, { once: true });
    state.stream = this;
  }

  /** A payload went out: its errors' codes are kept, and, when given, whether the answer so far is whole. */
  sent(errors?: readonly GraphQLError[], complete?: boolean): void {
    const now = performance.now();
    if (complete !== undefined) this.complete = complete;
    for (const error of errors ?? []) this.errorCodes.push(codeOf(error));
    this.payloads++;
    this.firstAt ??= now;
    this.lastAt = now;
  }

  /** Why a subscription ends (`client`, `complete`, or its error's code), noted once; an error makes the answer not whole. */
  endedBy(reason: string, error?: GraphQLError): void {
    if (this.endReason !== undefined) return;
    this.endReason = reason;
    if (!error) return;
    this.errorCodes.push(codeOf(error));
    this.complete = false;
  }

  /** The stream is over: `ended` settles (once, whoever ends it first). */
  end(): void {
    this.#until?.removeEventListener('abort', this.#resolve);
    this.#resolve();
  }
}

function codeOf(error: GraphQLError): string {
  return String(error.extensions?.code ?? 'INTERNAL_SERVER_ERROR');
}
