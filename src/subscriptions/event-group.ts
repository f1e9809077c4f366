// The clients completing a subscription's events together: one upstream share, one completion per event, on a context of the group's own.
import { print, type ExecutionArgs, type ExecutionResult, type GraphQLError } from 'graphql';
import { SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import { clientError } from '../errors/client-error.js';
import type { ErrorCode } from '../errors/codes.js';
import { MASKED_MESSAGE } from '../errors/mask-errors.js';
import type { QueryPlan } from '../gateway/plan/plan-types.js';
import type { ServedGraph } from '../gateway/served-graph.js';
import type { Decision } from '../request/decision.js';
import type { Principal } from '../request/principal.js';
import { requestStateOf, type SkippedSubgraph } from '../request/request-state.js';
import type { ClientSubscription, EndReason, SubscriptionArgs } from './client-subscription.js';
import { maskedResult } from '../errors/mask-errors.js';
import type { UpstreamHub, UpstreamRequest } from './upstream-hub.js';

/** Events of one group being completed at once; beyond, an event is dropped for every member. */
const MAX_EVENTS_IN_FLIGHT = 64;

/**
 * What a group completes its events with, for as long as it lives: the opener's document, caller
 * and authorization decision on the graph it was planned on. A few fixed fields, not a request's
 * state: what a request state gathers as it runs (subgraphs called, stale sections, cache notes)
 * would pile up for the hours a group lives, so each event gets a request state of its own
 * (`eventArgs`), gone with the event.
 */
export interface GroupContext {
  readonly graph: ServedGraph;
  readonly plan: QueryPlan;
  readonly args: SubscriptionArgs;
  readonly principal: Principal | undefined;
  readonly decision: Decision | undefined;
  readonly operationName: string | undefined;
  readonly skipped: ReadonlyMap<string, SkippedSubgraph> | undefined;
  /** The deadline of one event's entity fetches, in ms. */
  readonly deadlineMs: number;
}

/** What a group reports (metrics, logs, traces); each hook is optional work the router may not do. */
export interface GroupHooks {
  onCompleted(ms: number): void;
  onDropped(): void;
  onFailed(error: unknown): void;
  onMasked(error: unknown): void;
  readonly tracer: Tracer | undefined;
}

/** The root fetch's document as sent to the subgraph, printed once per plan. */
const printed = new WeakMap<object, string>();
function printedDocument(fetch: NonNullable<QueryPlan['subscription']>): string {
  let text = printed.get(fetch.document);
  if (text === undefined) printed.set(fetch.document, (text = print(fetch.document)));
  return text;
}

/** The upstream subscription a group's context reads: the plan's root fetch, with its variables, for the opener's token holder. */
function upstreamOf(context: GroupContext): UpstreamRequest {
  const root = context.plan.subscription!;
  const endpoint = context.graph.subgraphs.find((s) => s.name === root.subgraph);
  if (!endpoint || !context.graph.planner) throw new Error(`no endpoint for subgraph "${root.subgraph}"`);
  const variables: Record<string, unknown> = {};
  const given = (context.args.variableValues ?? {}) as Record<string, unknown>;
  for (const name of root.variableNames) if (name in given) variables[name] = given[name];
  return {
    target: { subgraph: root.subgraph, url: endpoint.url, route: context.graph.routes.get(root.subgraph) ?? {} },
    query: printedDocument(root),
    variables,
    principal: context.principal,
  };
}

/** One event's execution arguments: a fresh request state started from the group's context, dropped with the event. */
function eventArgs(context: GroupContext): ExecutionArgs {
  const contextValue = {};
  const state = requestStateOf(contextValue);
  state.start(context.graph);
  state.principal = context.principal;
  state.decision = context.decision;
  state.operationName = context.operationName;
  state.plan = context.plan;
  if (context.skipped) state.skipped = new Map(context.skipped);
  const { document, operationName, variableValues } = context.args;
  return { document, operationName, variableValues, schema: context.graph.schema, contextValue };
}

/**
 * The clients completing events together (decision 031, 3): one upstream share, one completion per
 * event (the plan's entity fetches, within the deadline), every member the same answer, in the order
 * events came. The last member to leave closes it and releases its upstream share.
 */
export class EventGroup {
  readonly context: GroupContext;
  readonly #members = new Set<ClientSubscription>();
  readonly #hooks: GroupHooks;
  readonly #onEmpty: () => void;
  readonly #abort = new AbortController();
  readonly #release: () => void;
  #delivered: Promise<void> = Promise.resolve();
  #inFlight = 0;
  #closed = false;

  constructor(context: GroupContext, hub: UpstreamHub, hooks: GroupHooks, onEmpty: () => void) {
    this.context = context;
    this.#hooks = hooks;
    this.#onEmpty = onEmpty;
    this.#release = hub.subscribe(upstreamOf(context), {
      next: (event) => this.#next(event),
      error: (error) => this.#end(String(error.extensions.code ?? 'SUBGRAPH_UNAVAILABLE') as ErrorCode, error),
      complete: () => this.#end('complete'),
    });
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

  /** An upstream event (the group's own copy: the upstream hub), completed as the plan says. */
  #next(event: ExecutionResult): void {
    if (this.#closed) return;
    if (this.#inFlight >= MAX_EVENTS_IN_FLIGHT) {
      this.#hooks.onDropped();
      return;
    }
    this.#inFlight++;
    const started = performance.now();
    const { graph, plan, operationName, deadlineMs } = this.context;
    const span = this.#hooks.tracer?.startSpan('subscription.event', { kind: SpanKind.INTERNAL, attributes: { 'graphql.operation.name': operationName ?? '', 'switchyard.subscribers': this.#members.size } });
    const completed = graph.planner!.completeEvent(plan, eventArgs(this.context), event, { signal: this.#abort.signal, deadlineAt: started + deadlineMs }).catch((error: unknown) => {
      this.#hooks.onFailed(error);
      span?.setStatus({ code: SpanStatusCode.ERROR });
      return { errors: [clientError('INTERNAL_SERVER_ERROR', MASKED_MESSAGE)] } as ExecutionResult;
    });
    // Events are completed at once, and delivered in the order they came.
    this.#delivered = this.#delivered.then(async () => {
      const result = await completed;
      this.#inFlight--;
      this.#hooks.onCompleted(performance.now() - started);
      span?.end();
      if (this.#closed) return;
      const answer = maskedResult(result, this.#hooks.onMasked);
      for (const member of this.#members) member.push(answer);
    });
  }

  /** The upstream ended: every member ends with it, after the events already being completed. */
  #end(reason: EndReason, error?: GraphQLError): void {
    void this.#delivered.then(() => {
      for (const member of [...this.#members]) member.endWithUpstream(reason, error);
    });
  }
}
