// The HTTP executor of one subgraph: a pooled keep-alive client that turns delegation requests into POSTs.
import { print, type DocumentNode, type ExecutionResult } from 'graphql';
import type { ExecutionRequest, Executor } from '@graphql-tools/utils';
import { request as httpRequest, type Dispatcher } from 'undici';
import { clientError } from '../errors/client-error.js';
import type { ErrorCode } from '../errors/codes.js';
import type { RouterMetrics, SubgraphOutcome } from '../telemetry/metrics.js';

export interface SubgraphExecutorOptions {
  name: string;
  url: string;
  /** Longest one call may take, in ms. */
  timeoutMs: number;
  /** Shared keep-alive connection pool (undici Agent), owned by the router. */
  dispatcher: Dispatcher;
  metrics?: RouterMetrics;
  /** Headers added to every call (content type and accept are set here). */
  headers?: Record<string, string>;
}

/** Printed documents, by identity: stitching reuses document objects for the same plan. */
const printed = new WeakMap<DocumentNode, string>();

function printDocument(document: DocumentNode): string {
  let text = printed.get(document);
  if (text === undefined) {
    text = print(document);
    printed.set(document, text);
  }
  return text;
}

class UpstreamFailure extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly outcome: SubgraphOutcome,
    message: string,
  ) {
    super(message);
  }
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'UND_ERR_CONNECT_TIMEOUT']);

/** Classifies a thrown transport error without leaking addresses into the client-facing message. */
function classifyThrown(error: unknown, name: string, timedOut: boolean): UpstreamFailure {
  if (timedOut) return new UpstreamFailure('SUBGRAPH_TIMEOUT', 'timeout', `subgraph "${name}" did not answer in time`);
  const err = error as { name?: string; code?: string };
  if (err?.name === 'AbortError' || err?.code === 'UND_ERR_ABORTED' || err?.name === 'RequestAbortedError') {
    return new UpstreamFailure('SUBGRAPH_UNAVAILABLE', 'aborted', `call to subgraph "${name}" was cancelled`);
  }
  if (err?.code && NETWORK_CODES.has(err.code)) return new UpstreamFailure('SUBGRAPH_UNAVAILABLE', 'network_error', `subgraph "${name}" is unreachable`);
  return new UpstreamFailure('SUBGRAPH_UNAVAILABLE', 'network_error', `subgraph "${name}" could not be called`);
}

/**
 * Builds the executor for one subgraph.
 *
 * 1. The document is printed once per document object and sent as `{ query, variables, operationName }`.
 * 2. The call is aborted when the delegation's signal fires (client gone) or the timeout passes.
 * 3. A 2xx JSON answer is returned as is (its GraphQL errors included). A non-2xx answer that still
 *    carries a GraphQL body (GraphQL over HTTP allows 4xx/5xx with one) is returned too; anything else
 *    becomes one error with a catalogue code and `extensions.subgraph`, never the URL or address.
 */
export function createSubgraphExecutor(options: SubgraphExecutorOptions): Executor {
  const { name, url, timeoutMs, dispatcher, metrics } = options;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/graphql-response+json, application/json',
    ...options.headers,
  };
  const requests = metrics?.subgraphRequests;
  const duration = metrics?.subgraphDuration.labels(name);

  async function call(request: ExecutionRequest): Promise<ExecutionResult> {
    const body = JSON.stringify({ query: printDocument(request.document), variables: request.variables, operationName: request.operationName });
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
    const started = performance.now();
    let outcome: SubgraphOutcome = 'ok';
    try {
      const response = await httpRequest(url, { method: 'POST', headers, body, signal, dispatcher });
      const text = await response.body.text();
      let parsed: ExecutionResult | undefined;
      try {
        const value = JSON.parse(text) as ExecutionResult;
        if (value !== null && typeof value === 'object' && ('data' in value || 'errors' in value)) parsed = value;
      } catch {
        parsed = undefined;
      }
      if (parsed === undefined) {
        const code: ErrorCode = response.statusCode === 502 || response.statusCode === 503 || response.statusCode === 504 ? 'SUBGRAPH_UNAVAILABLE' : 'SUBGRAPH_ERROR';
        throw new UpstreamFailure(code, 'http_error', `subgraph "${name}" answered HTTP ${response.statusCode} without a GraphQL response`);
      }
      if (response.statusCode >= 400) outcome = 'http_error';
      else if (parsed.errors?.length) outcome = 'graphql_error';
      return parsed;
    } catch (error) {
      const failure = error instanceof UpstreamFailure ? error : classifyThrown(error, name, timeout.aborted);
      outcome = failure.outcome;
      return { data: null, errors: [clientError(failure.code, failure.message, { subgraph: name })] };
    } finally {
      requests?.inc({ subgraph: name, outcome });
      duration?.observe((performance.now() - started) / 1000);
    }
  }
  return call as Executor;
}
