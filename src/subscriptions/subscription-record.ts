// A subscription's stream record on its request state: its payloads counted and timed, and its end, for metrics, audit and telemetry.
import type { GraphQLError } from 'graphql';
import type { RequestState, StreamRecord } from '../request/request-state.js';

/**
 * Writes a subscription's `StreamRecord` (request-state.ts): the request's answer is the stream, so
 * audit, telemetry and metrics write their records at its end (`RequestState.whenAnswered`). Its
 * surface (`sent`, `endedBy`, `end`) is the shared stream record's of the streaming layer, which
 * replaces this file.
 */
export class SubscriptionRecord implements StreamRecord {
  readonly ended: Promise<void>;
  payloads = 0;
  firstAt: number | undefined = undefined;
  lastAt: number | undefined = undefined;
  readonly errorCodes: string[] = [];
  /** A subscription that ends without an error is whole. */
  complete = true;
  endReason: string | undefined = undefined;
  #resolve!: () => void;

  constructor(state: RequestState) {
    this.ended = new Promise<void>((resolve) => (this.#resolve = resolve));
    state.stream = this;
  }

  /** A payload went out to the client. */
  sent(): void {
    this.payloads++;
    this.lastAt = performance.now();
    this.firstAt ??= this.lastAt;
  }

  /** Why the subscription ends (`client`, `complete`, or its error's code), noted once; an error makes the answer not whole. */
  endedBy(reason: string, error?: GraphQLError): void {
    if (this.endReason !== undefined) return;
    this.endReason = reason;
    if (!error) return;
    this.errorCodes.push(String(error.extensions.code));
    this.complete = false;
  }

  /** The stream is over (the client has its last payload, or left): `ended` settles. */
  end(): void {
    this.#resolve();
  }
}
