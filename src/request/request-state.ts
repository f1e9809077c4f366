// One request's state: created once per GraphQL request (use-request-state.ts), read everywhere through requestStateOf().
import { setMaxListeners } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { OperationDefinitionNode } from 'graphql';
// Types only, erased at build: the state carries values the layers above own, never their code
// (see docs/decisions/011-one-request-state.md).
import type { QueryPlan } from '../gateway/plan/plan-types.js';
import type { ServedGraph } from '../gateway/served-graph.js';
import type { CostEstimate } from '../plugins/cost/estimate-cost.js';
import type { Principal } from '../security/authentication/principal.js';
import type { Decision } from '../security/authorization.js';

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

/** A subgraph a request must not call, and why (e.g. its share of the estimated cost is over its budget). */
export interface SkippedSubgraph {
  code: 'SUBGRAPH_COST_EXCEEDED';
  message: string;
}

/** A signal that never fires, for requests without a client connection or signal. */
const NEVER = new AbortController().signal;
// Shared by every such request's calls, each of which releases its listener when it ends.
setMaxListeners(0, NEVER);

/**
 * Everything the router knows of one GraphQL request, in the order it learns it. One object per
 * request, with a fixed shape: the fields start empty and the plugins fill them in plugin order
 * (router.ts); collections are made on first use, so a request that never needs one pays nothing.
 *
 * | field | written by | read by |
 * |---|---|---|
 * | `graph` | use-request-state (request start) | the schema factory, authorization, cost, query plans |
 * | `principal` | use-authentication | authorization, rate limit, audit, operation registry, subgraph tokens, section cache |
 * | `operation`, `operationName` | use-request-state (execution start) | telemetry, audit, cost, rate limit, deadline, completeness |
 * | `decision` | use-authorization (only when it denies something) | field guards, query plans |
 * | `plan` | planOfRequest (gateway/plan/request-plan.ts), first asked by use-cost-limit or use-query-plans | both |
 * | `cost`, `skipped` | use-cost-limit | rate limit, subgraph executors |
 * | `deadlineMs`, `deadlineAt` | use-deadline (resilience on) | subgraph executors, section cache |
 * | `signal` | made on first read | subgraph executors |
 * | `subgraphsCalled` | subgraph executors | access line, audit row |
 * | `stale`, `cache` | section cache | use-completeness |
 */
export class RequestState {
  /** The graph the request started on: its schema serves the request, whatever swap happens meanwhile. */
  readonly graph: ServedGraph;
  /** The caller (undefined: anonymous, or authentication off). */
  principal: Principal | undefined = undefined;
  /** The operation that executes (GraphQL spec "GetOperation()"); undefined until execution starts, or when none can be selected. */
  operation: OperationDefinitionNode | undefined = undefined;
  /** Its name, when it has one. */
  operationName: string | undefined = undefined;
  /** The authorization decision, set only when it denies some fields (undefined: nothing is denied). */
  decision: Decision | undefined = undefined;
  /** The query plan the request runs, once looked up (`planOfRequest`, by cost or query plans, whichever asks first); null: none, stitching runs it. */
  plan: QueryPlan | null | undefined = undefined;
  /** The estimated cost (absent for subscriptions, or before costing). */
  cost: CostEstimate | undefined = undefined;
  /** Subgraphs this request must not call (cost budget exceeded). */
  skipped: Map<string, SkippedSubgraph> | undefined = undefined;
  /** The request's deadline budget, in ms (set by use-deadline; absent: each call gets the default deadline). */
  deadlineMs: number | undefined = undefined;
  /** Absolute deadline in `performance.now()` ms: every attempt's own timer fires at min(its timeout, this). */
  deadlineAt: number | undefined = undefined;
  /** Subgraphs this request called (access line, audit row). */
  subgraphsCalled: Set<string> | undefined = undefined;
  /** Sections served from stale copies. */
  stale: StaleSection[] | undefined = undefined;
  /** Set by the section cache when the request ran a plan whose parts it considered. */
  cache: CacheNotes | undefined = undefined;
  readonly #request: Request | undefined;
  readonly #response: ServerResponse | undefined;
  #signal: AbortSignal | undefined = undefined;

  constructor(graph: ServedGraph, request?: Request, response?: ServerResponse) {
    this.graph = graph;
    this.#request = request;
    this.#response = response;
  }

  /**
   * Fires when the client goes away before its answer is written (its reason is then a DOMException;
   * the subgraph layer reads it as `client`). Made on first read, so a request that calls no subgraph
   * listens to nothing.
   */
  get signal(): AbortSignal {
    return (this.#signal ??= clientSignalOf(this.#response, this.#request) ?? NEVER);
  }

  /**
   * Starts the deadline. It holds no timer: every subgraph attempt turns it into its own (min of its
   * timeout and the time left), so nothing is left to release when the request ends.
   */
  startDeadline(deadlineMs: number, now: number = performance.now()): void {
    this.deadlineMs = deadlineMs;
    this.deadlineAt = now + deadlineMs;
  }

  /** Marks a subgraph as not to be called by this request. */
  skip(subgraph: string, reason: SkippedSubgraph): void {
    (this.skipped ??= new Map()).set(subgraph, reason);
  }
}

/**
 * Where the state lives: a property of the GraphQL context (one read; the subgraph executors, the
 * field guards and the section cache receive that same context). Yoga's context is the server
 * context of the request, so the state is reachable from the request's first hook on.
 */
const STATE = Symbol('switchyard.request-state');

export function attachRequestState(context: object, state: RequestState): void {
  (context as Record<symbol, unknown>)[STATE] = state;
}

/** The state of the request whose GraphQL context this is; undefined for contexts the router did not make (unit tests, tools). */
export function requestStateOf(context: unknown): RequestState | undefined {
  return (context as Record<symbol, RequestState | undefined> | null | undefined)?.[STATE];
}

/** The caller of a GraphQL context (undefined: anonymous). */
export function principalOf(context: unknown): Principal | undefined {
  return requestStateOf(context)?.principal;
}

/**
 * A signal that fires when the client goes away before its answer is written.
 *
 * Behind Node's HTTP server the connection's own `close` event says so, on a native AbortController.
 * The Fetch API request's `signal` would say the same, but @whatwg-node/server builds it as a Proxy
 * whose every property read runs a string test; the timeout, hedge and retry wrappers read it several
 * times per subgraph call, which cost about 25 µs per product page in a profile
 * (`npm run bench -- --scenario resilience-overhead --cpu-prof`). Other servers (in-process calls,
 * other runtimes) use the request's signal.
 */
function clientSignalOf(res: ServerResponse | undefined, request: Request | undefined): AbortSignal | undefined {
  if (!res || typeof res.once !== 'function' || !('writableFinished' in res)) return request?.signal;
  const controller = new AbortController();
  // Every subgraph call of the request listens to it while it runs (and lets go after): a plan with
  // more than ten fetches in flight is no leak, so Node's warning at eleven listeners is off here.
  setMaxListeners(0, controller.signal);
  const abortUnlessAnswered = () => {
    if (!res.writableFinished) controller.abort(new DOMException('the client closed the connection', 'AbortError'));
  };
  if (res.destroyed) abortUnlessAnswered();
  else res.once('close', abortUnlessAnswered);
  return controller.signal;
}
