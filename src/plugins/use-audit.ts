// One audit row per GraphQL request, recorded off the request path (the writer batches and never blocks).
import { createHash, randomUUID } from 'node:crypto';
import { getOperationAST, type ExecutionResult } from 'graphql';
import type { Plugin, YogaInitialContext } from 'graphql-yoga';
import type { AuditWriter } from '../registry/audit-log.js';
import { requestScopeOf } from '../resilience/request-scope.js';
import { requestTelemetryOf } from '../telemetry/request-telemetry.js';
import { refusalCodeOf } from './http-error-response.js';
import { principalOf } from './use-authentication.js';

export interface AuditOptions {
  writer: AuditWriter;
  /** Path of the GraphQL endpoint; other paths (metrics, health) are not audited. Default `/graphql`. */
  endpoint?: string;
}

interface Pending {
  at: Date;
  started: number;
  requestId: string;
  traceId: string | null;
  operationName: string | null;
  operationHash: string | null;
  context?: object;
  errorCodes: string[];
  complete: boolean;
  subject: string | null;
  client: string | null;
}


/**
 * 1. At the start of a GraphQL request: the time, the request id and trace id that the telemetry
 *    plugin (before this one) gave the request, so audit rows, log lines and traces share them.
 * 2. When the result is known: operation name, a SHA-256 of the document text, the caller, error
 *    codes and completeness.
 * 3. When the response goes out: status, duration and the subgraphs called, then `writer.record()`,
 *    which only pushes into a bounded buffer: no request waits for the database.
 * Requests refused before execution (401, 413, 400) are audited too.
 */
export function useAudit(options: AuditOptions): Plugin {
  const { writer } = options;
  const endpoint = options.endpoint ?? '/graphql';
  const pending = new WeakMap<Request, Pending>();
  return {
    onRequest({ request, url }) {
      if (url.pathname !== endpoint) return;
      const telemetry = requestTelemetryOf(request);
      pending.set(request, {
        at: new Date(),
        started: performance.now(),
        requestId: telemetry?.requestId ?? randomUUID(),
        traceId: telemetry?.traceId ?? null,
        operationName: null,
        operationHash: null,
        errorCodes: [],
        complete: false,
        subject: null,
        client: request.headers.get('x-client-name')?.slice(0, 128) ?? null,
      });
    },
    onParams({ request, params }) {
      const entry = pending.get(request);
      if (!entry) return;
      if (params.query) entry.operationHash = createHash('sha256').update(params.query).digest('hex');
      entry.operationName = params.operationName ?? null;
    },
    onExecute({ args }) {
      const request = (args.contextValue as Partial<YogaInitialContext>).request;
      const entry = request && pending.get(request);
      if (!entry) return;
      entry.context = args.contextValue as object;
      entry.operationName ??= getOperationAST(args.document, args.operationName)?.name?.value ?? null;
      const principal = principalOf(args.contextValue);
      if (principal) {
        entry.subject = principal.subject;
        entry.client = principal.clientId ?? entry.client;
      }
    },
    onExecutionResult({ request, result }) {
      const entry = pending.get(request);
      if (!entry || Array.isArray(result) || !result || typeof result !== 'object' || Symbol.asyncIterator in result) return;
      const single = result as ExecutionResult;
      entry.errorCodes = (single.errors ?? []).map((e) => String(e.extensions?.code ?? 'INTERNAL_SERVER_ERROR'));
      const completeness = single.extensions?.completeness as { complete?: boolean } | undefined;
      entry.complete = completeness?.complete ?? !single.errors?.length;
    },
    onResponse({ request, response }) {
      const entry = pending.get(request);
      if (!entry) return;
      pending.delete(request);
      writer.record({
        at: entry.at,
        requestId: entry.requestId,
        traceId: entry.traceId,
        client: entry.client,
        subject: entry.subject,
        operationName: entry.operationName,
        operationHash: entry.operationHash,
        subgraphs: [...(requestScopeOf(entry.context)?.subgraphsCalled ?? [])],
        status: response.status,
        durationMs: performance.now() - entry.started,
        errorCodes: entry.errorCodes.length === 0 && refusalCodeOf(response) ? [refusalCodeOf(response)!] : entry.errorCodes,
        complete: response.status < 400 && entry.complete,
      });
    },
  };
}
