// Request identity, the request's trace (server span, GraphQL phases) and one access log line per request.
import { randomFillSync, randomUUID } from 'node:crypto';
import { SpanKind, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api';
import { setCurrentOtelContext, useOpenTelemetry } from '@envelop/opentelemetry';
import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { alsoOnSubscribe } from './subscribe-hooks.js';
import { executingOperation } from '../request/operation-analysis.js';
import { requestStateOf, type RequestState } from '../request/request-state.js';
import type { Logger } from '../telemetry/logger.js';
import { answerOutcome, type RequestTelemetry } from '../telemetry/request-telemetry.js';
import { extractTraceContext, SPAN_ATTRIBUTE, type Tracing } from '../telemetry/tracing.js';

export interface TelemetryOptions {
  logger: Logger;
  /** Absent: tracing is off (no span is created; a caller's trace headers are still forwarded to subgraphs). */
  tracing?: Tracing;
  /** Path of the GraphQL endpoint; other paths (metrics, health, dashboard) get no request id, span or access line. Default `/graphql`. */
  endpoint?: string;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;
const TRACEPARENT = /^([\da-f]{2})-([\da-f]{32})-([\da-f]{16})-[\da-f]{2}$/;
const ZERO_TRACE_ID = '0'.repeat(32);
const ZERO_PARENT_ID = '0'.repeat(16);

/** The trace id of a version-00-shaped `traceparent` that W3C Trace Context §3.2.2 accepts (no all-zero ids, version not ff), else null. */
function validTraceparent(value: string): string | null {
  const match = TRACEPARENT.exec(value);
  if (!match || match[1] === 'ff' || match[2] === ZERO_TRACE_ID || match[3] === ZERO_PARENT_ID) return null;
  return match[2]!;
}

/**
 * Runs first on the GraphQL endpoint:
 * 1. Request id (the client's `x-request-id` when sane, else a UUID; echoed as `x-request-id`).
 * 2. Tracing on: a SERVER span continuing the caller's `traceparent`; parse, validate and execute
 *    (`@envelop/opentelemetry`) become its children, and the subgraph attempts children of execute.
 *    Tracing off: the caller's trace headers are kept so the subgraph calls carry them unchanged;
 *    without them a new trace id is made (sampled flag off), so every subgraph call carries a
 *    `traceparent` and the access line and audit row its trace id.
 * 3. When the response leaves: the span ends with the status, and one JSON access line is logged
 *    with request id, trace id, operation, status, duration, subgraphs called, completeness.
 * What it learns of the request lives in the request's state (`telemetry`), where the audit and the
 * subgraph attempts read it too.
 */
export function useTelemetry(options: TelemetryOptions): Plugin[] {
  const { logger, tracing } = options;
  const endpoint = options.endpoint ?? '/graphql';
  const tracer = tracing?.tracer;
  const accessLog = logger.isLevelEnabled('info');

  const identity: Plugin = alsoOnSubscribe({
    onRequest({ request, url, serverContext }) {
      if (url.pathname !== endpoint) return;
      requestStateOf(serverContext).telemetry = startRequestTelemetry(request, url, tracer);
    },
    onParams({ context, params }) {
      const telemetry = requestStateOf(context).telemetry;
      if (telemetry && params.operationName) telemetry.operationName = params.operationName;
    },
    onParse: tracer
      ? ({ context }) => {
          const span = phaseSpan(context, 'graphql.parse');
          return span ? ({ result }) => endPhase(span, result instanceof Error ? result.message : undefined) : undefined;
        }
      : undefined,
    onValidate: tracer
      ? ({ context }) => {
          const span = phaseSpan(context, 'graphql.validate');
          return span ? ({ valid }) => endPhase(span, valid ? undefined : 'invalid document') : undefined;
        }
      : undefined,
    onExecute({ args }) {
      const telemetry = requestStateOf(args.contextValue).telemetry;
      if (!telemetry) return;
      const operation = executingOperation(args.contextValue, args.document, args.operationName);
      telemetry.operationName ??= operation?.name?.value ?? null;
      if (telemetry.span && telemetry.traceContext) {
        if (telemetry.operationName) telemetry.span.setAttribute(SPAN_ATTRIBUTE.operationName, telemetry.operationName);
        if (operation) telemetry.span.setAttribute(SPAN_ATTRIBUTE.operationType, operation.operation);
        // The execute span of @envelop/opentelemetry (next plugin) starts under the request span.
        setCurrentOtelContext(args.contextValue, telemetry.traceContext);
      }
    },
    onExecutionResult({ context, result }) {
      const telemetry = requestStateOf(context).telemetry;
      if (telemetry) noteResult(telemetry, result);
    },
    onResponse({ request, response, serverContext }) {
      const state = requestStateOf(serverContext);
      const telemetry = state.telemetry;
      if (!telemetry) return;
      response.headers.set('x-request-id', telemetry.requestId);
      const status = response.status;
      // Only the method is kept for the end: a subscription's end may come hours later, and must not hold its request.
      const method = request.method;
      // A deferred query's span and access line close with its last payload: its deferred fetches are under the span.
      state.whenAnswered(() => {
        const outcome = answerOutcome(telemetry, status, state.refusal, state.stream);
        if (telemetry.span) endRequestSpan(telemetry.span, status, outcome.complete);
        if (accessLog) logger.info(accessLine(method, status, state, telemetry, outcome), 'request');
      });
    },
  });

  function phaseSpan(context: unknown, name: string): Span | undefined {
    const telemetry = requestStateOf(context).telemetry;
    if (!tracer || !telemetry?.traceContext) return undefined;
    return tracer.startSpan(name, { kind: SpanKind.INTERNAL }, telemetry.traceContext);
  }

  if (!tracing) return [identity];
  // The execute span: operation name and type; never the document (the plugin would walk it on every
  // request to look for inline values, which could be personal data), variables or results.
  const execution = useOpenTelemetry({ resolvers: false, document: false, variables: false, result: false }, tracingProviderOf(tracing), SpanKind.INTERNAL, {}, 'switchyard') as Plugin;
  return [identity, execution];
}

/** Step 1 and 2: the request's id and trace, and with tracing on its SERVER span. */
function startRequestTelemetry(request: Request, url: URL, tracer: Tracer | undefined): RequestTelemetry {
  const incoming = request.headers.get('x-request-id');
  const requestId = incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
  if (!tracer) return { requestId, ...forwardedTrace(request.headers), operationName: null, started: performance.now() };
  const parent = extractTraceContext(request.headers);
  const span = tracer.startSpan(
    `${request.method} ${url.pathname}`,
    { kind: SpanKind.SERVER, attributes: { [SPAN_ATTRIBUTE.httpMethod]: request.method, [SPAN_ATTRIBUTE.urlPath]: url.pathname, [SPAN_ATTRIBUTE.requestId]: requestId } },
    parent,
  );
  return { requestId, traceId: span.spanContext().traceId, span, traceContext: trace.setSpan(parent, span), operationName: null, started: performance.now() };
}

/** Tracing off: the caller's valid trace headers, forwarded unchanged, or a new trace for this request. */
function forwardedTrace(headers: Headers): { traceId: string; forwardedTraceHeaders: Record<string, string> } {
  const traceparent = headers.get('traceparent');
  const traceId = traceparent ? validTraceparent(traceparent) : null;
  if (traceparent && traceId) {
    const tracestate = headers.get('tracestate');
    return { traceId, forwardedTraceHeaders: tracestate ? { traceparent, tracestate } : { traceparent } };
  }
  // W3C Trace Context §3.2: no (valid) traceparent, so this router starts the trace. Nothing is
  // recorded, so the sampled flag is off; subgraphs, logs and the audit row still share the id.
  const ids = traceIdsHex();
  return { traceId: ids.slice(0, 32), forwardedTraceHeaders: { traceparent: `00-${ids.slice(0, 32)}-${ids.slice(32)}-00` } };
}

/** The error codes and completeness of a single GraphQL result (a stream or batch is left alone). */
function noteResult(telemetry: RequestTelemetry, result: unknown): void {
  if (Array.isArray(result) || !result || typeof result !== 'object' || Symbol.asyncIterator in result) return;
  const single = result as ExecutionResult;
  telemetry.errorCodes = single.errors?.map((e) => String(e.extensions?.code ?? 'INTERNAL_SERVER_ERROR'));
  const completeness = single.extensions?.completeness as { complete?: boolean } | undefined;
  telemetry.complete = completeness?.complete ?? !single.errors?.length;
}

function endRequestSpan(span: Span, status: number, complete: boolean): void {
  span.setAttribute(SPAN_ATTRIBUTE.httpStatus, status);
  span.setAttribute(SPAN_ATTRIBUTE.complete, complete);
  if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: `HTTP ${status}` });
  span.end();
}

/** Step 3: the access line's fields. */
function accessLine(method: string, status: number, state: RequestState, telemetry: RequestTelemetry, outcome: { errorCodes: string[]; complete: boolean }) {
  return {
    requestId: telemetry.requestId,
    traceId: telemetry.traceId,
    method,
    operation: telemetry.operationName,
    status,
    durationMs: Math.round((performance.now() - telemetry.started) * 10) / 10,
    subgraphs: [...(state.subgraphsCalled ?? [])],
    complete: outcome.complete,
    errorCodes: outcome.errorCodes.length ? [...new Set(outcome.errorCodes)] : undefined,
  };
}

function endPhase(span: Span, error: string | undefined): void {
  if (error) span.setStatus({ code: SpanStatusCode.ERROR, message: error });
  span.end();
}

/** @envelop/opentelemetry asks for a provider; the router's tracer is all it needs from it. */
function tracingProviderOf(tracing: Tracing) {
  return { getTracer: () => tracing.tracer };
}

/**
 * 24 random bytes in hex (a trace id and a parent id), from a pool filled 128 requests at a time:
 * one `randomBytes` call per request was a percent of a one-call request's CPU (as Node's own
 * `randomUUID` does, the pool amortises the system's random source; the bytes are used once).
 */
const TRACE_ID_BYTES = 24;
const traceIdPool = Buffer.allocUnsafe(TRACE_ID_BYTES * 128);
let traceIdOffset = traceIdPool.length;
function traceIdsHex(): string {
  if (traceIdOffset + TRACE_ID_BYTES > traceIdPool.length) {
    randomFillSync(traceIdPool);
    traceIdOffset = 0;
  }
  const hex = traceIdPool.toString('hex', traceIdOffset, traceIdOffset + TRACE_ID_BYTES);
  traceIdOffset += TRACE_ID_BYTES;
  return hex;
}
