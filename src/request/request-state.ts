// One request's state: made by the first hook that asks (requestStateOf), started on the served graph by use-request-state.ts, read everywhere.
import { setMaxListeners } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { OperationDefinitionNode } from 'graphql';
import type { ErrorCode } from '../errors/codes.js';
// The types of the values the state carries live in this layer or below (decision 025); the two the
// gateway owns, `graph` and `plan`, are declared on the class by gateway/served-graph.ts, and the
// subscription a request opened by subscriptions/client-subscription.ts.
import type { CostEstimate } from './cost-estimate.js';
import type { Decision } from './decision.js';
import type { Principal } from './principal.js';
import type { RequestTelemetry } from './request-telemetry.js';

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

/** What the metrics plugin keeps of a request until its response: when it started, the operation's label. */
export interface MetricsRecord {
  /** `performance.now()` when the request was parsed. */
  readonly started: number;
  /** The operation name the client sent, or the first one in the document (undefined: not known yet). */
  operationName: string | null | undefined;
}

/**
 * The incremental delivery formats (decision 027): `deferSpec=20220824` (`incremental: [{data,
 * path, label}]`, what Apollo Client and Relay read) and `incrementalSpec=v0.2` (graphql-js 17's
 * `pending` / `incremental` / `completed`).
 */
export type IncrementalFormat = 'defer-20220824' | 'incremental-v0.2';

/** A streamed answer (a deferred query's payloads): how many went out and when, and when the stream ended. */
export interface StreamRecord {
  /** Settles when the last payload went out, or the client left, or the stream failed. */
  readonly ended: Promise<void>;
  payloads: number;
  /** `performance.now()` of the first and the last payload (undefined: none yet). */
  firstAt: number | undefined;
  lastAt: number | undefined;
  /** The error codes of every payload so far, and whether the answer so far is whole (the last payload's completeness). */
  errorCodes: string[];
  complete: boolean;
  /** A subscription's end: `client`, `complete`, or the code of the error it ended with (undefined: not ended, or not a subscription). */
  endReason?: string;
}

/** What the audit plugin gathers of a request until its row is written. */
export interface AuditDraft {
  readonly at: Date;
  /** `performance.now()` at the start. */
  readonly started: number;
  readonly requestId: string;
  readonly traceId: string | null;
  operationName: string | null;
  operationHash: string | null;
  subject: string | null;
  client: string | null;
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
 * | `telemetry` | use-telemetry (request start) | its phase spans and access line, audit, subgraph attempts (trace headers, spans) |
 * | `metrics` | use-metrics (request parse) | use-metrics (response) |
 * | `audit` | use-audit (request start) | use-audit (response) |
 * | `graph` | use-request-state (request parse, `start`) | the schema factory, authorization, cost, query plans |
 * | `principal` | use-authentication | authorization, rate limit, audit, operation registry, subgraph tokens, section cache |
 * | `operation`, `operationName` | use-request-state (execution start) | telemetry, audit, cost, rate limit, deadline, completeness |
 * | `decision` | use-authorization (only when it denies something) | field guards, query plans |
 * | `plan` | planOfRequest (gateway/plan/request-plan.ts), first asked by use-cost-limit or use-query-plans | both |
 * | `cost`, `skipped` | use-cost-limit | rate limit, subgraph executors |
 * | `deadlineMs`, `deadlineAt` | use-deadline (resilience on) | subgraph executors, section cache |
 * | `signal` | made on first read | subgraph executors |
 * | `deferDeadlineMs` | use-deadline | incremental delivery |
 * | `incremental` | use-incremental-delivery | query plans (a deferred query streams only in a format the client reads) |
 * | `stream` | the stream record (streaming/stream-record.ts), written by incremental delivery (gateway/deliver/) and subscriptions (client-subscription.ts) | metrics, audit, telemetry, queue: `whenAnswered` |
 * | `subscription` | OpenSubscriptions.open (subscriptions/, through use-subscriptions) | the transport that writes it (websocket-server.ts, http-subscriptions.ts, use-subscriptions) |
 * | `subgraphsCalled` | subgraph executors | access line, audit row |
 * | `stale`, `cache` | section cache | use-completeness |
 * | `refusal` | `errorResponse`, the refusals thrown in `onParams` (request validation, trusted documents), and use-introspection-permission's: a refusal before execution | access line, audit row |
 *
 * The state is made by the first hook that asks for it (`requestStateOf`, in use-telemetry's
 * `onRequest` when telemetry is on) and joins the context then; `graph` is set when the request is
 * parsed and is read only after. `graph` and `plan` are the gateway's types: gateway/served-graph.ts
 * declares them on this class (module augmentation), as subscriptions/client-subscription.ts
 * declares `subscription`, so this layer imports nothing from above.
 */
export class RequestState {
  /** The request's id and trace (telemetry on; absent before use-telemetry's first hook). */
  telemetry: RequestTelemetry | undefined = undefined;
  /** The metrics plugin's record (metrics on). */
  metrics: MetricsRecord | undefined = undefined;
  /** The audit row being gathered (audit on). */
  audit: AuditDraft | undefined = undefined;
  /** The caller (undefined: anonymous, or authentication off). */
  principal: Principal | undefined = undefined;
  /** The operation that executes (GraphQL spec "GetOperation()"); undefined until execution starts, or when none can be selected. */
  operation: OperationDefinitionNode | undefined = undefined;
  /** Its name, when it has one. */
  operationName: string | undefined = undefined;
  /** The authorization decision, set only when it denies some fields (undefined: nothing is denied). */
  decision: Decision | undefined = undefined;
  /** The estimated cost (absent for subscriptions, or before costing). */
  cost: CostEstimate | undefined = undefined;
  /** Subgraphs this request must not call (cost budget exceeded). */
  skipped: Map<string, SkippedSubgraph> | undefined = undefined;
  /** The request's deadline budget, in ms (set by use-deadline; absent: each call gets the default deadline). */
  deadlineMs: number | undefined = undefined;
  /** Absolute deadline in `performance.now()` ms: every attempt's own timer fires at min(its timeout, this). */
  deadlineAt: number | undefined = undefined;
  /** The budget of a query's deferred parts, in ms (set by use-deadline with the request's; absent: the default). */
  deferDeadlineMs: number | undefined = undefined;
  /** The incremental format the client accepts (use-incremental-delivery); undefined: one answer, `@defer` or not. */
  incremental: IncrementalFormat | undefined = undefined;
  /** Set when the answer is a stream of payloads (gateway/deliver/): the response's end is the stream's. */
  stream: StreamRecord | undefined = undefined;
  /** Subgraphs this request called (access line, audit row). */
  subgraphsCalled: Set<string> | undefined = undefined;
  /** Sections served from stale copies. */
  stale: StaleSection[] | undefined = undefined;
  /** Set by the section cache when the request ran a plan whose parts it considered. */
  cache: CacheNotes | undefined = undefined;
  /** The code of the refusal that answered the request before execution (`errorResponse`, thrown in `onParams`, or a production introspection refused), for the access line and audit row. */
  refusal: ErrorCode | undefined = undefined;
  #request: Request | undefined = undefined;
  #response: ServerResponse | undefined = undefined;
  #signal: AbortSignal | undefined = undefined;
  /** Stops listening for the client's leaving (the signal's listener on the response). */
  #unlisten: (() => void) | undefined = undefined;
  #started = false;

  constructor() {
    // The fields of the layers above (`graph`, `plan`: gateway/served-graph.ts; `subscription`:
    // subscriptions/client-subscription.ts), made here so every state has the same shape.
    const own = this as { graph: unknown; plan: unknown; subscription: unknown };
    own.graph = undefined;
    own.plan = undefined;
    own.subscription = undefined;
  }

  /**
   * The request starts on `graph` (use-request-state, when the request is parsed): its schema serves
   * the request, whatever swap happens meanwhile. `request` and `response` give the client's signal.
   */
  start(graph: RequestState['graph'], request?: Request, response?: ServerResponse): void {
    this.graph = graph;
    this.#started = true;
    this.#request = request;
    this.#response = response;
  }

  /**
   * The answer outlives its HTTP request (an open subscription, held for hours): the state lets go of
   * the request and response, so the state kept for the stream's end holds neither. Its signal then
   * never fires; the stream ends by its own means.
   */
  detach(): void {
    this.#unlisten?.();
    this.#unlisten = undefined;
    this.#request = undefined;
    this.#response = undefined;
    this.#signal = undefined;
  }

  /** The router started this request on a graph (false: a context it did not make, e.g. a unit test's). */
  get started(): boolean {
    return this.#started;
  }

  /**
   * Fires when the client goes away before its answer is written (its reason is then a DOMException;
   * the subgraph layer reads it as `client`). Made on first read, so a request that calls no subgraph
   * listens to nothing.
   */
  get signal(): AbortSignal {
    if (this.#signal) return this.#signal;
    const client = clientSignalOf(this.#response, this.#request);
    this.#unlisten = client?.unlisten;
    return (this.#signal = client?.signal ?? NEVER);
  }

  /**
   * Starts the deadline. It holds no timer: every subgraph attempt turns it into its own (min of its
   * timeout and the time left), so nothing is left to release when the request ends.
   */
  startDeadline(deadlineMs: number, now: number = performance.now()): void {
    this.deadlineMs = deadlineMs;
    this.deadlineAt = now + deadlineMs;
  }

  /**
   * Runs `done` when the answer is over: now for one answer, at the stream's end for a stream (the
   * response goes out with the first payload). What is written once per request (the audit row, the
   * access line, the request span, the duration) waits for it.
   */
  whenAnswered(done: () => void): void {
    if (this.stream) void this.stream.ended.then(done, done);
    else done();
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

/**
 * The state of the request whose GraphQL context this is, made and attached on first use: the first
 * hook of a request (or a unit test's bare context) gets a fresh one, every later reader the same
 * one. A value that is not an object (no context at all) gets a state of its own that nobody else
 * will see.
 */
export function requestStateOf(context: unknown): RequestState {
  if (typeof context !== 'object' || context === null) return new RequestState();
  return ((context as Record<symbol, RequestState | undefined>)[STATE] ??= new RequestState());
}

/** The caller of a GraphQL context (undefined: anonymous). */
export function principalOf(context: unknown): Principal | undefined {
  return requestStateOf(context).principal;
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
function clientSignalOf(res: ServerResponse | undefined, request: Request | undefined): { signal: AbortSignal; unlisten?: () => void } | undefined {
  if (!res || typeof res.once !== 'function' || !('writableFinished' in res)) return request?.signal && { signal: request.signal };
  const controller = new AbortController();
  // Every subgraph call of the request listens to it while it runs (and lets go after): a plan with
  // more than ten fetches in flight is no leak, so Node's warning at eleven listeners is off here.
  setMaxListeners(0, controller.signal);
  const abortUnlessAnswered = () => {
    if (!res.writableFinished) controller.abort(new DOMException('the client closed the connection', 'AbortError'));
  };
  if (res.destroyed) abortUnlessAnswered();
  else res.once('close', abortUnlessAnswered);
  return { signal: controller.signal, unlisten: () => res.off('close', abortUnlessAnswered) };
}
