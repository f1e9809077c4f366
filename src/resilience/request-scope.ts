// Per-request state shared by the plugins and the subgraph executors: the deadline, its signal, and notes on sections.
import { setMaxListeners } from 'node:events';

/** A section answered from a recent good copy because its subgraph failed. */
export interface StaleSection {
  subgraph: string;
  /** How old the copy is, in ms. */
  ageMs: number;
  /** The failure the copy stands in for. */
  failureCode: string;
}

/** What the section cache noted of a request's parts, for its `Cache-Control` header. */
export interface CacheNotes {
  /** Some part was fetched or answered without being cacheable for this request. */
  uncacheable: boolean;
  /** The least time any part has left to be fresh, in ms. */
  freshForMs: number;
  /** Some part is private to the viewer. */
  private: boolean;
}

export interface RequestScope {
  /** The request's deadline budget, in ms. */
  readonly deadlineMs: number;
  /** Absolute deadline in `performance.now()` ms: every attempt's own timer fires at min(its timeout, this). */
  readonly deadlineAt: number;
  /** Fires when the client goes away (its reason is then a DOMException; the subgraph layer reads it as `client`). */
  readonly signal: AbortSignal;
  /** Subgraphs this request called (audit, logs). */
  readonly subgraphsCalled: Set<string>;
  /** Sections served from stale copies. */
  readonly stale: StaleSection[];
  /** Set by the section cache when the request ran a plan whose parts it considered. */
  cache?: CacheNotes;
}

export interface RequestScopeOptions {
  deadlineMs: number;
  /** The client connection's signal: aborting it aborts every call of the request. */
  clientSignal?: AbortSignal;
  now?: () => number;
}

/** A signal that never fires, for requests without a client connection (in-process calls). */
const NEVER = new AbortController().signal;
// Shared by every in-process request's calls, each of which releases its listener when it ends.
setMaxListeners(0, NEVER);

/**
 * The scope holds no timer and no listener of its own: the deadline is an absolute time that every
 * subgraph attempt turns into its own timer (min of its timeout and the time left), and the client's
 * disconnect reaches attempts through the client's own signal. So a request that calls no subgraph
 * costs nothing here, and nothing is left to release when it ends.
 */
export function createRequestScope(options: RequestScopeOptions): RequestScope {
  const now = options.now ?? performance.now.bind(performance);
  return {
    deadlineMs: options.deadlineMs,
    deadlineAt: now() + options.deadlineMs,
    signal: options.clientSignal ?? NEVER,
    subgraphsCalled: new Set(),
    stale: [],
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
