// Prometheus endpoint and per-request metrics: requests by operation and status, request latency.
import type { Plugin } from 'graphql-yoga';
import { requestStateOf } from '../request/request-state.js';
import type { RouterMetrics } from '../telemetry/metrics.js';

export interface MetricsOptions {
  metrics: RouterMetrics;
  /** Path of the Prometheus text endpoint. Default `/metrics`. */
  endpoint?: string;
}

export function useMetrics(options: MetricsOptions): Plugin {
  const { metrics } = options;
  const endpoint = options.endpoint ?? '/metrics';
  return {
    onRequest({ request, url, endResponse, fetchAPI }) {
      if (url.pathname === endpoint && request.method === 'GET') {
        // Collecting is async (default process metrics); the response waits for it, not the event loop.
        return metrics.registry.metrics().then(function respondWithMetrics(text) {
          endResponse(new fetchAPI.Response(text, { status: 200, headers: { 'content-type': metrics.registry.contentType } }));
        });
      }
      return undefined;
    },
    // The record lives in the request's state (`metrics`): nothing per request outlives its request.
    onRequestParse({ serverContext }) {
      requestStateOf(serverContext).metrics = { started: performance.now(), operationName: undefined };
    },
    onParams({ context, params }) {
      const record = requestStateOf(context).metrics;
      if (record) record.operationName = params.operationName ?? operationNameOf(params.query);
    },
    onResponse({ serverContext, response }) {
      const state = requestStateOf(serverContext);
      const record = state.metrics;
      if (!record) return;
      const operation = metrics.operationLabel(record.operationName);
      const status = String(response.status);
      // A deferred query's duration is its last payload's; its payloads are counted and timed then.
      state.whenAnswered(() => {
        metrics.requests.inc({ operation, status });
        metrics.requestDuration.observe({ operation }, (performance.now() - record.started) / 1000);
        const stream = state.stream;
        if (!stream) return;
        metrics.streamPayloads.observe({ operation }, stream.payloads);
        if (stream.firstAt !== undefined) metrics.firstPayloadDuration.observe({ operation }, (stream.firstAt - record.started) / 1000);
        if (stream.lastAt !== undefined) metrics.lastPayloadDuration.observe({ operation }, (stream.lastAt - record.started) / 1000);
      });
    },
  };
}

const OPERATION_NAME = /^\s*(?:query|mutation|subscription)\s+([_A-Za-z][_0-9A-Za-z]*)/;

/** The name of a document's first operation, read cheaply without parsing (for labels only). */
function operationNameOf(query: string | undefined): string | undefined {
  if (!query) return undefined;
  return OPERATION_NAME.exec(query)?.[1];
}
