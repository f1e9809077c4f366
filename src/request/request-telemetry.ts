// What identifies one request in logs, traces and the audit log (made by use-telemetry, carried by the request state).
import type { Context, Span } from '@opentelemetry/api';

/** A request's id, its trace and its span, and what the access line and the audit row read of its answer. */
export interface RequestTelemetry {
  /** The client's `x-request-id` when it is sane, else a new UUID; echoed in the response. */
  readonly requestId: string;
  /** The trace this request belongs to: its own span's when tracing is on, else the caller's `traceparent`'s, else one made for it. */
  readonly traceId: string | null;
  /** The request's server span (tracing on). Its children: GraphQL phases, then one span per subgraph attempt. */
  readonly span?: Span;
  /** The trace context with the request span set, parent of the GraphQL phase spans. */
  readonly traceContext?: Context;
  /** Tracing off: the caller's `traceparent`/`tracestate`, forwarded unchanged so its trace still reaches the subgraphs, or a `traceparent` made for this request (sampled flag off). */
  readonly forwardedTraceHeaders?: Readonly<Record<string, string>>;
  /** Client operation name once known (labels of subgraph spans, the access line). */
  operationName: string | null;
  /** `performance.now()` at the start. */
  readonly started: number;
  /** Error codes of the GraphQL result, in order (absent when the request was refused before execution). */
  errorCodes?: string[];
  /** The result's own completeness (absent when there was no result). */
  complete?: boolean;
}
