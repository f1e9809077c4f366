// Bad requests: a clear 4xx with an errors array, never a 5xx, never executed; a subgraph's own error keeps 200; costly documents refused by default.
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_FAULT_SETTINGS, type DemoSubgraphName } from '../../subgraphs/index.js';
import { DEFAULT_COST_LIMIT, setPolicy } from '../../src/registry/policy-store.js';
import type { RunningRouter } from '../../src/cli/start-router.js';
import { databaseKind } from '../helpers/database.js';
import { eventually, postGraphQL } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/stack.js';

const SUBGRAPHS: DemoSubgraphName[] = ['product', 'reviews', 'inventory'];
const PAGE = 'query ProductPage($id: ID!) { product(id: $id) { id name reviews { rating } inventory { inStock } } }';
/** The example: half a billion in estimated cost, 4 s and megabytes of data when it ran. */
const EXPENSIVE = '{ products(first: 1000000) { reviews { product { reviews { body } } } } }';

/** `depth` nested arrays: `[[[…]]]`. */
const nestedArrays = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe(`bad requests (${databaseKind} database)`, () => {
  let stack: Stack;
  const subgraphCalls = () => SUBGRAPHS.reduce((sum, name) => sum + stack.subgraphs[name].subgraph.stats.snapshot().graphqlRequests, 0);

  beforeAll(async () => {
    stack = await startStack();
    // Without backup calls, every subgraph call a request makes has reached its subgraph by the time
    // the router answers, so a request's calls are the change of the subgraphs' counters across it.
    for (const name of SUBGRAPHS) await stack.publishRoute(name, { hedge: { enabled: false } });
  });
  afterAll(async () => {
    await stack?.close();
  });
  beforeEach(() => {
    for (const name of SUBGRAPHS) stack.subgraphs[name].subgraph.faults.set(DEFAULT_FAULT_SETTINGS);
  });

  /** Sends a raw request; returns status, headers, parsed JSON body (or null) and the subgraph calls it made. */
  async function send(init: { method?: string; body?: string; headers?: Record<string, string>; search?: string }) {
    const before = subgraphCalls();
    const response = await fetch(stack.router.url + (init.search ?? ''), {
      method: init.method ?? 'POST',
      headers: init.headers ?? { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: init.body,
      // A guard against a hang, not a timing assertion: a request that never answers fails the test.
      signal: AbortSignal.timeout(15_000),
    });
    const text = await response.text();
    let json: any = null;
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
    return { status: response.status, headers: response.headers, json, text, calls: subgraphCalls() - before };
  }

  describe('parameters of the wrong JSON type are 400 with an errors array', () => {
    it.each([
      ['query is a number', '{"query": 12345}', 'query'],
      ['query is an array', '{"query": ["{ products { id } }"]}', 'query'],
      ['query is an object', '{"query": {}}', 'query'],
      ['variables is a string', '{"query": "{ __typename }", "variables": "{}"}', 'variables'],
      ['variables is an array', '{"query": "{ __typename }", "variables": [1]}', 'variables'],
      ['operationName is a number', '{"query": "{ __typename }", "operationName": 5}', 'operationName'],
      ['extensions is a number', '{"query": "{ __typename }", "extensions": 7}', 'extensions'],
      ['documentId is an object', '{"documentId": {"id": 1}}', 'documentId'],
    ])('%s', async (_, body, parameter) => {
      const answer = await send({ body });
      expect(answer.status).toBe(400);
      expect(answer.json.errors).toHaveLength(1);
      expect(answer.json.errors[0]).toMatchObject({ message: expect.stringContaining(`"${parameter}" parameter`), extensions: { code: 'BAD_REQUEST', status: 400 } });
      expect(answer.headers.get('switchyard-completed')).toBeNull();
      expect(answer.calls).toBe(0);
    });

    it('a GET whose variables are not JSON is 400, not 500', async () => {
      const answer = await send({ method: 'GET', headers: { 'x-graphql-yoga-csrf': '1' }, search: `?query=${encodeURIComponent('{ __typename }')}&variables=%5B` });
      expect(answer.status).toBe(400);
      expect(answer.json.errors[0].extensions.code).toBe('BAD_REQUEST');
    });

    it('an Accept header the router cannot answer in is 406 with errors, before anything runs', async () => {
      const answer = await send({ body: JSON.stringify({ query: PAGE, variables: { id: '1' } }), headers: { 'content-type': 'application/json', accept: 'image/png' } });
      expect(answer.status).toBe(406);
      expect(answer.json.errors[0].extensions.code).toBe('NOT_ACCEPTABLE');
      expect(answer.calls).toBe(0);
    });

    it('a body of a media type GraphQL does not use is 415 with errors', async () => {
      const answer = await send({ body: '<query/>', headers: { 'content-type': 'application/xml', 'x-graphql-yoga-csrf': '1' } });
      expect(answer.status).toBe(415);
      expect(answer.json.errors[0].extensions.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    });
  });

  describe('request errors are 400 and carry no completeness', () => {
    it('a variable that fails coercion (a NoSQL-style operator for ID!)', async () => {
      const { status, headers, body } = await stack.query(PAGE, { variables: { id: { $ne: null } } });
      expect(status).toBe(400);
      expect(body.data).toBeUndefined();
      expect(body.errors?.[0]).toMatchObject({ message: expect.stringContaining('$id'), extensions: { code: 'BAD_REQUEST' } });
      expect(body.extensions?.completeness).toBeUndefined();
      expect(headers.get('switchyard-completed')).toBeNull();
    });

    it('a subscription to a field the graph does not stream', async () => {
      // The demo graph streams inventoryChanged only (issue 27); product is a query field.
      const { status, headers, body } = await stack.query('subscription { product(id: "1") { id } }');
      expect(status).toBe(400);
      expect(body.errors?.[0]).toMatchObject({ message: 'Cannot query field "product" on type "Subscription".', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
      expect(body.extensions?.completeness).toBeUndefined();
      expect(headers.get('switchyard-completed')).toBeNull();
    });
  });

  describe('JSON nesting depth', () => {
    let shallow: RunningRouter;
    beforeAll(async () => {
      shallow = await stack.startRouter({ maxJsonDepth: 6 });
    });

    it('refuses a body nested 100,000 deep with 400 before parsing it, and the connection stays usable', async () => {
      const before = subgraphCalls();
      const answer = await send({ body: `{"query": "query ($v: [[Int]]) { products(first: 1) { id } }", "variables": {"v": ${nestedArrays(100_000)}}}` });
      expect(answer.status).toBe(400);
      expect(answer.json.errors[0]).toMatchObject({ extensions: { code: 'BAD_REQUEST', limit: { name: 'maxJsonDepth', max: 64 } } });
      expect(subgraphCalls()).toBe(before);
      expect((await stack.query(PAGE, { variables: { id: '1' } })).status).toBe(200);
    });

    it('accepts exactly the limit (64 by default, the body itself is level 1)', async () => {
      const variables = (depth: number) => `{"query": "query ($v: [Int]) { __typename }", "variables": {"v": ${nestedArrays(depth)}}}`;
      // Body 1 + variables 1 + the arrays.
      expect((await send({ body: variables(62) })).json.errors?.[0]?.extensions?.limit).toBeUndefined();
      expect((await send({ body: variables(63) })).json.errors?.[0]?.extensions?.limit).toEqual({ name: 'maxJsonDepth', max: 64 });
    });

    it('is configurable (SWITCHYARD_MAX_JSON_DEPTH), also checks GET parameters and chunked bodies, and ignores brackets in strings', async () => {
      const post = (body: string | ReadableStream<Uint8Array>) =>
        fetch(shallow.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, duplex: 'half' } as RequestInit).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
      expect((await post(JSON.stringify({ query: '{ product(id: "[[[[[[[[[[") { id } }' }))).status).toBe(200);
      expect((await post(JSON.stringify({ query: '{ __typename }', variables: { a: { b: { c: { d: { e: { f: 1 } } } } } } }))).status).toBe(400);
      const chunks = ['{"query": "{ __typename }", "variables": {"a": [[', '[[[1]]]]}}'].map((s) => new TextEncoder().encode(s));
      const chunked = new ReadableStream<Uint8Array>({
        pull(controller) {
          const next = chunks.shift();
          if (next) controller.enqueue(next);
          else controller.close();
        },
      });
      expect((await post(chunked)).body.errors[0].extensions.limit).toEqual({ name: 'maxJsonDepth', max: 6 });
      const get = await fetch(`${shallow.url}?query=${encodeURIComponent('{ __typename }')}&variables=${encodeURIComponent('{"a":[[[[[[1]]]]]]}')}`, { headers: { 'x-graphql-yoga-csrf': '1' } });
      expect(get.status).toBe(400);
    });
  });

  describe('502/504 only for sections a subgraph could not answer', () => {
    it('a subgraph that answers with its own GraphQL error keeps 200, even when data is null', async () => {
      const { status, body } = await stack.query('{ products(first: -1) { id } }');
      expect(status).toBe(200);
      expect(body.data).toBeNull();
      expect(body.errors?.[0]).toMatchObject({ message: 'first must not be negative (got -1)', extensions: { code: 'SUBGRAPH_ERROR', subgraph: 'product' } });
    });

    it('a subgraph that answers a bare HTTP 500 lost its section: 502', async () => {
      stack.subgraphs.product.subgraph.faults.set({ errorRate: 1, errorStatus: 500 });
      const { status, body } = await stack.query('{ products(first: 2) { id } }');
      expect(status).toBe(502);
      expect(body.errors?.[0]).toMatchObject({ extensions: { code: 'SUBGRAPH_ERROR', subgraph: 'product', subgraphStatus: 500 } });
    });
  });

  describe('secure by default: a cost limit for every operation', () => {
    it(`refuses the expensive document with COST_LIMIT_EXCEEDED (limit ${DEFAULT_COST_LIMIT}) before any subgraph call`, async () => {
      const before = subgraphCalls();
      const { status, body } = await stack.query(EXPENSIVE);
      expect(status).toBe(400);
      expect(body.errors?.[0]).toMatchObject({ extensions: { code: 'COST_LIMIT_EXCEEDED', cost: { estimated: 441_000_000, limit: DEFAULT_COST_LIMIT } } });
      expect(subgraphCalls()).toBe(before);
    });

    it('serves the demo pages under it; ops raise or clear it with policy set', async () => {
      expect((await stack.query(PAGE, { variables: { id: '1' } })).status).toBe(200);
      expect((await stack.query('{ products(first: 50) { id name reviews { rating } inventory { inStock } } }')).status).toBe(200);
      // 200 × (1 + 20 × (1 + 1 + 20)) = 88,200: over the default.
      const deep = '{ products(first: 200) { reviews { product { reviews { rating } } } } }';
      expect((await stack.query(deep)).body.errors?.[0].extensions?.code).toBe('COST_LIMIT_EXCEEDED');
      try {
        await setPolicy(stack.db, '*', { costLimit: 100_000 });
        await eventually(() => stack.router.policies.resolve(null).costLimit === 100_000, { what: 'the raised limit to reach the router' });
        expect((await stack.query(deep)).status).toBe(200);
        await setPolicy(stack.db, '*', { costLimit: null });
        await eventually(() => stack.router.policies.resolve(null).costLimit === undefined, { what: 'the cleared limit to reach the router' });
        expect((await stack.query('{ products(first: 400) { reviews { product { reviews { rating } } } } }')).status).toBe(200);
      } finally {
        await setPolicy(stack.db, '*', { costLimit: DEFAULT_COST_LIMIT });
        await eventually(() => stack.router.policies.resolve(null).costLimit === DEFAULT_COST_LIMIT, { what: 'the default to come back' });
      }
    });
  });

  describe('thrown random requests (property-based, fixed seed)', () => {
    // Documents built from the demo schema's field names, arguments good and bad, at random depth.
    const leaf = fc.constantFrom('id', 'name', 'price', 'rating', 'body', 'author', 'inStock', 'warehouse', '__typename', 'missing', '...on Product { id }', '...F');
    const args = fc.constantFrom('', '(id: "1")', '(id: "r-1")', '(id: 1)', '(id: $id)', '(first: 2)', '(first: -1)', '(first: $n)', '(first: 1000000)', '(first: 20)', '(x: 1)', '(');
    const alias = fc.constantFrom('', 'a: ', 'b: ');
    const { selection } = fc.letrec<{ selection: string; field: string }>((tie) => ({
      selection: fc.array(tie('field'), { minLength: 1, maxLength: 4 }).map((fields) => `{ ${fields.join(' ')} }`),
      field: fc.oneof(
        { maxDepth: 6, depthIdentifier: 'document' },
        leaf,
        fc.tuple(alias, fc.constantFrom('product', 'products', 'review', 'reviews', 'inventory', 'addReview', 'nope'), args, tie('selection')).map(([a, name, arg, sel]) => `${a}${name}${arg} ${sel}`),
      ),
    }));
    // Well-typed documents too, so a good share of the requests run and call subgraphs.
    const typed = fc.letrec<{ product: string; review: string }>((tie) => ({
      product: fc
        .uniqueArray(fc.oneof({ maxDepth: 2, depthIdentifier: 'typed' }, fc.constantFrom('id', 'name', 'price', 'inventory { inStock warehouse }'), tie('review').map((r) => `reviews ${r}`)), { minLength: 1, maxLength: 4 })
        .map((fields) => `{ ${fields.join(' ')} }`),
      review: fc
        .uniqueArray(fc.oneof({ maxDepth: 2, depthIdentifier: 'typed' }, fc.constantFrom('id', 'rating', 'body', 'author'), tie('product').map((p) => `product ${p}`)), { minLength: 1, maxLength: 4 })
        .map((fields) => `{ ${fields.join(' ')} }`),
    }));
    const typedDocument = fc.oneof(
      typed.product.map((p) => `query Q($id: ID!) { product(id: $id) ${p} }`),
      fc.tuple(fc.constantFrom(1, 3, 1000000), typed.product).map(([n, p]) => `{ products(first: ${n}) ${p} }`),
      typed.review.map((r) => `{ review(id: "r-1") ${r} }`),
    );
    const operation = fc.constantFrom('', 'query ', 'query Q ', 'query Q($id: ID!, $n: Int) ', 'query ($id: ID) ', 'mutation ', 'subscription ', 'fragment F on Product ', '{ __schema { types { name } } } query ');
    const document = fc.oneof(
      fc.tuple(operation, selection).map(([op, sel]) => `${op}${sel}`),
      fc.string({ maxLength: 40 }),
      fc.constant(EXPENSIVE),
    );
    const deep = fc.integer({ min: 60, max: 70 }).map((depth) => JSON.parse(nestedArrays(depth)) as unknown);
    const variables = fc.oneof(fc.constant(undefined), fc.jsonValue({ maxDepth: 3 }), fc.record({ id: fc.oneof(fc.constantFrom('1', '2', 'r-1'), fc.jsonValue({ maxDepth: 2 })), n: fc.oneof(fc.integer({ min: -2, max: 60 }), fc.jsonValue({ maxDepth: 2 })) }, { requiredKeys: [] }), deep);
    const goodParams = fc.record({ query: typedDocument, variables: fc.constantFrom({ id: '1' }, { id: '7' }, { id: 'r-1' }, { id: { $ne: null } }, {}) }, { requiredKeys: ['query'] });
    const randomParams = fc.record(
      {
        query: fc.oneof({ weight: 4, arbitrary: document }, fc.jsonValue({ maxDepth: 2 })),
        variables,
        operationName: fc.oneof(fc.constantFrom('Q', 'ProductPage', 'nope'), fc.jsonValue({ maxDepth: 1 })),
        extensions: fc.oneof(fc.constant({}), fc.jsonValue({ maxDepth: 2 })),
        documentId: fc.oneof(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 })),
      },
      { requiredKeys: [] },
    );
    const params = fc.oneof(goodParams, randomParams);
    const body = fc.oneof({ weight: 6, arbitrary: params.map((p) => JSON.stringify(p)) }, fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? ''), fc.string({ maxLength: 60 }), deep.map((v) => JSON.stringify({ query: '{ __typename }', variables: { v } })));
    const request = fc.record({
      method: fc.constantFrom('POST', 'POST', 'POST', 'POST', 'POST', 'GET', 'GET', 'GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'),
      contentType: fc.constantFrom(undefined, 'application/json', 'application/json', 'application/json', 'application/json; charset=utf-8', 'application/graphql+json', 'application/graphql', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'text/plain', 'application/xml', 'application/json; charset=latin1', '*/*'),
      accept: fc.oneof({ weight: 5, arbitrary: fc.constantFrom(undefined, 'application/json', 'application/graphql-response+json', '*/*', 'application/*', 'application/json, */*;q=0.5') }, fc.constantFrom('text/html', 'image/png', 'application/graphql-response+json;charset=latin1', 'nonsense')),
      csrf: fc.constantFrom(true, true, false),
      authorization: fc.oneof({ weight: 5, arbitrary: fc.constant(undefined) }, fc.constantFrom('Bearer not-a-token', 'Basic dXNlcjpwYXNz', 'Bearer', 'bearer a.b.c')),
      deadline: fc.constantFrom(undefined, undefined, undefined, undefined, undefined, undefined, '0', '-5', 'soon', '1.5', '5000'),
      body,
      params,
    });

    it('answers every one below 500, with an errors array when it refuses, and calls no subgraph for a refusal', async () => {
      let refused = 0;
      let executed = 0;
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          const headers: Record<string, string> = {};
          if (r.contentType) headers['content-type'] = r.contentType;
          if (r.accept) headers.accept = r.accept;
          if (r.csrf) headers['x-graphql-yoga-csrf'] = '1';
          if (r.authorization) headers.authorization = r.authorization;
          if (r.deadline) headers['switchyard-deadline-ms'] = r.deadline;
          const search =
            r.method === 'GET'
              ? `?${new URLSearchParams(Object.entries(r.params).flatMap(([k, v]) => (v === undefined ? [] : [[k, typeof v === 'string' && k === 'query' ? v : JSON.stringify(v)]]))).toString()}`
              : '';
          const answer = await send({ method: r.method, headers, body: r.method === 'GET' ? undefined : r.body, search });
          expect(answer.status, answer.text).toBeLessThan(500);
          if (answer.calls > 0) executed++;
          // GraphiQL (a browser's GET) and a CORS preflight are not GraphQL answers.
          if ((answer.headers.get('content-type') ?? '').startsWith('text/html') || r.method === 'OPTIONS') return;
          const isRefusal = answer.status >= 400 || (answer.json !== null && !('data' in answer.json));
          if (!isRefusal) return;
          refused++;
          expect(Array.isArray(answer.json?.errors) && answer.json.errors.length > 0, answer.text).toBe(true);
          for (const error of answer.json.errors) expect(typeof error.extensions?.code, answer.text).toBe('string');
          expect(answer.calls, answer.text).toBe(0);
        }),
        { seed: 15_2026, numRuns: 1200, endOnFailure: true },
      );
      // The generator mostly makes requests the router must refuse, and some that it serves.
      expect(refused).toBeGreaterThan(500);
      expect(executed).toBeGreaterThan(20);
      // Still up and serving.
      expect((await fetch(stack.router.url.replace(/graphql$/, 'healthz'))).status).toBe(200);
      expect((await postGraphQL(stack.router.url, PAGE, { variables: { id: '2' } })).body.data.product.id).toBe('2');
    }, 60_000);
  });
});
