// The error catalogue: every code Switchyard puts in `extensions.code`, with its HTTP status and problem-details title.

/**
 * One entry per code. `status` is the HTTP status a response carries when this error decides it
 * (GraphQL over HTTP: field errors in an otherwise successful response keep 200). `retryable`
 * tells clients (and our own retry layer) whether the same request may succeed if sent again.
 * Typed as a Record over `ErrorCode`, so adding a code without its entry fails the typecheck.
 */
export interface ErrorCodeInfo {
  readonly status: number;
  /** RFC 9457 `title`: short, human-readable, the same for every occurrence of the code. */
  readonly title: string;
  readonly retryable: boolean;
  /** Where it comes from, for the README table. */
  readonly description: string;
}

export const ERROR_CODES = {
  INTERNAL_SERVER_ERROR: { status: 500, title: 'Internal server error', retryable: false, description: 'An unexpected error; details are in the router logs, never in the response.' },
  GRAPHQL_PARSE_FAILED: { status: 400, title: 'Query could not be parsed', retryable: false, description: 'The document is not valid GraphQL syntax.' },
  GRAPHQL_VALIDATION_FAILED: { status: 400, title: 'Query is not valid against the schema', retryable: false, description: 'The document does not validate against the composed supergraph.' },
  QUERY_PLANNING_FAILED: { status: 400, title: 'Query cannot be planned', retryable: false, description: 'The document is valid, but the supergraph gives a field it selects no source where it is asked (no subgraph resolves it there, and no entity key the objects’ subgraph can return reaches one that does); no subgraph is called.' },
  BAD_REQUEST: { status: 400, title: 'Bad request', retryable: false, description: 'The HTTP request is malformed (method, body, a parameter of the wrong JSON type, JSON nested deeper than the limit, variables that fail coercion).' },
  NOT_ACCEPTABLE: { status: 406, title: 'Not acceptable', retryable: false, description: 'The Accept header names no media type the router answers in (application/graphql-response+json, application/json, text/event-stream, multipart/mixed).' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported media type', retryable: false, description: 'The request body has a content type no GraphQL-over-HTTP request uses (send application/json).' },
  SCHEMA_NOT_READY: { status: 503, title: 'No composed schema yet', retryable: true, description: 'The router has no supergraph to serve yet (no subgraph published, or the first composition failed).' },
  SUBGRAPH_ERROR: { status: 502, title: 'Subgraph returned an error', retryable: false, description: 'A subgraph answered with a GraphQL error or an unusable response.' },
  SUBGRAPH_UNAVAILABLE: { status: 502, title: 'Subgraph unavailable', retryable: true, description: 'The subgraph could not be reached (connection refused or reset, HTTP 502/503/504).' },
  SUBGRAPH_TIMEOUT: { status: 504, title: 'Subgraph timed out', retryable: true, description: 'The subgraph did not answer within its own timeout.' },
  DEADLINE_EXCEEDED: { status: 504, title: 'Request deadline exceeded', retryable: true, description: 'The request deadline passed before the subgraph answered.' },
  CIRCUIT_OPEN: { status: 503, title: 'Subgraph circuit open', retryable: true, description: 'The subgraph failed, or was too slow, too often recently; calls to it are skipped until a probe succeeds.' },
  REQUEST_CANCELLED: { status: 499, title: 'Request cancelled', retryable: true, description: 'The client closed the connection; its subgraph calls were aborted (seen in logs and metrics, not by the client).' },
  UNAUTHENTICATED: { status: 401, title: 'Authentication required', retryable: false, description: 'No valid credentials were presented.' },
  AUTH_UNAVAILABLE: { status: 503, title: 'Authentication unavailable', retryable: true, description: 'The identity provider’s keys (JWKS) could not be fetched; the token could not be checked.' },
  TOKEN_EXCHANGE_FAILED: { status: 502, title: 'Subgraph token refused', retryable: false, description: 'The token endpoint refused to issue a token for a subgraph; only that subgraph’s sections fail.' },
  TOKEN_EXCHANGE_UNAVAILABLE: { status: 503, title: 'Token endpoint unavailable', retryable: true, description: 'The token endpoint could not be reached; only that subgraph’s sections fail.' },
  FORBIDDEN: { status: 403, title: 'Forbidden', retryable: false, description: 'The caller may not read this field or run this operation, or (in production) introspect without an `introspection` permission rule.' },
  COST_LIMIT_EXCEEDED: { status: 400, title: 'Query cost over the limit', retryable: false, description: 'The estimated cost of the operation exceeds its policy limit.' },
  SUBGRAPH_COST_EXCEEDED: { status: 200, title: 'Subgraph cost budget exceeded', retryable: false, description: 'One subgraph’s share of the cost exceeded its budget; only its sections were skipped.' },
  QUEUE_FULL: { status: 503, title: 'Operation queue full', retryable: true, description: 'The operation is at capacity and its queue is full; retry with the waiting ticket.' },
  QUEUE_TIMEOUT: { status: 503, title: 'Waited too long in the queue', retryable: true, description: 'The request waited longer than the operation’s max wait.' },
  RATE_LIMITED: { status: 429, title: 'Rate limit reached', retryable: true, description: 'The client spent its cost budget for now.' },
  REQUEST_TOO_LARGE: { status: 413, title: 'Request body too large', retryable: false, description: 'The request body exceeds the configured limit.' },
  DOCUMENT_NOT_TRUSTED: { status: 400, title: 'Document not trusted', retryable: false, description: 'The router runs registered documents only (`SWITCHYARD_TRUSTED_DOCUMENTS=enforce`): send a `documentId` from a published manifest instead of the query text.' },
  PERSISTED_DOCUMENT_NOT_FOUND: { status: 400, title: 'Persisted document not found', retryable: false, description: 'No published manifest holds the `documentId` or persisted-query hash the request sent.' },
  AMBIGUOUS_DOCUMENT: { status: 400, title: 'Document named twice', retryable: false, description: 'The request sent a `documentId` together with the query text, or with a persisted-query hash that is another string: send one of them. Refused in every trusted-documents mode, before anything runs or is recorded.' },
  PERSISTED_QUERY_HASH_MISMATCH: { status: 400, title: 'Persisted-query hash does not match the query', retryable: false, description: 'The request sent query text with an `extensions.persistedQuery.sha256Hash` that is not the SHA-256 of that text (Apollo’s APQ registration must send the text’s own hash). Refused in every trusted-documents mode, before anything runs or is recorded.' },
  SUBSCRIPTION_LIMIT: { status: 429, title: 'Too many open subscriptions', retryable: true, description: 'The router, the operation or the caller has as many subscriptions open as its limit allows (`--max-subscriptions`, `--max-subscriptions-per-principal`, `SWITCHYARD_MAX_SUBSCRIPTIONS`); retry after `Retry-After` seconds. Nothing already open is touched.' },
  TOKEN_EXPIRED: { status: 401, title: 'Token expired', retryable: false, description: 'The user token that opened a subscription expired: the subscription ends with this error; subscribe again with a fresh token.' },
  SUBSCRIPTION_SCHEMA_RELOAD: { status: 200, title: 'Subscription ended by a schema change', retryable: false, description: 'A newly published graph no longer validates the subscription’s document: it ended. Subscriptions whose document is still valid go on.' },
  SHUTTING_DOWN: { status: 503, title: 'Router shutting down', retryable: true, description: 'The router is stopping or restarting: the subscription ended after its in-flight events; subscribe again (on another router).' },
  STALE: { status: 200, title: 'Stale section served', retryable: false, description: 'Its subgraph could not answer, so the section cache answered with an expired copy (`ageMs` says how old; docs/caching.md).' },
} as const satisfies Record<string, ErrorCodeInfo>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** A code the registry and the CLI report when a set of subgraphs does not compose: never in an HTTP response. */
export interface CompositionCodeInfo {
  /** Where it comes from, for the README table. */
  readonly description: string;
}

/**
 * Codes Switchyard itself gives a composition problem (`switchyard publish`, `remove` and
 * `supergraph` print them as `[CODE] message` and exit with status 1). Every other code there is
 * the composer's own rule (e.g. INVALID_FIELD_SHARING), passed through as it names it.
 */
export const COMPOSITION_CODES = {
  NO_SUBGRAPHS: { description: 'No subgraph is registered, so there is nothing to compose.' },
  PARSE_ERROR: { description: 'A subgraph’s SDL is not valid GraphQL syntax; the message starts with `[subgraph name]`.' },
  COMPOSITION_FAILED: { description: 'The composer threw instead of reporting; the publish or removal is refused the same way.' },
  COMPOSITION_ERROR: { description: 'The composer reported an error without a code of its own.' },
} as const satisfies Record<string, CompositionCodeInfo>;
