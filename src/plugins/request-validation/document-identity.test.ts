// documentIdentityProblem: which pairs of names a request may send, and which are refused.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { documentIdentityProblem } from './document-identity.js';
import { documentNamesOf } from '../../request/document-names.js';

const TEXT = 'query Page { product(id: "1") { name } }';
const HASH = createHash('sha256').update(TEXT).digest('hex');
const OTHER_HASH = createHash('sha256').update('{ products { name } }').digest('hex');
const apq = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });
const post = new Request('http://router/graphql', { method: 'POST' });
const problemOf = (params: object, request: Request = post) => documentIdentityProblem(documentNamesOf(params, request))?.code;

describe('documentIdentityProblem', () => {
  it('lets one name through: a text, an id, a hash, or a hash with its own text (APQ registration)', () => {
    expect(problemOf({ query: TEXT })).toBeUndefined();
    expect(problemOf({ documentId: 'relay-page' })).toBeUndefined();
    expect(problemOf({ extensions: apq(HASH) })).toBeUndefined();
    expect(problemOf({ query: TEXT, extensions: apq(HASH) })).toBeUndefined();
    // The same name twice is one name.
    expect(problemOf({ documentId: HASH, extensions: apq(HASH) })).toBeUndefined();
  });

  it('refuses a hash sent with a text it is not the hash of, known hash or not', () => {
    expect(problemOf({ query: TEXT, extensions: apq(OTHER_HASH) })).toBe('PERSISTED_QUERY_HASH_MISMATCH');
    expect(problemOf({ query: TEXT, extensions: apq(HASH.toUpperCase()) })).toBe('PERSISTED_QUERY_HASH_MISMATCH');
    expect(problemOf({ query: `${TEXT} `, extensions: apq(HASH) })).toBe('PERSISTED_QUERY_HASH_MISMATCH');
    expect(problemOf({ query: TEXT, extensions: apq('') })).toBe('PERSISTED_QUERY_HASH_MISMATCH');
  });

  it('refuses a documentId with a text, even its own, and with a hash that is another string', () => {
    expect(problemOf({ documentId: 'no-such-document', query: TEXT })).toBe('AMBIGUOUS_DOCUMENT');
    expect(problemOf({ documentId: HASH, query: TEXT })).toBe('AMBIGUOUS_DOCUMENT');
    expect(problemOf({ documentId: 'relay-page', query: TEXT, extensions: apq(HASH) })).toBe('AMBIGUOUS_DOCUMENT');
    expect(problemOf({ documentId: 'relay-page', extensions: apq(HASH) })).toBe('AMBIGUOUS_DOCUMENT');
  });

  it('reads a GET’s documentId from its query string', () => {
    const get = new Request(`http://router/graphql?documentId=relay-page&query=${encodeURIComponent(TEXT)}`);
    expect(problemOf({ query: TEXT }, get)).toBe('AMBIGUOUS_DOCUMENT');
    expect(problemOf({}, get)).toBeUndefined();
  });

  it('takes an empty string for not sent, and ignores a persisted query of another version', () => {
    expect(problemOf({ documentId: '', query: TEXT })).toBeUndefined();
    expect(problemOf({ documentId: 'relay-page', query: '' })).toBeUndefined();
    expect(problemOf({ query: TEXT, extensions: { persistedQuery: { version: 2, sha256Hash: OTHER_HASH } } })).toBeUndefined();
  });
});
