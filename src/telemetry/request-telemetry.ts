// What identifies one request in logs, traces and the audit log: its request id, its trace, its span.
import type { Context, Span } from '@opentelemetry/api';

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

const byRequest = new WeakMap<Request, RequestTelemetry>();
const byContext = new WeakMap<object, RequestTelemetry>();

export function attachRequestTelemetry(request: Request, telemetry: RequestTelemetry): void {
  byRequest.set(request, telemetry);
}

/** Links the GraphQL context to its request's telemetry: the subgraph executors only see the context. */
export function linkRequestTelemetry(contextValue: object, telemetry: RequestTelemetry): void {
  byContext.set(contextValue, telemetry);
}

export function requestTelemetryOf(request: Request): RequestTelemetry | undefined {
  return byRequest.get(request);
}

export function requestTelemetryOfContext(contextValue: unknown): RequestTelemetry | undefined {
  return typeof contextValue === 'object' && contextValue !== null ? byContext.get(contextValue) : undefined;
}

/**
 * What the answer to a request said, for the access line and the audit row alike: the error codes of
 * its GraphQL result, or the code of the refusal that replaced it; and whether it was whole (a status
 * below 400 and a complete result).
 */
export function answerOutcome(telemetry: RequestTelemetry | undefined, status: number, refusalCode: string | undefined): { errorCodes: string[]; complete: boolean } {
  const errorCodes = telemetry?.errorCodes?.length ? telemetry.errorCodes : refusalCode ? [refusalCode] : [];
  return { errorCodes, complete: status < 400 && (telemetry?.complete ?? false) };
}
