// The names a GraphQL request gives its document: a `documentId`, Apollo's persisted-query hash, the query text; read one way by every plugin that looks.

/** What a request calls its document. Each is undefined when the request does not send it (an empty string is not sent). */
export interface DocumentNames {
  /** GraphQL over HTTP, Appendix A (persisted documents): `documentId` in a POST body, or in a GET's query string. */
  readonly documentId: string | undefined;
  /** Apollo's persisted queries (version 1): `extensions.persistedQuery.sha256Hash`, POST or GET. */
  readonly persistedQueryHash: string | undefined;
  /** The document's text, `query`. */
  readonly query: string | undefined;
}

/**
 * Reads the three from yoga's parameters (and, for a GET, the URL: yoga's GET parser keeps only the
 * standard parameters). Parameters of the wrong JSON type count as not sent: use-request-validation
 * has refused them before any plugin reads names.
 */
export function documentNamesOf(params: object, request: Request): DocumentNames {
  const record = params as Record<string, unknown>;
  return { documentId: documentIdOf(record, request), persistedQueryHash: persistedQueryHashOf(record.extensions), query: nonEmptyString(record.query) };
}

function documentIdOf(params: Record<string, unknown>, request: Request): string | undefined {
  const inParams = nonEmptyString(params.documentId);
  if (inParams !== undefined || request.method !== 'GET') return inParams;
  return nonEmptyString(new URL(request.url).searchParams.get('documentId'));
}

function persistedQueryHashOf(extensions: unknown): string | undefined {
  const persisted = (extensions as { persistedQuery?: { version?: unknown; sha256Hash?: unknown } } | null | undefined)?.persistedQuery;
  return persisted?.version === 1 && typeof persisted.sha256Hash === 'string' ? persisted.sha256Hash : undefined;
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
