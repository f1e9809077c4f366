// Every attempt to a subgraph, first, retry or hedge: counted, timed, traced as its own client span.
import { getCurrentOtelContext } from '@envelop/opentelemetry';
import { SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import type { ExecutionRequest } from '@graphql-tools/utils';
import { requestStateOf } from '../request/request-state.js';
import type { RouterMetrics, SubgraphOutcome } from '../telemetry/metrics.js';
import { injectTraceHeaders, SPAN_ATTRIBUTE } from '../telemetry/tracing.js';
import type { LatencyTracker } from './latency-tracker.js';
import { isUpstreamFailure, type CallWrapper, type UpstreamFailure } from './subgraph-call.js';

const FAILURE_OUTCOME: Record<UpstreamFailure['kind'], SubgraphOutcome> = {
  network: 'network_error',
  http: 'http_error',
  timeout: 'timeout',
  deadline: 'deadline',
  cancelled: 'cancelled',
  circuit_open: 'circuit_open',
  token: 'token_error',
};

export interface AttemptTelemetryOptions {
  subgraph: string;
  /** Latency of answered attempts feeds the subgraph's tracker (hedge delay, retry budget). */
  latency: LatencyTracker;
  metrics?: RouterMetrics;
  /** Tracing on: one CLIENT span per attempt, its `traceparent` sent to the subgraph. */
  tracer?: Tracer;
}

/**
 * One wrapper for what every attempt reports, so an attempt pays for one async frame, not three:
 * - `switchyard_subgraph_requests_total{subgraph,outcome}` and the latency histogram;
 * - tracing on: a CLIENT span `subgraph <name>`, child of the request's execute span, with the
 *   subgraph, the client's operation, the attempt kind (first, retry, hedge), the outcome and the
 *   error code; its context goes to the subgraph as `traceparent` (and `tracestate`), so the
 *   subgraph's own spans hang under the attempt that called it;
 * - tracing off: a caller's `traceparent` is forwarded unchanged, so its trace is not cut here.
 */
export function withAttemptTelemetry(options: AttemptTelemetryOptions): CallWrapper {
  const { subgraph, latency, tracer } = options;
  const requests = options.metrics?.subgraphRequests;
  const duration = options.metrics?.subgraphDuration.labels(subgraph);
  const spanName = `subgraph ${subgraph}`;
  return (next) =>
    async function observedAttempt(call) {
      const started = performance.now();
      let outcome: SubgraphOutcome = 'ok';
      let span;
      if (tracer) {
        const telemetry = requestStateOf(call.request.context).telemetry;
        span = tracer.startSpan(
          spanName,
          {
            kind: SpanKind.CLIENT,
            attributes: {
              [SPAN_ATTRIBUTE.subgraph]: subgraph,
              [SPAN_ATTRIBUTE.attempt]: call.attempt,
              [SPAN_ATTRIBUTE.operationName]: telemetry?.operationName ?? undefined,
              [SPAN_ATTRIBUTE.operationType]: call.request.operationType,
              [SPAN_ATTRIBUTE.cacheHit]: false,
            },
          },
          parentContextOf(call.request),
        );
        call = { ...call, headers: injectTraceHeaders(span, { ...call.headers }) };
      } else {
        const forwarded = requestStateOf(call.request.context).telemetry?.forwardedTraceHeaders;
        if (forwarded) call = { ...call, headers: { ...call.headers, ...forwarded } };
      }
      try {
        const result = await next(call);
        if (result.errors?.length) outcome = 'graphql_error';
        const elapsed = performance.now() - started;
        latency.observe(elapsed);
        duration?.observe(elapsed / 1000);
        return result;
      } catch (error) {
        outcome = isUpstreamFailure(error) ? FAILURE_OUTCOME[error.kind] : 'network_error';
        if (span) {
          span.setAttribute(SPAN_ATTRIBUTE.errorCode, isUpstreamFailure(error) ? error.code : 'SUBGRAPH_UNAVAILABLE');
          span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
        }
        throw error;
      } finally {
        requests?.inc({ subgraph, outcome });
        if (span) {
          span.setAttribute(SPAN_ATTRIBUTE.outcome, outcome);
          span.end();
        }
      }
    };
}

/** Parent of subgraph spans: the request's execute span (set by @envelop/opentelemetry on the GraphQL context). */
function parentContextOf(request: ExecutionRequest) {
  return getCurrentOtelContext(request.context ?? {});
}
