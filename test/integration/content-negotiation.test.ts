// Content negotiation over HTTP: an answer and a refusal of the same request come back in the same media type.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseKind } from '../helpers/database.js';
import { startStack, type Stack } from '../helpers/stack.js';

/** Accept headers whose answer is JSON, the first three of which put the two JSON types in an order a substring test misreads. */
const ACCEPT_HEADERS = [
  'application/json, application/graphql-response+json',
  'application/*;q=0.9, application/graphql-response+json',
  'application/graphql-response+json; charset=iso-8859-1, application/json',
  'application/graphql-response+json, application/json',
  'application/graphql-response+json',
  'application/json',
  '*/*',
  'multipart/mixed;deferSpec=20220824, application/json',
];

describe(`content negotiation (${databaseKind} database)`, () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ subgraphs: ['product'] });
  });
  afterAll(async () => {
    await stack?.close();
  });

  async function contentType(accept: string, query: string, headers: Record<string, string> = {}) {
    const response = await fetch(stack.router.url, { method: 'POST', headers: { 'content-type': 'application/json', accept, ...headers }, body: JSON.stringify({ query }) });
    await response.arrayBuffer();
    return { status: response.status, type: response.headers.get('content-type') };
  }

  it('answers a result, a refused token and an invalid document in the one media type the Accept header chooses', async () => {
    for (const accept of ACCEPT_HEADERS) {
      const answered = await contentType(accept, '{ product(id: "1") { id } }');
      const unauthenticated = await contentType(accept, '{ product(id: "1") { id } }', { authorization: 'Bearer not-a-token' });
      const invalid = await contentType(accept, '{ product(id: "1") { nope } }');
      expect([answered.status, unauthenticated.status, invalid.status]).toEqual([200, 401, expect.any(Number)]);
      expect({ accept, unauthenticated: unauthenticated.type, invalid: invalid.type }).toEqual({ accept, unauthenticated: answered.type, invalid: answered.type });
    }
  });

  it('refuses a client that accepts only a stream in application/json: an HTTP error status is not a stream', async () => {
    const unauthenticated = await contentType('text/event-stream', '{ product(id: "1") { id } }', { authorization: 'Bearer not-a-token' });
    expect(unauthenticated).toEqual({ status: 401, type: 'application/json; charset=utf-8' });
  });
});
