// One client's subscription: the events its group completes, pushed to the sink its transport attached, and its end.
import type { DocumentNode, ExecutionResult, GraphQLError } from 'graphql';
import { requestError } from '../errors/client-error.js';
import type { ErrorCode } from '../errors/codes.js';
import type { QueryPlan } from '../gateway/plan/plan-types.js';
import type { RequestState } from '../request/request-state.js';
import { StreamRecorder } from '../streaming/stream-record.js';

declare module '../request/request-state.js' {
  interface RequestState {
    /** The subscription this request opened (use-subscriptions), for the transport that writes it. */
    subscription: ClientSubscription | undefined;
  }
}

/** Why a subscription ended: the client left, the subgraph completed it, or the code of the error the client got. */
export type EndReason = 'client' | 'complete' | ErrorCode;

/**
 * What of the client's execution arguments a subscription keeps: never the request's context, which
 * holds the whole HTTP request (decision 032: an open subscription keeps only what its stream needs).
 */
export interface SubscriptionArgs {
  readonly document: DocumentNode;
  readonly operationName?: string | null;
  readonly variableValues?: Readonly<Record<string, unknown>> | null;
}

/** What a subscription is opened with: the client's execution arguments, its request state and plan. */
export interface SubscribeRequest {
  readonly args: SubscriptionArgs;
  readonly state: RequestState;
  readonly plan: QueryPlan;
}

/**
 * Where a client's events go: its transport's writer (push, no iterator; decision 032). `next`
 * writes an event (the same object for every client of the group, so its JSON is made once:
 * streaming/result-json.ts) and answers false when the client's buffer is full and the event was dropped.
 * `end` writes the end, with the error the client is told or none for a normal end, in the
 * transport's own way; it settles once the client has it. Not called when the client itself left.
 */
export interface SubscriptionSink {
  next(event: ExecutionResult): boolean;
  end(error: GraphQLError | undefined): void | Promise<void>;
}

/** What a subscription tells the subscriptions it is one of: its end (counts, its group), its events out and dropped (metrics). */
export interface SubscriptionOwner {
  forget(subscription: ClientSubscription, reason: EndReason): void;
  eventOut(subscription: ClientSubscription): void;
  eventDropped(subscription: ClientSubscription): void;
}

/** Events completed before the transport attached its sink that wait for it; beyond, the oldest is dropped. */
const MAX_EARLY_EVENTS = 256;
/**
 * How long before its user token's `exp` a subscription ends with TOKEN_EXPIRED, in ms. The
 * subgraph tokens of its upstream share never outlive that token (decision 004), so the subgraph
 * may end the upstream at the very same instant; ending first says why, rather than a subgraph's end.
 */
export const EXPIRY_MARGIN_MS = 1_000;

/**
 * One client's subscription, ended by the client (`cancel`) or by the router (`end`). Its transport
 * attaches a sink, once: events completed before are written then, the rest as they come, nothing
 * waits per client after. The stream record (streaming/stream-record.ts) counts what its sink took.
 */
export class ClientSubscription {
  readonly request: SubscribeRequest;
  readonly #owner: SubscriptionOwner;
  #early: ExecutionResult[] = [];
  #sink: SubscriptionSink | undefined;
  #ended: { reason: EndReason; error?: GraphQLError } | undefined;
  #written = false;
  #expiry: NodeJS.Timeout | undefined;
  /** The stream record (streaming/stream-record.ts): what audit, telemetry and metrics read at its end. */
  readonly #record: StreamRecorder;

  constructor(request: SubscribeRequest, owner: SubscriptionOwner) {
    this.request = request;
    this.#owner = owner;
    this.#record = new StreamRecorder(request.state, { complete: true });
  }

  /** The transport takes the stream over: events waiting are written now, the rest as they come, then the end. */
  attach(sink: SubscriptionSink): void {
    if (this.#sink) throw new Error('a subscription is written by one transport');
    this.#sink = sink;
    for (const event of this.#early.splice(0)) this.#write(sink, event);
    if (this.#ended) this.#writeEnd(sink);
  }

  /** An event of its group. */
  push(event: ExecutionResult): void {
    if (this.#ended) return;
    if (this.#sink) return this.#write(this.#sink, event);
    if (this.#early.length >= MAX_EARLY_EVENTS) {
      this.#early.shift();
      this.#owner.eventDropped(this);
    }
    this.#early.push(event);
  }

  /** Ends the subscription: the client gets the events already completed, then the error (if any). */
  end(reason: EndReason, error?: GraphQLError): void {
    if (this.#ended) return;
    this.#ended = { reason, error };
    clearTimeout(this.#expiry);
    this.#owner.forget(this, reason);
    this.#record.endedBy(reason, error);
    if (this.#sink) this.#writeEnd(this.#sink);
  }

  /** Its transport dropped an event it had taken (a reader's queue was full): counted. */
  dropped(): void {
    this.#owner.eventDropped(this);
  }

  /** The client left (closed its socket, unsubscribed, aborted its request): nobody to tell. */
  cancel(): void {
    this.#early.length = 0;
    this.end('client');
    this.#record.end();
  }

  /** 3. The user token's end is the subscription's. */
  expireAt(at: number): void {
    const left = at - Date.now();
    const expire = () => this.#expire();
    if (left <= 0) return expire();
    // Timers longer than 2^31-1 ms fire at once: a token that far out is re-armed when it nears.
    this.#expiry = setTimeout(() => (Date.now() >= at ? expire() : this.expireAt(at)), Math.min(left, 2 ** 31 - 1));
    this.#expiry.unref();
  }

  /** The upstream ended: because the user's token is expiring (its subgraph token with it), or for its own reason. */
  endWithUpstream(reason: EndReason, error?: GraphQLError): void {
    const expiresAt = this.request.state.principal?.expiresAt.getTime();
    if (expiresAt !== undefined && Date.now() >= expiresAt - 2 * EXPIRY_MARGIN_MS) return this.#expire();
    this.end(reason, error);
  }

  #expire(): void {
    this.end('TOKEN_EXPIRED', requestError('TOKEN_EXPIRED', 'The token that opened this subscription expired: subscribe again with a fresh token.'));
  }

  #write(sink: SubscriptionSink, event: ExecutionResult): void {
    if (!sink.next(event)) return this.#owner.eventDropped(this);
    this.#record.sent();
    this.#owner.eventOut(this);
  }

  /** The end, told to the sink once (not when the client left: there is nobody to tell); the record settles when the client has it. */
  #writeEnd(sink: SubscriptionSink): void {
    if (this.#written) return;
    this.#written = true;
    const { reason, error } = this.#ended!;
    if (reason === 'client') return this.#record.end();
    void Promise.resolve(sink.end(error)).finally(() => this.#record.end());
  }
}
