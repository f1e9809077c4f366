// A request names one document, once: an id with a text, or a persisted-query hash with a text it is not the hash of, is refused.
import { createHash } from 'node:crypto';
import type { ErrorCode } from '../../errors/codes.js';
import type { DocumentNames } from '../../request/document-names.js';

/** Why a request's document has no single name, and what to tell its client. */
export interface IdentityProblem {
  readonly code: Extract<ErrorCode, 'AMBIGUOUS_DOCUMENT' | 'PERSISTED_QUERY_HASH_MISMATCH'>;
  readonly message: string;
}

/**
 * The audit log, the operation registry and every cache keyed by a document's id trust that the id
 * names what ran. So, in every trusted-documents mode (decision 028), before anything reads the
 * document:
 * 1. A `documentId` with query text is ambiguous, whether the id is known or not and whether the text
 *    is its document or not: GraphQL over HTTP, Appendix A ("Persisted Document Request Parameters"),
 *    gives a persisted document request `documentId`, `operationName`, `variables` and `extensions`,
 *    and no `query`; no client library sends both.
 * 2. A `documentId` with a persisted-query hash that is another string names two documents.
 * 3. A persisted-query hash with query text is Apollo's APQ registration (the retry after a hash the
 *    server did not know): legitimate when the hash is the lower-case hex SHA-256 of the text's UTF-8
 *    bytes, as Apollo's own servers check it (400 otherwise); the text then runs as itself, under a
 *    name that is its own. Otherwise it is refused: a text must not borrow a registered document's hash.
 * The hash of rule 3 is computed only for requests that send both (an APQ client does after a miss),
 * never for plain text or a hash alone.
 */
export function documentIdentityProblem(names: DocumentNames): IdentityProblem | undefined {
  const { documentId, persistedQueryHash, query } = names;
  if (documentId !== undefined && query !== undefined) {
    return { code: 'AMBIGUOUS_DOCUMENT', message: 'The request sends both a documentId and the query text: send the documentId alone (a published document), or the text alone.' };
  }
  if (documentId !== undefined && persistedQueryHash !== undefined && persistedQueryHash !== documentId) {
    return { code: 'AMBIGUOUS_DOCUMENT', message: 'The request names two documents: its documentId and extensions.persistedQuery.sha256Hash differ. Send one of them.' };
  }
  if (persistedQueryHash !== undefined && query !== undefined && persistedQueryHash !== sha256Hex(query)) {
    return {
      code: 'PERSISTED_QUERY_HASH_MISMATCH',
      message: 'extensions.persistedQuery.sha256Hash is not the SHA-256 of the query text sent with it: send the hash alone, or the text with the lower-case hex SHA-256 of its UTF-8 bytes.',
    };
  }
  return undefined;
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
