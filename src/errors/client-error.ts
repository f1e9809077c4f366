// The one helper that builds client-facing GraphQL errors from the catalogue (RFC 9457 members in extensions).
import { GraphQLError, type GraphQLErrorOptions } from 'graphql';
import { ERROR_CODES, type ErrorCode } from './codes.js';

export interface ClientErrorOptions {
  /** Human-readable explanation of this occurrence (RFC 9457 `detail`); defaults to the message. */
  detail?: string;
  /** The subgraph this error comes from, when it does. */
  subgraph?: string;
  /** Other extensions to merge (never secrets, stack traces or internal addresses). */
  extensions?: Record<string, unknown>;
  path?: GraphQLErrorOptions['path'];
  nodes?: GraphQLErrorOptions['nodes'];
  originalError?: Error;
  /**
   * The HTTP status of the response. `requestError` defaults it to the catalogue's status for the
   * code; give it only when a call site has a reason to differ (and say why there).
   */
  httpStatus?: number;
  httpHeaders?: Record<string, string>;
}

/** `type` member of the problem details: a stable URI naming the code. */
export function problemType(code: ErrorCode): string {
  return `urn:switchyard:error:${code.toLowerCase().replaceAll('_', '-')}`;
}

/** The extensions every client error carries: code, problem details, subgraph when known. */
export function errorExtensions(code: ErrorCode, detail: string, subgraph?: string): Record<string, unknown> {
  const info = ERROR_CODES[code];
  const extensions: Record<string, unknown> = {
    code,
    type: problemType(code),
    title: info.title,
    status: info.status,
    detail,
  };
  if (subgraph !== undefined) extensions.subgraph = subgraph;
  return extensions;
}

/**
 * Builds a GraphQLError for a client: `extensions.code` from the catalogue plus the RFC 9457
 * members `type`, `title`, `status`, `detail`. This is the form for an error inside a result (a
 * field or a section that failed): the response keeps the status the rest of it decides, 200 for
 * partial data (GraphQL over HTTP). When `httpStatus` or `httpHeaders` is given, yoga uses them for
 * the response (it reads `extensions.http`, which it strips before sending); a refusal of the whole
 * request uses `requestError`, which takes the status from the catalogue.
 */
export function clientError(code: ErrorCode, message: string, options: ClientErrorOptions = {}): GraphQLError {
  const extensions: Record<string, unknown> = {
    ...errorExtensions(code, options.detail ?? message, options.subgraph),
    ...options.extensions,
  };
  if (options.httpStatus !== undefined || options.httpHeaders !== undefined) {
    extensions.http = {
      ...(options.httpStatus !== undefined ? { status: options.httpStatus } : {}),
      ...(options.httpHeaders !== undefined ? { headers: options.httpHeaders } : {}),
    };
  }
  return new GraphQLError(message, {
    extensions,
    path: options.path,
    nodes: options.nodes,
    originalError: options.originalError,
  });
}

/**
 * A client error that refuses the whole request: the response carries the catalogue's HTTP status
 * for the code (429 for RATE_LIMITED, 413 for REQUEST_TOO_LARGE, ...) unless `httpStatus` says otherwise.
 */
export function requestError(code: ErrorCode, message: string, options: ClientErrorOptions = {}): GraphQLError {
  return clientError(code, message, { ...options, httpStatus: options.httpStatus ?? ERROR_CODES[code].status });
}
