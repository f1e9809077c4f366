// Pins every code users see, with its HTTP status, title and retryability: changing one is a deliberate change here too.
import type { FetchAPI } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { composeSupergraph } from '../gateway/compose.js';
import { errorResponse } from '../plugins/http-error-response.js';
import { clientError, requestError } from './client-error.js';
import { COMPOSITION_CODES, ERROR_CODES, type ErrorCode } from './codes.js';

/** code → [HTTP status, problem-details title, retryable], written out by hand on purpose. */
const EXPECTED: Record<ErrorCode, [number, string, boolean]> = {
  INTERNAL_SERVER_ERROR: [500, 'Internal server error', false],
  GRAPHQL_PARSE_FAILED: [400, 'Query could not be parsed', false],
  GRAPHQL_VALIDATION_FAILED: [400, 'Query is not valid against the schema', false],
  QUERY_PLANNING_FAILED: [400, 'Query cannot be planned', false],
  BAD_REQUEST: [400, 'Bad request', false],
  NOT_ACCEPTABLE: [406, 'Not acceptable', false],
  UNSUPPORTED_MEDIA_TYPE: [415, 'Unsupported media type', false],
  SCHEMA_NOT_READY: [503, 'No composed schema yet', true],
  SUBGRAPH_ERROR: [502, 'Subgraph returned an error', false],
  SUBGRAPH_UNAVAILABLE: [502, 'Subgraph unavailable', true],
  SUBGRAPH_TIMEOUT: [504, 'Subgraph timed out', true],
  DEADLINE_EXCEEDED: [504, 'Request deadline exceeded', true],
  CIRCUIT_OPEN: [503, 'Subgraph circuit open', true],
  REQUEST_CANCELLED: [499, 'Request cancelled', true],
  UNAUTHENTICATED: [401, 'Authentication required', false],
  AUTH_UNAVAILABLE: [503, 'Authentication unavailable', true],
  TOKEN_EXCHANGE_FAILED: [502, 'Subgraph token refused', false],
  TOKEN_EXCHANGE_UNAVAILABLE: [503, 'Token endpoint unavailable', true],
  FORBIDDEN: [403, 'Forbidden', false],
  COST_LIMIT_EXCEEDED: [400, 'Query cost over the limit', false],
  SUBGRAPH_COST_EXCEEDED: [200, 'Subgraph cost budget exceeded', false],
  QUEUE_FULL: [503, 'Operation queue full', true],
  QUEUE_TIMEOUT: [503, 'Waited too long in the queue', true],
  RATE_LIMITED: [429, 'Rate limit reached', true],
  REQUEST_TOO_LARGE: [413, 'Request body too large', false],
  DOCUMENT_NOT_TRUSTED: [400, 'Document not trusted', false],
  PERSISTED_DOCUMENT_NOT_FOUND: [400, 'Persisted document not found', false],
  AMBIGUOUS_DOCUMENT: [400, 'Document named twice', false],
  PERSISTED_QUERY_HASH_MISMATCH: [400, 'Persisted-query hash does not match the query', false],
  SUBSCRIPTION_LIMIT: [429, 'Too many open subscriptions', true],
  TOKEN_EXPIRED: [401, 'Token expired', false],
  SUBSCRIPTION_SCHEMA_RELOAD: [200, 'Subscription ended by a schema change', false],
  SHUTTING_DOWN: [503, 'Router shutting down', true],
  STALE: [200, 'Stale section served', false],
};

const codes = Object.keys(EXPECTED) as ErrorCode[];

describe('the codes users see', () => {
  it('are exactly the catalogue, in its order', () => {
    expect(Object.keys(ERROR_CODES)).toEqual(codes);
  });

  it.each(codes)('%s has its status, title and retryability', (code) => {
    const [status, title, retryable] = EXPECTED[code];
    expect({ status: ERROR_CODES[code].status, title: ERROR_CODES[code].title, retryable: ERROR_CODES[code].retryable }).toEqual({ status, title, retryable });
    expect(ERROR_CODES[code].description).not.toBe('');
  });

  it.each(codes)('%s refuses a request with its status, unless told otherwise', (code) => {
    const [status, title] = EXPECTED[code];
    const error = requestError(code, 'why');
    expect(error.extensions).toMatchObject({ code, title, status, detail: 'why', http: { status } });
    expect(requestError(code, 'why', { httpStatus: 418 }).extensions.http).toEqual({ status: 418 });
  });

  it.each(codes)('%s answers a refused HTTP request with its status and problem details', async (code) => {
    const [status, title] = EXPECTED[code];
    const response = errorResponse({ Response } as unknown as FetchAPI, new Request('http://router/graphql', { headers: { accept: 'application/graphql-response+json' } }), {}, code, 'why', { 'retry-after': '1' });
    expect(response.status).toBe(status);
    expect(response.headers.get('content-type')).toBe('application/graphql-response+json; charset=utf-8');
    expect(response.headers.get('retry-after')).toBe('1');
    expect(await response.json()).toEqual({ errors: [{ message: 'why', extensions: { code, type: expect.stringMatching(/^urn:switchyard:error:/), title, status, detail: 'why' } }] });
  });

  it('leaves the response status alone for an error inside a result (partial data keeps 200)', () => {
    const error = clientError('SUBGRAPH_TIMEOUT', 'late', { subgraph: 'reviews' });
    expect(error.extensions).not.toHaveProperty('http');
    expect(error.extensions).toMatchObject({ code: 'SUBGRAPH_TIMEOUT', status: 504, subgraph: 'reviews' });
  });
});

describe('the codes a composition problem is printed with', () => {
  it('are NO_SUBGRAPHS, PARSE_ERROR, COMPOSITION_FAILED and COMPOSITION_ERROR', () => {
    expect(Object.keys(COMPOSITION_CODES)).toEqual(['NO_SUBGRAPHS', 'PARSE_ERROR', 'COMPOSITION_FAILED', 'COMPOSITION_ERROR']);
  });

  it('come from the composition', () => {
    expect(composeSupergraph([])).toEqual({ ok: false, errors: [{ code: 'NO_SUBGRAPHS', message: 'no subgraph is registered' }] });
    expect(composeSupergraph([{ name: 'broken', url: 'http://broken/graphql', sdl: 'type Query {' }])).toMatchObject({ ok: false, errors: [{ code: 'PARSE_ERROR', message: expect.stringMatching(/^\[broken\] Syntax Error/) }] });
  });
});
