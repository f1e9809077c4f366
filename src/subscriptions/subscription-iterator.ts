// A subscription read as an async iterator, for readers that pull (yoga's own result processors): a queue, and the end as those readers write it.
import type { ExecutionResult, GraphQLError } from 'graphql';
import type { ErrorCode } from '../errors/codes.js';
import type { ClientSubscription } from './client-subscription.js';

/** The extension a subscription's last payload carries when it ends with an error (the transports write it so). */
export interface EndedExtension {
  subscription: { ended: ErrorCode };
}

/** Events a reader may have waiting before the oldest is dropped (a live screen wants the latest). */
const MAX_WAITING_EVENTS = 256;

/**
 * The iterator over one subscription, for a reader other than the router's transports (they attach
 * a sink of their own: websocket-server.ts, http-subscriptions.ts). Yoga iterates it when it writes
 * the stream itself: an `Accept` the router's transports do not take (multipart without
 * `subscriptionSpec`), or a result processor of another server.
 * 1. It attaches its sink on the first `next()`, not before: a transport that takes the
 *    subscription over never pulls, and envelop asks for the iterator before that is known.
 * 2. Events wait in a queue of MAX_WAITING_EVENTS, the oldest dropped first.
 * 3. The end, as such a reader writes it: an error is a last payload carrying it and
 *    `extensions.subscription.ended` with its code; SHUTTING_DOWN is thrown instead, so the stream
 *    is cut without an end and its client reconnects (to another router), as SSE's is.
 * 4. `return()` (the reader stopped, its client left) cancels the subscription.
 */
export class SubscriptionIterator implements AsyncIterableIterator<ExecutionResult> {
  readonly #subscription: ClientSubscription;
  readonly #queue: ExecutionResult[] = [];
  #attached = false;
  #end: { error: GraphQLError | undefined; read: () => void } | undefined;
  #done = false;
  #wake: (() => void) | undefined;

  constructor(subscription: ClientSubscription) {
    this.#subscription = subscription;
  }

  async next(): Promise<IteratorResult<ExecutionResult>> {
    if (!this.#attached) this.#attach();
    for (;;) {
      const value = this.#queue.shift();
      if (value !== undefined) return { value, done: false };
      if (this.#done) return { value: undefined, done: true };
      if (this.#end) return this.#last(this.#end);
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }

  async return(): Promise<IteratorResult<ExecutionResult>> {
    this.#done = true;
    this.#queue.length = 0;
    this.#subscription.cancel();
    this.#end?.read();
    return { value: undefined, done: true };
  }

  async throw(): Promise<IteratorResult<ExecutionResult>> {
    return this.return();
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<ExecutionResult> {
    return this;
  }

  #attach(): void {
    this.#attached = true;
    this.#subscription.attach({
      // Taken (true): queued for the reader; the oldest waiting goes first when the queue is full.
      next: (event) => {
        if (this.#queue.length >= MAX_WAITING_EVENTS) {
          this.#queue.shift();
          this.#subscription.dropped();
        }
        this.#queue.push(event);
        this.#wakeUp();
        return true;
      },
      end: (error) =>
        new Promise<void>((read) => {
          this.#end = { error, read };
          this.#wakeUp();
        }),
    });
  }

  /** 3. After the queue: the error as the last payload (or thrown), then done. */
  #last(end: { error: GraphQLError | undefined; read: () => void }): IteratorResult<ExecutionResult> {
    this.#done = true;
    end.read();
    if (!end.error) return { value: undefined, done: true };
    const code = String(end.error.extensions.code) as ErrorCode;
    if (code === 'SHUTTING_DOWN') throw end.error;
    return { value: { errors: [end.error], extensions: { subscription: { ended: code } } satisfies EndedExtension }, done: false };
  }

  #wakeUp(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
