// OpenTelemetry tracing of the router: one tracer provider per router, W3C trace context in and out.
import { ROOT_CONTEXT, trace, type Context, type Span, type TextMapGetter, type TextMapSetter, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';

/** Attribute names of Switchyard's own spans (OpenTelemetry semantic conventions where one exists). */
export const SPAN_ATTRIBUTE = {
  subgraph: 'switchyard.subgraph',
  attempt: 'switchyard.attempt',
  outcome: 'switchyard.outcome',
  errorCode: 'switchyard.error.code',
  cacheHit: 'switchyard.cache.hit',
  cacheAgeMs: 'switchyard.cache.age_ms',
  cacheHits: 'switchyard.cache.hits',
  cacheMisses: 'switchyard.cache.misses',
  requestId: 'switchyard.request_id',
  complete: 'switchyard.complete',
  operationName: 'graphql.operation.name',
  operationType: 'graphql.operation.type',
  httpMethod: 'http.request.method',
  httpStatus: 'http.response.status_code',
  urlPath: 'url.path',
  serverAddress: 'server.address',
  serverPort: 'server.port',
} as const;

export interface TracingOptions {
  /** `service.name` of the spans. Default `switchyard`. */
  serviceName?: string;
  /** OTLP/HTTP endpoint (the collector's base URL, `/v1/traces` is appended) or undefined. */
  otlpEndpoint?: string;
  /** Share of new traces recorded, 0..1; a trace continued from a caller follows the caller's decision. Default 1. */
  sampleRatio?: number;
  /** Where finished spans go instead of OTLP (tests: an in-memory exporter), exported at once. */
  exporter?: SpanExporter;
}

/** The router's tracer and what it needs to continue and propagate traces; absent when tracing is off. */
export interface Tracing {
  readonly tracer: Tracer;
  /** Flushes the spans still buffered and stops exporting (on shutdown). */
  shutdown(): Promise<void>;
}

/**
 * Tracing is on when an OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT) or an exporter is given; off, the
 * router creates no span at all. The provider is the router's own, not registered globally, so several
 * routers in one process (tests) keep their spans apart and no other library's instrumentation is
 * switched on by side effect. Spans go out through a bounded batch processor: a slow or failing
 * collector drops spans, it never makes a request wait (the exporter sends off the request path and
 * its failures are only logged by the SDK).
 */
export function createTracing(options: TracingOptions): Tracing | undefined {
  let processor: SpanProcessor;
  if (options.exporter) processor = new SimpleSpanProcessor(options.exporter);
  else if (options.otlpEndpoint) {
    const url = `${options.otlpEndpoint.replace(/\/+$/, '')}/v1/traces`;
    processor = new BatchSpanProcessor(new OTLPTraceExporter({ url, timeoutMillis: 5_000 }), {
      maxQueueSize: 4_096,
      maxExportBatchSize: 512,
      scheduledDelayMillis: 1_000,
      exportTimeoutMillis: 5_000,
    });
  } else return undefined;
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.serviceName ?? 'switchyard' }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(options.sampleRatio ?? 1) }),
    spanProcessors: [processor],
  });
  return {
    tracer: provider.getTracer('switchyard'),
    shutdown: () => provider.shutdown(),
  };
}

const w3c = new W3CTraceContextPropagator();

const headersGetter: TextMapGetter<Headers> = {
  keys: (carrier) => [...carrier.keys()],
  get: (carrier, key) => carrier.get(key) ?? undefined,
};

const recordSetter: TextMapSetter<Record<string, string>> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};

/** The trace context of an incoming request (`traceparent`, `tracestate`), or the root context. */
export function extractTraceContext(headers: Headers): Context {
  if (!headers.has('traceparent')) return ROOT_CONTEXT;
  return w3c.extract(ROOT_CONTEXT, headers, headersGetter);
}

/** Adds `traceparent` (and `tracestate`) of `span` to outgoing headers. */
export function injectTraceHeaders(span: Span, headers: Record<string, string>): Record<string, string> {
  w3c.inject(trace.setSpan(ROOT_CONTEXT, span), headers, recordSetter);
  return headers;
}
