// Per-request state shared by the plugins and the subgraph executors: the deadline, its signal, and notes on sections.
import { CallAborted, type AbortCause } from './subgraph-call.js';

/** A section answered from a recent good copy because its subgraph failed. */
export interface StaleSection {
  subgraph: string;
  /** How old the copy is, in ms. */
  ageMs: number;
  /** The failure the copy stands in for. */
  failureCode: string;
}

export interface RequestScope {
  /** The request's deadline budget, in ms. */
  readonly deadlineMs: number;
  /** Absolute deadline in `performance.now()` ms. */
  readonly deadlineAt: number;
  /** Fires at the deadline or when the client goes away; its reason is a CallAborted. */
  readonly signal: AbortSignal;
  /** Subgraphs this request called (audit, logs). */
  readonly subgraphsCalled: Set<string>;
  /** Sections served from stale copies. */
  readonly stale: StaleSection[];
  /** Releases the deadline timer and the client listener; the signal stays as it is. */
  dispose(): void;
}

export interface RequestScopeOptions {
  deadlineMs: number;
  /** The client connection's signal: aborting it aborts every call of the request. */
  clientSignal?: AbortSignal;
  now?: () => number;
}

/**
 * One timer and at most one listener per request, both released by `dispose()` (the plugin calls it
 * when execution ends), so a finished request leaves nothing scheduled behind.
 */
export function createRequestScope(options: RequestScopeOptions): RequestScope {
  const now = options.now ?? performance.now.bind(performance);
  const controller = new AbortController();
  const abort = (cause: AbortCause) => {
    if (!controller.signal.aborted) controller.abort(new CallAborted(cause));
  };
  const timer = setTimeout(() => abort('deadline'), options.deadlineMs);
  const client = options.clientSignal;
  const onClientGone = () => abort('client');
  if (client?.aborted) abort('client');
  else client?.addEventListener('abort', onClientGone, { once: true });
  return {
    deadlineMs: options.deadlineMs,
    deadlineAt: now() + options.deadlineMs,
    signal: controller.signal,
    subgraphsCalled: new Set(),
    stale: [],
    dispose() {
      clearTimeout(timer);
      client?.removeEventListener('abort', onClientGone);
    },
  };
}

/** Scopes by GraphQL context object: the executors receive the same context the plugins saw. */
const scopes = new WeakMap<object, RequestScope>();

export function attachRequestScope(context: object, scope: RequestScope): void {
  scopes.set(context, scope);
}

export function requestScopeOf(context: unknown): RequestScope | undefined {
  return typeof context === 'object' && context !== null ? scopes.get(context) : undefined;
}

/** A subgraph a request must not call, and why (e.g. its share of the estimated cost is over its budget). */
export interface SkippedSubgraph {
  code: 'SUBGRAPH_COST_EXCEEDED';
  message: string;
}

/** Skips by GraphQL context: set by the cost plugin before execution, read by the executors. */
const skips = new WeakMap<object, Map<string, SkippedSubgraph>>();

export function skipSubgraph(context: object, subgraph: string, reason: SkippedSubgraph): void {
  let map = skips.get(context);
  if (!map) skips.set(context, (map = new Map()));
  map.set(subgraph, reason);
}

export function skippedSubgraph(context: unknown, subgraph: string): SkippedSubgraph | undefined {
  return typeof context === 'object' && context !== null ? skips.get(context)?.get(subgraph) : undefined;
}
