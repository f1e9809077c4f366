// useRequestValidation in process (yoga.fetch): parameter types, JSON depth, operation types, variable coercion, 406/415.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { useRequestValidation } from './use-request-validation.js';

function server() {
  let resolverCalls = 0;
  // A plugin after ours that reads the parameters, as metrics, telemetry and audit do: reached with a
  // query that is not a string, it would throw (an unexpected error, 500).
  const reader: Plugin = {
    onParams({ params }) {
      if (params.query !== undefined && typeof params.query !== 'string') throw new Error('a later plugin read a query that is not a string');
    },
  };
  const yoga = createYoga({
    schema: createSchema({
      typeDefs: /* GraphQL */ `
        type Query { item(id: ID!): String  list(values: [[Int]]): Int }
      `,
      resolvers: {
        Query: {
          item: (_: unknown, { id }: { id: string }) => {
            resolverCalls++;
            return `item ${id}`;
          },
          list: () => {
            resolverCalls++;
            return 1;
          },
        },
      },
    }),
    maskedErrors: { isDev: false },
    logging: false,
    plugins: [useRequestValidation({ maxJsonDepth: 5 }), reader],
  });
  async function send(body: string | ReadableStream<Uint8Array>, headers: Record<string, string> = {}) {
    const response = await yoga.fetch('http://localhost/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
      body,
      duplex: 'half',
    } as RequestInit);
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? (JSON.parse(text) as any) : null };
  }
  return { send, calls: () => resolverCalls, yoga };
}

describe('useRequestValidation', () => {
  it('refuses parameters of the wrong JSON type with 400 BAD_REQUEST before any later plugin reads them', async () => {
    const s = server();
    for (const body of ['{"query": 1}', '{"query": {}}', '{"query": "{ item(id: 1) }", "variables": []}', '{"query": "{ item(id: 1) }", "operationName": true}', '{"query": "{ item(id: 1) }", "extensions": "x"}', '{"documentId": 7}']) {
      const { status, body: answer } = await s.send(body);
      expect(status, body).toBe(400);
      expect(answer.errors[0].extensions).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
    }
    expect(s.calls()).toBe(0);
  });

  it('answers valid requests as before', async () => {
    const s = server();
    const { status, body } = await s.send(JSON.stringify({ query: 'query Q($id: ID!) { item(id: $id) }', variables: { id: '3' }, operationName: 'Q' }));
    expect(status).toBe(200);
    expect(body).toEqual({ data: { item: 'item 3' } });
  });

  it('refuses a request that names its document twice, before any later plugin reads it; a hash with its own text runs', async () => {
    const s = server();
    const text = '{ item(id: 1) }';
    const apq = (sha256Hash: string) => ({ persistedQuery: { version: 1, sha256Hash } });
    const ambiguous = await s.send(JSON.stringify({ documentId: 'page', query: text }));
    expect(ambiguous).toMatchObject({ status: 400, body: { errors: [{ extensions: { code: 'AMBIGUOUS_DOCUMENT', status: 400 } }] } });
    const mismatch = await s.send(JSON.stringify({ query: text, extensions: apq('0'.repeat(64)) }));
    expect(mismatch).toMatchObject({ status: 400, body: { errors: [{ extensions: { code: 'PERSISTED_QUERY_HASH_MISMATCH', status: 400 } }] } });
    expect(s.calls()).toBe(0);
    const own = await s.send(JSON.stringify({ query: text, extensions: apq(createHash('sha256').update(text).digest('hex')) }));
    expect(own).toMatchObject({ status: 200, body: { data: { item: 'item 1' } } });
  });

  it('counts JSON depth outside strings and refuses a body deeper than the limit, even streamed in chunks', async () => {
    const s = server();
    // body 1, variables 2, values 3, and two arrays: 5.
    expect((await s.send('{"query": "query ($v: [[Int]]) { list(values: $v) }", "variables": {"values": [[1]], "s": "[[[[[[[["}}')).status).toBe(200);
    const chunks = ['{"query": "{ list }", "variables": {"a": [[', '[[1]]]]}}'].map((c) => new TextEncoder().encode(c));
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        const chunk = chunks.shift();
        if (chunk) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const { status, body } = await s.send(stream);
    expect(status).toBe(400);
    expect(body.errors[0].extensions).toMatchObject({ code: 'BAD_REQUEST', limit: { name: 'maxJsonDepth', max: 5 } });
    expect(s.calls()).toBe(1);
  });

  it('answers invalid JSON and non-object bodies with 400, as yoga does', async () => {
    const s = server();
    expect((await s.send('{"query": ')).body.errors[0].message).toBe('POST body sent invalid JSON.');
    expect((await s.send('42')).status).toBe(400);
    expect((await s.send('')).status).toBe(400);
  });

  it('refuses variables that fail coercion with 400 before any resolver runs, and an operation type the schema lacks', async () => {
    const s = server();
    const coercion = await s.send(JSON.stringify({ query: 'query Q($id: ID!) { item(id: $id) }', variables: { id: { $ne: null } } }));
    expect(coercion.status).toBe(400);
    expect(coercion.body.errors[0]).toMatchObject({ message: expect.stringContaining('$id'), extensions: { code: 'BAD_REQUEST' } });
    const subscription = await s.send(JSON.stringify({ query: 'subscription { item(id: 1) }' }));
    expect(subscription.status).toBe(400);
    expect(subscription.body.errors[0]).toMatchObject({ message: 'The subscription operation is not supported by the schema.', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
    expect(s.calls()).toBe(0);
  });

  it('answers an unacceptable Accept header with 406 and an unknown body type with 415, both with errors', async () => {
    const s = server();
    const unacceptable = await s.send('{"query": "{ item(id: 1) }"}', { accept: 'image/png' });
    expect(unacceptable.status).toBe(406);
    expect(unacceptable.body.errors[0].extensions.code).toBe('NOT_ACCEPTABLE');
    const put = await s.yoga.fetch('http://localhost/graphql', { method: 'PUT', headers: { 'content-type': 'application/json', accept: 'image/png' }, body: '{}' });
    expect(put.status).toBe(406);
    expect(((await put.json()) as any).errors[0].extensions.code).toBe('NOT_ACCEPTABLE');
    const xml = await s.send('<q/>', { 'content-type': 'application/xml' });
    expect(xml.status).toBe(415);
    expect(xml.body.errors[0].extensions.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect(s.calls()).toBe(0);
  });

  it('turns a GET whose variables are not JSON into 400, and checks their depth', async () => {
    const s = server();
    const get = (search: string) => s.yoga.fetch(`http://localhost/graphql?query=${encodeURIComponent('query ($v: [[Int]]) { list(values: $v) }')}&${search}`, { headers: { accept: 'application/json' } });
    expect((await get('variables=%7B')).status).toBe(400);
    expect((await get(`variables=${encodeURIComponent('{"v":[[[[[1]]]]]}')}`)).status).toBe(400);
    expect((await get(`variables=${encodeURIComponent('{"v":[[1]]}')}`)).status).toBe(200);
  });
});
