// The executor of one subgraph: the resilience stack around the HTTP transport, and failures shaped for stitching.
import type { ExecutionResult } from 'graphql';
import type { ExecutionRequest, Executor } from '@graphql-tools/utils';
import type { Tracer } from '@opentelemetry/api';
import type { Dispatcher } from 'undici';
import { configDefaults } from '../config/schema.js';
import { clientError } from '../errors/client-error.js';
import { withCircuitBreaker } from '../resilience/circuit-breaker.js';
import { withDeduplication } from '../resilience/deduplicate.js';
import { withHedging } from '../resilience/hedge.js';
import { failureResult } from '../resilience/operation-shape.js';
import { withAttemptTelemetry } from '../resilience/attempt-telemetry.js';
import { withRetry } from '../resilience/retry.js';
import { isUpstreamFailure, UpstreamFailure, type CallHandler, type CallWrapper, type SubgraphCall } from '../resilience/subgraph-call.js';
import type { ResolvedRoute, SubgraphHealth } from '../resilience/subgraph-health.js';
import { withTimeout } from '../resilience/timeout.js';
import { applyHeaderRules, withSubgraphToken } from '../resilience/subgraph-token.js';
import type { RouteMetadata } from '../registry/route.js';
import { principalOf, requestStateOf } from '../request/request-state.js';
import type { SubgraphTokenSource } from '../security/subgraph-tokens.js';
import type { RouterMetrics } from '../telemetry/metrics.js';
import { enrichSubgraphResult } from './subgraph-errors.js';
import { bodyOf, createHttpTransport, requestBody } from './subgraph-transport.js';
import { callBudgetOf } from '../request/call-budget.js';

export interface SubgraphExecutorOptions {
  name: string;
  url: string;
  route: ResolvedRoute;
  health: SubgraphHealth;
  /** Shared keep-alive connection pool (undici Agent), owned by the router. */
  dispatcher: Dispatcher;
  metrics?: RouterMetrics;
  /** Deadline of calls whose request set none (resilience off, tests, tools), in ms. Default: the config's `defaultDeadlineMs`. */
  defaultDeadlineMs?: number;
  /** false: no fallback, retry, hedge or breaker, only the timeout (the layer switched off). Default true. */
  resilience?: boolean;
  /** Per-subgraph tokens: every call carries a token made for this subgraph and the request's principal (off when absent). */
  tokens?: SubgraphTokenSource;
  /** Header rules of the route (rename, drop, add). */
  headerRules?: RouteMetadata['headers'];
  /** Tracing on: a client span per attempt, `traceparent` sent to the subgraph. */
  tracer?: Tracer;
}

/**
 * Builds the executor. The stack, from the outside in:
 *   subgraph token → deduplication (queries) → retry (queries) → hedge (queries) → attempt telemetry → circuit breaker → timeout → HTTP
 * so every attempt, first, retry or hedge, is counted, traced, checked against the breaker and bounded by
 * min(subgraph timeout, time left before the request deadline).
 *
 * The executor never throws: a call that fails for good becomes a result shaped like the request,
 * with a null and a catalogue error (code, subgraph, problem details) per root field and per entity,
 * which the stitching layer places at the client paths they belong to. GraphQL errors from the
 * subgraph pass through enriched and redacted.
 */
export function createSubgraphExecutor(options: SubgraphExecutorOptions): Executor {
  const { name, route, health, metrics } = options;
  const defaultDeadlineMs = options.defaultDeadlineMs ?? configDefaults.defaultDeadlineMs;
  const resilient = options.resilience ?? true;
  const wrappers: CallWrapper[] = [];
  if (options.tokens) {
    wrappers.push(
      withSubgraphToken({
        source: options.tokens,
        principalOf,
        headerRules: options.headerRules,
        onToken: (result) => metrics?.subgraphTokens.inc({ subgraph: name, result }),
      }),
    );
  } else if (options.headerRules) {
    const headers = applyHeaderRules({}, options.headerRules);
    wrappers.push((next) => (call) => next({ ...call, headers: { ...call.headers, ...headers } }));
  }
  // After the token (callers with different tokens never share), before retries and hedges (one logical call is shared).
  if (route.deduplicate) {
    wrappers.push(
      withDeduplication({
        keyOf: (call) => (call.headers ? `${JSON.stringify(call.headers)}\n${requestBody(call.request)}` : requestBody(call.request)),
        copy: (result) => {
          const body = bodyOf(result);
          return body === undefined ? structuredClone(result) : (JSON.parse(body) as ExecutionResult);
        },
        onShared: () => metrics?.deduplicated.inc({ subgraph: name }),
      }),
    );
  }
  if (resilient && route.retry.enabled) {
    wrappers.push(
      withRetry({
        maxRetries: route.retry.maxRetries,
        budget: health.extra,
        typicalLatencyMs: () => health.latency.percentile(50),
        onRetry: () => metrics?.retries.inc({ subgraph: name }),
      }),
    );
  }
  if (resilient && route.hedge.enabled) {
    wrappers.push(
      withHedging({
        delayMs: () => health.latency.percentile(95),
        floorMs: route.hedge.floorMs,
        extra: health.extra,
        hedges: health.hedges,
        recordExtraCall: !route.retry.enabled,
        // withTimeout sits inside and owns each attempt's controller: the hedge's default `abortVia: 'hook'`.
        onHedge: () => metrics?.hedges.inc({ subgraph: name }),
        onBusy: () => metrics?.hedgesBusy.inc({ subgraph: name }),
      }),
    );
  }
  wrappers.push(withAttemptTelemetry({ subgraph: name, latency: health.latency, metrics, tracer: options.tracer }));
  if (resilient && route.breaker.enabled) wrappers.push(withCircuitBreaker(health.breaker, { slowCallMs: route.breaker.slowCallMs, typicalMs: () => health.latency.percentile(95) }));
  wrappers.push(withTimeout(route.timeoutMs));
  const handler: CallHandler = wrappers.reduceRight<CallHandler>((next, wrap) => wrap(next), createHttpTransport({ name, url: options.url, dispatcher: options.dispatcher }));

  return async function executeOnSubgraph(request: ExecutionRequest): Promise<ExecutionResult> {
    const state = requestStateOf(request.context);
    const skipped = state.skipped?.get(name);
    if (skipped) return failureResult(request, (path) => clientError(skipped.code, skipped.message, { subgraph: name, path }));
    (state.subgraphsCalled ??= new Set()).add(name);
    // A deferred part's call has its own signal (a child of the request's) and deadline.
    const budget = callBudgetOf(request);
    const call: SubgraphCall = {
      subgraph: name,
      request,
      isQuery: request.operationType !== 'mutation',
      // The client's disconnect aborts every call of its request, whatever the resilience switch.
      // A call the router did not start (a tool, a test) is cancelled by its own signal, if any.
      signal: budget?.signal ?? (state.started ? state.signal : (request.signal ?? new AbortController().signal)),
      deadlineAt: budget?.deadlineAt ?? state.deadlineAt ?? performance.now() + defaultDeadlineMs,
      attempt: 'first',
    };
    try {
      return enrichSubgraphResult(await handler(call), name);
    } catch (error) {
      const failure = isUpstreamFailure(error) ? error : new UpstreamFailure('SUBGRAPH_UNAVAILABLE', 'network', `subgraph "${name}" could not be called`);
      // An HTTP answer that was not a GraphQL response says its status: the section was lost, not refused by the subgraph.
      const extensions = failure.kind === 'http' && failure.status !== undefined ? { subgraphStatus: failure.status } : undefined;
      return failureResult(request, (path) => clientError(failure.code, failure.message, { subgraph: name, path, extensions }));
    }
  } as Executor;
}
