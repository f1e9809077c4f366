// A GraphQL-shaped error response for requests refused before execution (no graph, bad credentials).
import type { FetchAPI } from 'graphql-yoga';
import { errorExtensions } from '../errors/client-error.js';
import { ERROR_CODES, type ErrorCode } from '../errors/codes.js';
import { refusalMediaType } from '../request/media-type.js';
import { requestStateOf } from '../request/request-state.js';

/**
 * `{ errors: [{ message, extensions }] }` with the catalogue's HTTP status and problem-details members, in the JSON
 * media type a result of the same request would get (`refusalMediaType`: yoga's rule, so that a client
 * reads refusals and answers alike). The code joins the request's state (`refusal`), so the access line and the
 * audit row can name it without reading the body.
 */
export function errorResponse(fetchAPI: FetchAPI, request: Request, context: unknown, code: ErrorCode, message: string, headers: Record<string, string> = {}): Response {
  const contentType = `${refusalMediaType(request.headers.get('accept')).text}; charset=utf-8`;
  const response = new fetchAPI.Response(JSON.stringify({ errors: [{ message, extensions: errorExtensions(code, message) }] }), {
    status: ERROR_CODES[code].status,
    headers: { 'content-type': contentType, ...headers },
  });
  requestStateOf(context).refusal = code;
  return response;
}
