// Client subscriptions: each one's stream of completed events, the groups that complete an event once for many clients, the limits and the ends.
import { print, validate, type DocumentNode, type ExecutionArgs, type ExecutionResult, type GraphQLError } from 'graphql';
import { SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import { clientError, requestError } from '../errors/client-error.js';
import type { ErrorCode } from '../errors/codes.js';
import type { GraphHolder, ServedGraph } from '../gateway/served-graph.js';
import type { QueryPlan } from '../gateway/plan/plan-types.js';
import type { PolicyBook } from '../registry/policy-store.js';
import type { PermissionBook } from '../registry/permission-store.js';
import { requestStateOf, type RequestState } from '../request/request-state.js';
import type { Principal } from '../request/principal.js';
import { principalsOf, type Authorizer } from '../security/authorization.js';
import type { RouterMetrics } from '../telemetry/metrics.js';
import type { Logger } from '../telemetry/logger.js';
import type { UpstreamHub, UpstreamTarget } from './upstream-hub.js';
import { MASKED_MESSAGE, maskedResult } from '../errors/mask-errors.js';
import { jsonOf } from '../streaming/result-json.js';
import { StreamRecorder } from '../streaming/stream-record.js';

/** How a client reads its subscription: the end of a stream is written differently on each. */
export type SubscriptionTransport = 'ws' | 'sse' | 'multipart';

/** Why a subscription ended: the client left, the subgraph completed it, or the code of the error the client got. */
export type EndReason = 'client' | 'complete' | ErrorCode;

/** The extension a subscription's last payload carries when it ends with an error (transports read it). */
export interface EndedExtension {
  subscription: { ended: ErrorCode };
}

/** The error a subscription's last payload carries, when it ended with one; undefined for an ordinary payload. */
export function endOf(result: ExecutionResult): { code: ErrorCode; error: GraphQLError } | undefined {
  const ended = (result.extensions as Partial<EndedExtension> | undefined)?.subscription?.ended;
  return ended && result.errors?.[0] ? { code: ended, error: result.errors[0] } : undefined;
}

/** Seconds a client refused for a limit is told to wait (`Retry-After`). */
const LIMIT_RETRY_AFTER_SECONDS = 5;
/** Events a client may have waiting before the oldest is dropped (a live screen wants the latest). */
const MAX_WAITING_EVENTS = 256;
/**
 * How long before its user token's `exp` a subscription ends with TOKEN_EXPIRED, in ms. The
 * subgraph tokens of its upstream share never outlive that token (decision 004), so the subgraph
 * may end the upstream at the very same instant; ending first says why, rather than a subgraph's end.
 */
const EXPIRY_MARGIN_MS = 1_000;
/** Events of one group being completed at once; beyond, an event is dropped for every member. */
const MAX_EVENTS_IN_FLIGHT = 64;

export interface OpenSubscriptionsOptions {
  hub: UpstreamHub;
  graph: GraphHolder;
  authorizer: Authorizer;
  /** Rules kept current by the change feed: a replace checks every open subscription again. */
  permissions?: PermissionBook;
  policies: PolicyBook;
  /** Most subscriptions open on this router (SWITCHYARD_MAX_SUBSCRIPTIONS). */
  maxSubscriptions: number;
  /** Subgraphs get per-user tokens: only one principal's clients share an upstream subscription and a completed event. */
  perUserTokens: boolean;
  /** The deadline of one event's entity fetches where no policy sets one, in ms. */
  defaultDeadlineMs: number;
  metrics?: RouterMetrics;
  logger?: Logger;
  tracer?: Tracer;
}

/**
 * What of the client's execution arguments a subscription keeps: never the request's context, which
 * holds the whole HTTP request (decision 032: an open subscription keeps only what its stream needs).
 */
export interface SubscriptionArgs {
  readonly document: DocumentNode;
  readonly operationName?: string | null;
  readonly variableValues?: Readonly<Record<string, unknown>> | null;
}

/**
 * Where a client's events go once its transport took the subscription over (push, no iterator):
 * `next` writes an event, given as its JSON (made once for every client of the group), and answers
 * false when the client's buffer is full and the event was dropped; `end` writes the end, with the error the
 * client is told, or none for a normal end. `end` is not called when the client itself left.
 */
export interface SubscriptionSink {
  next(json: string): boolean;
  end(error: GraphQLError | undefined): void;
}

/** What a subscription is opened with: the client's execution arguments, its request state and plan. */
export interface SubscribeRequest {
  readonly args: SubscriptionArgs;
  readonly state: RequestState;
  readonly plan: QueryPlan;
  readonly transport: SubscriptionTransport;
}

/**
 * The subscriptions open on one router (decision 031).
 * 1. Admission: the router's ceiling, then the operation's `maxSubscriptions`, then its
 *    `maxSubscriptionsPerPrincipal` for an authenticated caller; over one, SUBSCRIPTION_LIMIT with
 *    `Retry-After`, and nothing already open is touched.
 * 2. Each open subscription belongs to a group: the clients with the same plan (document, operation,
 *    authorization decision, graph), variables and token holder. A group shares one upstream
 *    subscription (UpstreamHub) and completes each event once (the plan's entity fetches, within the
 *    policy's deadline per event); every member gets the same answer, in the order events came.
 * 3. Ends, each told to the client as an error, never as a normal end: the user token expires
 *    (TOKEN_EXPIRED, at its `exp`); a permission replace denies a field it reads (FORBIDDEN); a new
 *    graph no longer validates its document (SUBSCRIPTION_SCHEMA_RELOAD; a document still valid is
 *    planned anew and moves to its new group before leaving the old one, so a shared upstream stays
 *    open); the upstream fails for good (SUBGRAPH_UNAVAILABLE); shutdown (SHUTTING_DOWN). A client that
 *    leaves frees its place at once; the last member of a group releases its upstream share.
 */
export class OpenSubscriptions {
  readonly #options: OpenSubscriptionsOptions;
  readonly #open = new Set<ClientSubscription>();
  readonly #byOperation = new Map<string, number>();
  readonly #byPrincipal = new Map<string, number>();
  readonly #groups = new Map<string, EventGroup>();
  readonly #planIds = new WeakMap<QueryPlan, number>();
  #nextPlanId = 0;
  readonly #stops: (() => void)[] = [];

  constructor(options: OpenSubscriptionsOptions) {
    this.#options = options;
    this.#stops.push(options.graph.onSwap((graph) => graph && this.#onSwap(graph)));
    if (options.permissions) this.#stops.push(options.permissions.onReplace(() => this.#recheckAll()));
  }

  get size(): number {
    return this.#open.size;
  }

  /** Groups completing events now (tests: 0 once every client left). */
  get groups(): number {
    return this.#groups.size;
  }

  /** 1. The refusal of a new subscription over a limit, or undefined: it may open. */
  admit(operationName: string | undefined, principal: Principal | undefined): GraphQLError | undefined {
    const policy = this.#options.policies.resolve(operationName);
    const refuse = (limit: 'router' | 'operation' | 'principal', what: string) => {
      this.#options.metrics?.subscriptionsRefused.inc({ limit });
      return requestError('SUBSCRIPTION_LIMIT', `Too many open subscriptions: ${what}. Retry after ${LIMIT_RETRY_AFTER_SECONDS} seconds.`, {
        extensions: { retryAfter: LIMIT_RETRY_AFTER_SECONDS },
        httpHeaders: { 'retry-after': String(LIMIT_RETRY_AFTER_SECONDS) },
      });
    };
    if (this.#open.size >= this.#options.maxSubscriptions) return refuse('router', `this router holds its most (${this.#options.maxSubscriptions})`);
    const operation = operationName ?? '';
    if (policy.maxSubscriptions !== undefined && (this.#byOperation.get(operation) ?? 0) >= policy.maxSubscriptions) {
      return refuse('operation', `operation ${operationName ?? '(anonymous)'} holds its most on this router (${policy.maxSubscriptions})`);
    }
    if (principal && policy.maxSubscriptionsPerPrincipal !== undefined && (this.#byPrincipal.get(`${operation}\u0000${principal.subject}`) ?? 0) >= policy.maxSubscriptionsPerPrincipal) {
      return refuse('principal', `you hold the most of operation ${operationName ?? '(anonymous)'} (${policy.maxSubscriptionsPerPrincipal})`);
    }
    return undefined;
  }

  /** Opens a client subscription (admitted before): its stream of completed events. */
  open(request: SubscribeRequest): ClientSubscription {
    const subscription = new ClientSubscription(request, this);
    // The stream outlives its HTTP request: the state lets go of it (the request's end hooks wait for the stream's).
    request.state.detach();
    const { operationName, principal } = request.state;
    const operation = operationName ?? '';
    this.#open.add(subscription);
    this.#byOperation.set(operation, (this.#byOperation.get(operation) ?? 0) + 1);
    if (principal) this.#byPrincipal.set(`${operation}\u0000${principal.subject}`, (this.#byPrincipal.get(`${operation}\u0000${principal.subject}`) ?? 0) + 1);
    this.#options.metrics?.subscriptionsActive.inc({ operation: this.#label(subscription) });
    try {
      this.join(subscription, request.state.graph, request.plan);
    } catch (error) {
      subscription.end('SUBGRAPH_UNAVAILABLE', clientError('SUBGRAPH_UNAVAILABLE', `The subscription could not be opened: ${(error as Error).message}`));
    }
    // 3. The user token's end is the subscription's.
    if (principal) subscription.expireAt(principal.expiresAt.getTime() - EXPIRY_MARGIN_MS);
    return subscription;
  }

  /**
   * Ends every subscription (shutdown): each client gets SHUTTING_DOWN after the events already
   * completed. Settles when every client has read its last payload (or left).
   */
  shutdown(): Promise<void> {
    const open = [...this.#open];
    for (const subscription of open) subscription.end('SHUTTING_DOWN', requestError('SHUTTING_DOWN', 'The router is shutting down: subscribe again.'));
    return Promise.all(open.map((subscription) => subscription.request.state.stream?.ended)).then(() => undefined);
  }

  close(): void {
    void this.shutdown();
    for (const stop of this.#stops) stop();
  }

  /** 2. Puts a subscription in the group of its plan, variables and token holder (made on first use). */
  join(subscription: ClientSubscription, graph: ServedGraph, plan: QueryPlan): void {
    const { args, state } = subscription.request;
    let planId = this.#planIds.get(plan);
    if (planId === undefined) this.#planIds.set(plan, (planId = this.#nextPlanId++));
    const holder = this.#options.perUserTokens ? (state.principal?.subject ?? '') + '\u0000' + (state.principal?.scopes.join(' ') ?? '') : '';
    const key = `${graph.generation}\u0000${planId}\u0000${JSON.stringify(args.variableValues ?? {})}\u0000${holder}`;
    let group = this.#groups.get(key);
    if (!group) {
      group = new EventGroup(this.#groupSetup(subscription, graph, plan), () => this.#groups.delete(key));
      this.#groups.set(key, group);
    }
    const previous = subscription.group;
    group.add(subscription);
    subscription.group = group;
    previous?.remove(subscription);
  }

  forget(subscription: ClientSubscription, reason: EndReason): void {
    if (!this.#open.delete(subscription)) return;
    const { operationName, principal } = subscription.request.state;
    const operation = operationName ?? '';
    decrement(this.#byOperation, operation);
    if (principal) decrement(this.#byPrincipal, `${operation}\u0000${principal.subject}`);
    this.#options.metrics?.subscriptionsActive.dec({ operation: this.#label(subscription) });
    this.#options.metrics?.subscriptionsEnded.inc({ reason });
  }

  eventOut(subscription: ClientSubscription): void {
    this.#options.metrics?.subscriptionEventsOut.inc({ operation: this.#label(subscription) });
  }

  eventDropped(subscription: ClientSubscription): void {
    this.#options.metrics?.subscriptionEventsDropped.inc({ operation: this.#label(subscription) });
  }

  #label(subscription: ClientSubscription): string {
    return this.#options.metrics?.operationLabel(subscription.request.state.operationName) ?? '';
  }

  /** What a group completes its events with: the opener's caller and decision, on a context of the group's own. */
  #groupSetup(opener: ClientSubscription, graph: ServedGraph, plan: QueryPlan): GroupSetup {
    const { args, state } = opener.request;
    const root = plan.subscription!;
    const endpoint = graph.subgraphs.find((s) => s.name === root.subgraph);
    if (!endpoint || !graph.planner) throw new Error(`no endpoint for subgraph "${root.subgraph}"`);
    const target: UpstreamTarget = { subgraph: root.subgraph, url: endpoint.url, route: graph.routes.get(root.subgraph) ?? {} };
    // The group's own context: the opener may leave while the group goes on.
    const context = {};
    const groupState = requestStateOf(context);
    groupState.start(graph);
    groupState.principal = state.principal;
    groupState.decision = state.decision;
    groupState.operationName = state.operationName;
    groupState.plan = plan;
    groupState.skipped = state.skipped;
    const groupArgs: ExecutionArgs = { document: args.document, operationName: args.operationName, variableValues: args.variableValues, schema: graph.schema, contextValue: context };
    const variables: Record<string, unknown> = {};
    const given = (args.variableValues ?? {}) as Record<string, unknown>;
    for (const name of root.variableNames) if (name in given) variables[name] = given[name];
    const planner = graph.planner;
    const operation = this.#options.metrics?.operationLabel(state.operationName) ?? '';
    return {
      graph,
      hub: this.#options.hub,
      upstream: { target, query: printedDocument(root), variables, principal: state.principal },
      deadlineMs: state.deadlineMs ?? this.#options.policies.resolve(state.operationName).deadlineMs ?? this.#options.defaultDeadlineMs,
      complete: (event, budget) => planner.completeEvent(plan, groupArgs, event, budget),
      onCompleted: (ms) => this.#options.metrics?.subscriptionEventDuration.observe({ operation }, ms / 1000),
      onDropped: () => this.#options.metrics?.subscriptionEventsDropped.inc({ operation }),
      onFailed: (error) => this.#options.logger?.error({ err: error, operation: state.operationName }, 'a subscription event could not be completed'),
      onMasked: (error) => this.#options.logger?.error({ err: error, operation: state.operationName }, 'unexpected error in a subscription event'),
      tracer: this.#options.tracer,
      operationName: state.operationName,
    };
  }

  /** 3. A new graph: every subscription is validated and planned on it, or ends. */
  #onSwap(graph: ServedGraph): void {
    for (const subscription of [...this.#open]) {
      const { args, state } = subscription.request;
      const errors = validate(graph.schema, args.document);
      const reload = () =>
        subscription.end('SUBSCRIPTION_SCHEMA_RELOAD', requestError('SUBSCRIPTION_SCHEMA_RELOAD', `The published graph no longer serves this subscription${errors.length ? `: ${errors[0].message}` : ''}. Change the document and subscribe again.`));
      if (errors.length > 0) {
        reload();
        continue;
      }
      const decision = this.#options.authorizer.decide(graph.schema, graph.supergraph.requirements, args.document, args.operationName, principalsOf(state.principal));
      if (decision.refused) {
        subscription.end('FORBIDDEN', requestError('FORBIDDEN', 'You may no longer run this subscription.'));
        continue;
      }
      const plan = graph.planner?.planFor(args.document, args.operationName, decision.denied.size > 0 ? decision.denied : undefined);
      if (!plan || !plan.subscription) {
        reload();
        continue;
      }
      state.decision = decision.denied.size > 0 ? decision : undefined;
      try {
        this.join(subscription, graph, plan);
      } catch (error) {
        this.#options.logger?.warn({ err: error }, 'a subscription could not move to the new graph');
        reload();
      }
    }
  }

  /** 3. Rules changed: a subscription that now reads a denied field ends with FORBIDDEN. */
  #recheckAll(): void {
    const graph = this.#options.graph.current;
    for (const subscription of [...this.#open]) {
      const { args, state } = subscription.request;
      const schema = subscription.group?.graph.schema ?? graph?.schema;
      const served = subscription.group?.graph ?? graph;
      if (!schema || !served) continue;
      const decision = this.#options.authorizer.decide(schema, served.supergraph.requirements, args.document, args.operationName, principalsOf(state.principal));
      const before = state.decision?.denied;
      const newlyDenied = [...decision.denied].filter((coordinate) => !before?.has(coordinate));
      if (decision.refused || newlyDenied.length > 0) {
        const what = newlyDenied.length > 0 ? `you may no longer read ${newlyDenied.join(', ')}` : 'you may no longer run this subscription';
        subscription.end('FORBIDDEN', requestError('FORBIDDEN', `The subscription ended: ${what}.`));
      }
    }
  }
}

function decrement(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 1) - 1;
  if (left <= 0) counts.delete(key);
  else counts.set(key, left);
}

/** The root fetch's document as sent to the subgraph, printed once per plan. */
const printed = new WeakMap<object, string>();
function printedDocument(fetch: NonNullable<QueryPlan['subscription']>): string {
  let text = printed.get(fetch.document);
  if (text === undefined) printed.set(fetch.document, (text = print(fetch.document)));
  return text;
}

interface GroupSetup {
  graph: ServedGraph;
  hub: UpstreamHub;
  upstream: Parameters<UpstreamHub['subscribe']>[0];
  deadlineMs: number;
  complete(event: ExecutionResult, budget: { signal: AbortSignal; deadlineAt: number }): Promise<ExecutionResult>;
  onCompleted(ms: number): void;
  onDropped(): void;
  onFailed(error: unknown): void;
  onMasked(error: unknown): void;
  tracer: Tracer | undefined;
  operationName: string | undefined;
}

/** 2. The clients completing events together: one upstream share, one completion per event. */
class EventGroup {
  readonly #members = new Set<ClientSubscription>();
  readonly #setup: GroupSetup;
  readonly #onEmpty: () => void;
  readonly #abort = new AbortController();
  readonly #release: () => void;
  #delivered: Promise<void> = Promise.resolve();
  #inFlight = 0;
  #closed = false;

  constructor(setup: GroupSetup, onEmpty: () => void) {
    this.#setup = setup;
    this.#onEmpty = onEmpty;
    this.#release = setup.hub.subscribe(setup.upstream, {
      next: (event) => this.#next(event),
      error: (error) => this.#end(String(error.extensions.code ?? 'SUBGRAPH_UNAVAILABLE') as ErrorCode, error),
      complete: () => this.#end('complete'),
    });
  }

  get graph(): ServedGraph {
    return this.#setup.graph;
  }

  add(member: ClientSubscription): void {
    this.#members.add(member);
  }

  remove(member: ClientSubscription): void {
    if (!this.#members.delete(member) || this.#members.size > 0) return;
    this.close();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#abort.abort(new DOMException('the subscription ended', 'AbortError'));
    this.#release();
    this.#onEmpty();
  }

  #next(event: ExecutionResult): void {
    if (this.#closed) return;
    if (this.#inFlight >= MAX_EVENTS_IN_FLIGHT) {
      this.#setup.onDropped();
      return;
    }
    this.#inFlight++;
    const started = performance.now();
    const span = this.#setup.tracer?.startSpan('subscription.event', { kind: SpanKind.INTERNAL, attributes: { 'graphql.operation.name': this.#setup.operationName ?? '', 'switchyard.subscribers': this.#members.size } });
    const completed = this.#setup.complete(event, { signal: this.#abort.signal, deadlineAt: started + this.#setup.deadlineMs }).catch((error: unknown) => {
      this.#setup.onFailed(error);
      span?.setStatus({ code: SpanStatusCode.ERROR });
      return { errors: [clientError('INTERNAL_SERVER_ERROR', MASKED_MESSAGE)] } as ExecutionResult;
    });
    // Events are completed at once, and delivered in the order they came.
    this.#delivered = this.#delivered.then(async () => {
      const result = await completed;
      this.#inFlight--;
      this.#setup.onCompleted(performance.now() - started);
      span?.end();
      if (this.#closed) return;
      const event = maskedResult(result, this.#setup.onMasked);
      for (const member of this.#members) member.push(event);
    });
  }

  /** The upstream ended: every member ends with it, after the events already being completed. */
  #end(reason: EndReason, error?: GraphQLError): void {
    void this.#delivered.then(() => {
      for (const member of [...this.#members]) member.endWithUpstream(reason, error);
    });
  }
}

/**
 * One client's subscription, ended by the client or by the router. Its transport reads it one of two
 * ways: it attaches a sink (the router's own transports: every event is written as it is completed,
 * nothing waits per client), or it iterates it (any other reader: events wait in a queue of
 * MAX_WAITING_EVENTS, the oldest dropped first).
 */
export class ClientSubscription implements AsyncIterableIterator<ExecutionResult> {
  readonly request: SubscribeRequest;
  group: EventGroup | undefined = undefined;
  readonly #owner: OpenSubscriptions;
  readonly #queue: ExecutionResult[] = [];
  #sink: SubscriptionSink | undefined;
  #wake: (() => void) | undefined;
  #ended: { reason: EndReason; error?: GraphQLError } | undefined;
  #finished = false;
  #expiry: NodeJS.Timeout | undefined;
  /** The request's answer is the stream: audit, telemetry and metrics write their records at its end. */
  readonly #record: StreamRecorder;

  constructor(request: SubscribeRequest, owner: OpenSubscriptions) {
    this.request = request;
    this.#owner = owner;
    this.#record = new StreamRecorder(request.state, { complete: true });
  }

  /** The transport takes the stream over: events waiting are written now, the rest as they come, then the end. */
  attach(sink: SubscriptionSink): void {
    this.#sink = sink;
    for (const result of this.#queue.splice(0)) this.#write(sink, result);
    if (this.#ended) this.#endSink(sink);
  }

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

  push(result: ExecutionResult): void {
    if (this.#ended) return;
    if (this.#sink) return this.#write(this.#sink, result);
    if (this.#queue.length >= MAX_WAITING_EVENTS) {
      this.#queue.shift();
      this.#owner.eventDropped(this);
    }
    this.#queue.push(result);
    this.#wakeUp();
  }

  /** Ends the subscription: the client gets the events already completed, then the error (if any). */
  end(reason: EndReason, error?: GraphQLError): void {
    if (this.#ended) return;
    this.#ended = { reason, error };
    clearTimeout(this.#expiry);
    const group = this.group;
    this.group = undefined;
    group?.remove(this);
    this.#owner.forget(this, reason);
    this.#record.endedBy(reason, error);
    if (this.#sink) this.#endSink(this.#sink);
    else this.#wakeUp();
  }

  async next(): Promise<IteratorResult<ExecutionResult>> {
    for (;;) {
      const value = this.#queue.shift();
      if (value !== undefined) {
        this.#sent();
        return { value, done: false };
      }
      if (this.#ended) return this.#last();
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }

  async return(): Promise<IteratorResult<ExecutionResult>> {
    this.end('client');
    this.#queue.length = 0;
    return this.#finish();
  }

  async throw(): Promise<IteratorResult<ExecutionResult>> {
    return this.return();
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<ExecutionResult> {
    return this;
  }

  #write(sink: SubscriptionSink, result: ExecutionResult): void {
    if (sink.next(jsonOf(result))) this.#sent();
    else this.#owner.eventDropped(this);
  }

  /** The end, told to the sink once (not when the client left: there is nobody to tell). */
  #endSink(sink: SubscriptionSink): void {
    if (this.#finished) return;
    const { reason, error } = this.#ended!;
    if (reason !== 'client') sink.end(error);
    this.#finish();
  }

  #sent(): void {
    this.#record.sent();
    this.#owner.eventOut(this);
  }

  /** After the queue: the error as the last payload (or thrown, where the transport's end is a dropped stream), then done. */
  #last(): IteratorResult<ExecutionResult> {
    const ended = this.#ended!;
    if (this.#finished || !ended.error) return this.#finish();
    this.#finished = true;
    this.#record.end();
    const code = String(ended.error.extensions.code) as ErrorCode;
    // SSE has no error event: a stream that ends without `complete` is one its client reconnects (to another router).
    if (code === 'SHUTTING_DOWN' && this.request.transport === 'sse') throw ended.error;
    return { value: { errors: [ended.error], extensions: { subscription: { ended: code } } satisfies EndedExtension }, done: false };
  }

  #finish(): IteratorResult<ExecutionResult> {
    this.#finished = true;
    this.#record.end();
    return { value: undefined, done: true };
  }

  #wakeUp(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
