// The subscriptions open on one router: admission under the limits, the groups that complete an event once for many clients, and the ends.
import { validate, type GraphQLError } from 'graphql';
import type { Tracer } from '@opentelemetry/api';
import { clientError, requestError } from '../errors/client-error.js';
import type { GraphHolder, ServedGraph } from '../gateway/served-graph.js';
import type { QueryPlan } from '../gateway/plan/plan-types.js';
import type { PolicyBook } from '../registry/policy-store.js';
import type { PermissionBook } from '../registry/permission-store.js';
import type { Principal } from '../request/principal.js';
import { principalsOf, type Authorizer } from '../security/authorization.js';
import { tokenHolderKey } from '../security/subgraph-token-cache.js';
import type { RouterMetrics } from '../telemetry/metrics.js';
import { maskedErrorLogger, type Logger } from '../telemetry/logger.js';
import { ClientSubscription, EXPIRY_MARGIN_MS, type EndReason, type SubscribeRequest, type SubscriptionOwner } from './client-subscription.js';
import { EventGroup, type GroupContext, type GroupHooks } from './event-group.js';
import type { UpstreamHub } from './upstream-hub.js';

/** Seconds a client refused for a limit is told to wait (`Retry-After`). */
const LIMIT_RETRY_AFTER_SECONDS = 5;

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
 * The subscriptions open on one router (decision 031).
 * 1. Admission: the router's ceiling, then the operation's `maxSubscriptions`, then its
 *    `maxSubscriptionsPerPrincipal` for an authenticated caller; over one, SUBSCRIPTION_LIMIT with
 *    `Retry-After`, and nothing already open is touched.
 * 2. Each open subscription belongs to a group: the clients with the same plan (document, operation,
 *    authorization decision, graph), variables and token holder (`tokenHolderKey`, the same key the
 *    upstream hub and the token cache share by). A group shares one upstream
 *    subscription (UpstreamHub) and completes each event once (the plan's entity fetches, within the
 *    policy's deadline per event); every member gets the same answer, in the order events came.
 * 3. Ends, each told to the client as an error, never as a normal end: the user token expires
 *    (TOKEN_EXPIRED, at its `exp`); a permission replace denies a field it reads (FORBIDDEN); a new
 *    graph no longer validates its document (SUBSCRIPTION_SCHEMA_RELOAD; a document still valid is
 *    planned anew and moves to its new group before leaving the old one, so a shared upstream stays
 *    open); the upstream fails for good (SUBGRAPH_UNAVAILABLE); shutdown (SHUTTING_DOWN). A client that
 *    leaves frees its place at once; the last member of a group releases its upstream share.
 */
export class OpenSubscriptions implements SubscriptionOwner {
  readonly #options: OpenSubscriptionsOptions;
  /** Every open subscription, and the group it is a member of (none: it could not join one). */
  readonly #open = new Map<ClientSubscription, EventGroup | undefined>();
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
    request.state.subscription = subscription;
    const { operationName, principal } = request.state;
    const operation = operationName ?? '';
    this.#open.set(subscription, undefined);
    this.#byOperation.set(operation, (this.#byOperation.get(operation) ?? 0) + 1);
    if (principal) this.#byPrincipal.set(`${operation}\u0000${principal.subject}`, (this.#byPrincipal.get(`${operation}\u0000${principal.subject}`) ?? 0) + 1);
    this.#options.metrics?.subscriptionsActive.inc({ operation: this.#label(subscription) });
    try {
      this.#join(subscription, request.state.graph, request.plan);
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
    const open = [...this.#open.keys()];
    for (const subscription of open) subscription.end('SHUTTING_DOWN', requestError('SHUTTING_DOWN', 'The router is shutting down: subscribe again.'));
    return Promise.all(open.map((subscription) => subscription.request.state.stream?.ended)).then(() => undefined);
  }

  close(): void {
    void this.shutdown();
    for (const stop of this.#stops) stop();
  }

  /** 2. Puts a subscription in the group of its plan, variables and token holder (made on first use). */
  #join(subscription: ClientSubscription, graph: ServedGraph, plan: QueryPlan): void {
    const { args, state } = subscription.request;
    let planId = this.#planIds.get(plan);
    if (planId === undefined) this.#planIds.set(plan, (planId = this.#nextPlanId++));
    // Without per-user subgraph tokens every caller's events are completed alike: one holder.
    const holder = this.#options.perUserTokens ? tokenHolderKey(state.principal) : '';
    const key = `${graph.generation}\u0000${planId}\u0000${JSON.stringify(args.variableValues ?? {})}\u0000${holder}`;
    let group = this.#groups.get(key);
    if (!group) {
      group = new EventGroup(this.#groupContext(subscription, graph, plan), this.#options.hub, this.#groupHooks(state.operationName), () => this.#groups.delete(key));
      this.#groups.set(key, group);
    }
    const previous = this.#open.get(subscription);
    group.add(subscription);
    this.#open.set(subscription, group);
    previous?.remove(subscription);
  }

  /** A subscription ended: it leaves its group (the last member closes it) and the counts. */
  forget(subscription: ClientSubscription, reason: EndReason): void {
    if (!this.#open.has(subscription)) return;
    const group = this.#open.get(subscription);
    this.#open.delete(subscription);
    group?.remove(subscription);
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

  /** What a group completes its events with, for its whole life: the opener's caller and decision (every member has the same). */
  #groupContext(opener: ClientSubscription, graph: ServedGraph, plan: QueryPlan): GroupContext {
    const { args, state } = opener.request;
    return {
      graph,
      plan,
      args,
      principal: state.principal,
      decision: state.decision,
      operationName: state.operationName,
      skipped: state.skipped,
      deadlineMs: state.deadlineMs ?? this.#options.policies.resolve(state.operationName).deadlineMs ?? this.#options.defaultDeadlineMs,
    };
  }

  #groupHooks(operationName: string | undefined): GroupHooks {
    const { metrics, logger, tracer } = this.#options;
    const operation = metrics?.operationLabel(operationName) ?? '';
    return {
      onCompleted: (ms) => metrics?.subscriptionEventDuration.observe({ operation }, ms / 1000),
      onDropped: () => metrics?.subscriptionEventsDropped.inc({ operation }),
      onFailed: (error) => logger?.error({ err: error, operation: operationName }, 'a subscription event could not be completed'),
      onMasked: maskedErrorLogger(logger, operationName),
      tracer,
    };
  }

  /** 3. A new graph: every subscription is validated and planned on it, or ends. */
  #onSwap(graph: ServedGraph): void {
    for (const subscription of [...this.#open.keys()]) {
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
        this.#join(subscription, graph, plan);
      } catch (error) {
        this.#options.logger?.warn({ err: error }, 'a subscription could not move to the new graph');
        reload();
      }
    }
  }

  /** 3. Rules changed: a subscription that now reads a denied field ends with FORBIDDEN. */
  #recheckAll(): void {
    const graph = this.#options.graph.current;
    for (const [subscription, group] of [...this.#open]) {
      const { args, state } = subscription.request;
      const served = group?.context.graph ?? graph;
      if (!served) continue;
      const decision = this.#options.authorizer.decide(served.schema, served.supergraph.requirements, args.document, args.operationName, principalsOf(state.principal));
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
