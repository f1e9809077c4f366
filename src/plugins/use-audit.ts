// One audit row per GraphQL request, recorded off the request path (the writer batches and never blocks).
import { createHash, randomUUID } from 'node:crypto';
import type { Plugin } from 'graphql-yoga';
import { alsoOnSubscribe } from './subscribe-hooks.js';
import { BoundedMap } from '../cache/bounded-map.js';
import type { AuditWriter } from '../registry/audit-writer.js';
import { requestStateOf } from '../request/request-state.js';
import { answerOutcome } from '../telemetry/request-telemetry.js';

export interface AuditOptions {
  writer: AuditWriter;
  /** Path of the GraphQL endpoint; other paths (metrics, health) are not audited. Default `/graphql`. */
  endpoint?: string;
}

/**
 * Document texts whose hash is remembered (least recently used dropped first): more than the
 * documents a fleet of clients sends; one dropped only costs a SHA-256 of its text again.
 */
const HASHED_DOCUMENTS = 1024;

/**
 * 1. At the start of a GraphQL request: the time, the request id and trace id that the telemetry
 *    plugin (before this one) gave the request, so audit rows, log lines and traces share them.
 * 2. When the document is known: operation name, a SHA-256 of the document text, the caller.
 * 3. When the response goes out: status, duration, the subgraphs called, and the error codes and
 *    completeness the telemetry plugin read (`answerOutcome` of request-telemetry.ts, shared with the access line), then
 *    `writer.record()`, which only pushes into a bounded buffer: no request waits for the database.
 * Requests refused before execution (401, 413, 400) are audited too. The row being gathered lives in
 * the request's state (`audit`).
 */
export function useAudit(options: AuditOptions): Plugin {
  const { writer } = options;
  const endpoint = options.endpoint ?? '/graphql';
  // Clients send the same few documents again and again: hash each once.
  const hashes = new BoundedMap<string, string>(HASHED_DOCUMENTS);
  function hashOf(query: string): string {
    let hash = hashes.get(query);
    if (hash === undefined) {
      hash = createHash('sha256').update(query).digest('hex');
      hashes.set(query, hash);
    }
    return hash;
  }
  return alsoOnSubscribe({
    onRequest({ request, url, serverContext }) {
      if (url.pathname !== endpoint) return;
      const state = requestStateOf(serverContext);
      const telemetry = state.telemetry;
      state.audit = {
        at: new Date(),
        started: performance.now(),
        requestId: telemetry?.requestId ?? randomUUID(),
        traceId: telemetry?.traceId ?? null,
        operationName: null,
        operationHash: null,
        subject: null,
        client: request.headers.get('x-client-name')?.slice(0, 128) ?? null,
      };
    },
    onParams({ context, params }) {
      const entry = requestStateOf(context).audit;
      if (!entry) return;
      // use-request-validation has refused parameters of the wrong type already; this stays safe without it.
      if (typeof params.query === 'string' && params.query) entry.operationHash = hashOf(params.query);
      entry.operationName = typeof params.operationName === 'string' ? params.operationName : null;
    },
    onExecute({ args }) {
      const state = requestStateOf(args.contextValue);
      const entry = state.audit;
      if (!entry) return;
      entry.operationName ??= state.operationName ?? null;
      const principal = state.principal;
      if (principal) {
        entry.subject = principal.subject;
        entry.client = principal.clientId ?? entry.client;
      }
    },
    onResponse({ serverContext, response }) {
      const state = requestStateOf(serverContext);
      const entry = state.audit;
      if (!entry) return;
      state.audit = undefined;
      const status = response.status;
      // Who asked and for what: the same on every row of the request.
      const request = {
        at: entry.at,
        requestId: entry.requestId,
        traceId: entry.traceId,
        client: entry.client,
        subject: entry.subject,
        operationName: entry.operationName,
        operationHash: entry.operationHash,
        status,
      };
      // A subscription gets a row when it starts too (its end row comes when it ends, maybe hours later).
      const subscription = state.operation?.operation === 'subscription' && state.stream !== undefined;
      if (subscription) {
        writer.record({ ...request, subgraphs: [], durationMs: performance.now() - entry.started, errorCodes: [], complete: true, detail: { subscription: { event: 'start' } } });
      }
      // A deferred query's row is written when its last payload went out: every subgraph it called, its whole duration.
      // A subscription's when it ended: its duration, its events and why it ended.
      state.whenAnswered(() => {
      const { errorCodes, complete } = answerOutcome(state.telemetry, status, state.refusal, state.stream);
      writer.record({
        ...request,
        subgraphs: [...(state.subgraphsCalled ?? [])],
        durationMs: performance.now() - entry.started,
        errorCodes,
        complete,
        ...(subscription ? { detail: { subscription: { event: 'end', events: state.stream!.payloads, endReason: state.stream!.endReason ?? null } } } : {}),
      });
      });
    },
  });
}
