// Trusted documents: requests that send a document id instead of the query text, and, under `enforce`, only those.
import type { Plugin } from 'graphql-yoga';
import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import { requestError } from '../errors/client-error.js';
import type { ErrorCode } from '../errors/codes.js';
import { documentNamesOf } from '../request/document-names.js';
import { requestStateOf } from '../request/request-state.js';
import type { TrustedDocumentBook } from '../registry/trusted-documents.js';
import type { RouterMetrics } from '../telemetry/metrics.js';

export interface TrustedDocumentsOptions {
  /** `allow`: ids and free text; `enforce`: registered documents only. (`off` adds no plugin.) */
  mode: 'allow' | 'enforce';
  /** Kept current by the registry's change feed. */
  book: TrustedDocumentBook;
  /** Counts refusals by code (`switchyard_trusted_document_refusals_total`). Default: not counted. */
  metrics?: RouterMetrics;
}

/** Body members, besides yoga's own, that a request may carry: GraphQL over HTTP's persisted documents. */
export const TRUSTED_DOCUMENT_PARAMS = ['documentId'];

/**
 * Built on graphql-yoga's persisted-operations plugin, which already does the hard part: it runs in
 * `onParams`, before anything parses the query, and hands yoga the document parsed once (our book
 * holds parsed documents), so a request by id is never parsed again. We add:
 * 1. Where the id is: `documentId` in a POST body or a GET query string (GraphQL over HTTP, persisted
 *    documents), else Apollo's `extensions.persistedQuery.sha256Hash` (version 1), POST or GET, read
 *    by `documentNamesOf` (request/document-names.ts). A request that names its document twice (an id
 *    and a text, a hash and a text it is not the hash of) never reaches this plugin:
 *    use-request-validation refuses it in every mode, `off` included (decision 028).
 * 2. Our error codes, answered 400 before any subgraph call: free text under `enforce` is
 *    DOCUMENT_NOT_TRUSTED, an unknown id PERSISTED_DOCUMENT_NOT_FOUND, neither text nor id BAD_REQUEST.
 * Validation still runs (yoga caches it per document and schema): a document registered before a
 * schema change must not run unchecked against a graph it no longer fits.
 */
export function useTrustedDocuments(options: TrustedDocumentsOptions): Plugin {
  const { book, metrics } = options;
  // The requests counter has no code label (its labels are operation and status, and a refused
  // request has no operation yet), so refusals get a counter of their own, counted where they are made.
  // The code joins the request state too: an error thrown here never reaches the result hooks that
  // note a result's codes, and the audit row and access line would otherwise name none.
  const refuse = (code: ErrorCode, message: string, context: unknown) => {
    metrics?.trustedDocumentRefusals.inc({ code });
    requestStateOf(context).refusal = code;
    return requestError(code, message);
  };
  return usePersistedOperations({
    allowArbitraryOperations: options.mode === 'allow',
    extractPersistedOperationId(params, request) {
      const { documentId, persistedQueryHash } = documentNamesOf(params, request);
      return documentId ?? persistedQueryHash ?? null;
    },
    getPersistedOperation(key) {
      return book.get(key) ?? null;
    },
    customErrors: {
      persistedQueryOnly: ({ context }) => refuse('DOCUMENT_NOT_TRUSTED', 'This router runs registered documents only: send a documentId from a published manifest instead of the query text.', context),
      notFound: ({ context }) => refuse('PERSISTED_DOCUMENT_NOT_FOUND', 'No published manifest holds this document id.', context),
      keyNotFound: ({ context }) => refuse('BAD_REQUEST', 'Send the query text or a documentId.', context),
    },
  }) as Plugin;
}
