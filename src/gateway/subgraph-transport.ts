// One HTTP attempt to a subgraph over the shared keep-alive pool: POST the operation, read a GraphQL response.
import { print, type DocumentNode, type ExecutionResult } from 'graphql';
import type { Dispatcher } from 'undici';
import type { ExecutionRequest } from '@graphql-tools/utils';
import { UpstreamFailure, failureFromAbort, type CallHandler } from '../resilience/subgraph-call.js';

export interface TransportOptions {
  name: string;
  url: string;
  /** Shared keep-alive connection pool (undici Agent), owned by the router. */
  dispatcher: Dispatcher;
  /** Headers added to every call. */
  headers?: Record<string, string>;
}

/** Printed documents, by identity: the stitching layer reuses document objects for the same plan. */
const printed = new WeakMap<DocumentNode, string>();

/** The body each result was parsed from: a caller sharing a deduplicated call gets its own parse of it. */
const bodies = new WeakMap<ExecutionResult, string>();

export function bodyOf(result: ExecutionResult): string | undefined {
  return bodies.get(result);
}

/** Request bodies, by request: the deduplication key and the transport share one serialisation. */
const requestBodies = new WeakMap<ExecutionRequest, string>();

/** `{ query, variables, operationName }` as sent to the subgraph, serialised once per request object. */
export function requestBody(request: ExecutionRequest): string {
  let body = requestBodies.get(request);
  if (body === undefined) {
    body = JSON.stringify({ query: printDocument(request.document), variables: request.variables, operationName: request.operationName });
    requestBodies.set(request, body);
  }
  return body;
}

function printDocument(document: DocumentNode): string {
  let text = printed.get(document);
  if (text === undefined) {
    text = print(document);
    printed.set(document, text);
  }
  return text;
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'UND_ERR_CONNECT_TIMEOUT']);

/**
 * Builds the handler of one attempt.
 * 1. The document is printed once per document object and sent as `{ query, variables, operationName }`.
 * 2. The attempt is aborted when `call.signal` fires; the failure then says why (timeout, deadline, cancelled).
 * 3. A JSON body with `data` or `errors` is a GraphQL response whatever the status (GraphQL over HTTP
 *    allows 4xx/5xx with one) and is returned as is. Anything else is an `http` failure; connection
 *    problems are `network` failures. Messages name the subgraph, never its URL or address.
 */
export function createHttpTransport(options: TransportOptions): CallHandler {
  const { name, url, dispatcher } = options;
  // Parsed once: undici's top-level request() parses the URL string again on every call.
  const target = new URL(url);
  const origin = target.origin;
  const path = `${target.pathname}${target.search}`;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/graphql-response+json, application/json',
    ...options.headers,
  };
  return async function sendToSubgraph(call): Promise<ExecutionResult> {
    const { request } = call;
    const body = requestBody(request);
    let response: PostResponse;
    try {
      response = await post(dispatcher, { origin, path, method: 'POST', headers: call.headers ? { ...headers, ...call.headers } : headers, body }, call.signal);
    } catch (error) {
      if (call.signal.aborted) throw failureFromAbort(call.signal.reason, name);
      const code = (error as { code?: string }).code;
      const why = code && NETWORK_CODES.has(code) ? 'is unreachable' : 'could not be called';
      throw new UpstreamFailure('SUBGRAPH_UNAVAILABLE', 'network', `subgraph "${name}" ${why}`);
    }
    const text = response.text;
    let parsed: ExecutionResult | undefined;
    try {
      const value = JSON.parse(text) as ExecutionResult;
      if (value !== null && typeof value === 'object' && ('data' in value || 'errors' in value)) parsed = value;
    } catch {
      parsed = undefined;
    }
    if (parsed === undefined) {
      const status = response.status;
      const code = status === 502 || status === 503 || status === 504 ? 'SUBGRAPH_UNAVAILABLE' : 'SUBGRAPH_ERROR';
      throw new UpstreamFailure(code, 'http', `subgraph "${name}" answered HTTP ${status} without a GraphQL response`, status);
    }
    bodies.set(parsed, text);
    return parsed;
  };
}

interface PostResponse {
  status: number;
  text: string;
}

/**
 * One request on the dispatcher's keep-alive pool, its body collected as text. Why not undici's
 * `request()`: its answer is a Readable stream (with its own abort listener and a `text()` that
 * consumes it through the stream machinery), and a router reads every subgraph body whole anyway;
 * that stream was most of undici's share of a product page's CPU. The pool, the connections and
 * the HTTP/1.1 client stay undici's. The promise rejects as soon as `signal` fires; a request
 * still queued for a connection is aborted when it starts.
 */
function post(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions, signal: AbortSignal): Promise<PostResponse> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    let controller: Dispatcher.DispatchController | undefined;
    let status = 0;
    const chunks: Buffer[] = [];
    let settled = false;
    const onAbort = () => {
      settle();
      controller?.abort(signal.reason as Error);
      reject(signal.reason);
    };
    function settle(): boolean {
      if (settled) return false;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      return true;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    dispatcher.dispatch(options, {
      onRequestStart(started) {
        controller = started;
        if (settled) started.abort(signal.reason as Error);
      },
      onResponseStart(_controller, statusCode) {
        status = statusCode;
      },
      onResponseData(_controller, chunk) {
        chunks.push(chunk);
      },
      onResponseEnd() {
        if (settle()) resolve({ status, text: chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8') });
      },
      onResponseError(_controller, error) {
        if (settle()) reject(error);
      },
    });
  });
}
