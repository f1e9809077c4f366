// Hardening over HTTP: document limits, body size, CSRF prevention, production switches; the demo's own queries still pass.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningRouter } from '../../src/cli/start-router.js';
import { databaseKind } from '../helpers/database.js';
import { DEFAULT_COST_LIMIT, setPolicy } from '../../src/registry/policy-store.js';
import { eventually, postGraphQL, type GraphQLResponse } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/stack.js';

const PRODUCT_PAGE = /* GraphQL */ `
  query ProductPage($id: ID!) {
    product(id: $id) { id name price reviews { id rating body author } inventory { inStock warehouse } }
  }
`;
const PRODUCT_LIST = '{ products(first: 50) { id name reviews { rating } inventory { inStock } } }';

/** A document `depth` fields deep, its leaf included: product > reviews > product > … > id. */
function deepQuery(depth: number): string {
  const fields = Array.from({ length: depth - 2 }, (_, i) => (i % 2 === 0 ? 'reviews' : 'product'));
  return `{ product(id: "1") { ${fields.map((f) => `${f} { `).join('')}id${' }'.repeat(fields.length)} } }`;
}

/** Request bodies of `size` bytes, streamed in 64 KiB chunks without a content-length (chunked). */
function chunkedBody(size: number, sent: { bytes: number }): ReadableStream<Uint8Array> {
  const chunk = new TextEncoder().encode(' '.repeat(64 * 1024));
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent.bytes >= size) return controller.close();
      sent.bytes += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
}

describe(`hardening (${databaseKind} database)`, () => {
  let stack: Stack;
  /** A second router on the same registry and subgraphs, with NODE_ENV=production (authentication off: production needs a real key source, beside the point here). */
  let production: RunningRouter;
  const product = () => stack.subgraphs.product.subgraph.stats;

  beforeAll(async () => {
    stack = await startStack();
    production = await stack.startRouter({ nodeEnv: 'production', authMode: 'off' });
  });
  afterAll(async () => {
    await stack?.close();
  });
  beforeEach(() => {
    product().reset();
  });

  /** Asserts a 400 refusal with `code` and `message`, and that no subgraph was called for it. */
  function expectRefused(answer: GraphQLResponse, code: string, message: string, limit: Record<string, unknown>) {
    expect(answer.status).toBe(400);
    expect(answer.body.data).toBeUndefined();
    expect(answer.body.errors).toHaveLength(1);
    expect(answer.body.errors?.[0]).toMatchObject({ message, extensions: { code, status: 400, detail: message, limit } });
    expect(product().snapshot().graphqlRequests).toBe(0);
  }

  describe('the demo queries pass with the default limits', () => {
    it.each([
      ['development', () => stack.router.url],
      ['production', () => production.url],
    ])('%s: the product page and a page of 50 products', async (_, url) => {
      const page = await postGraphQL(url(), PRODUCT_PAGE, { variables: { id: '2' } });
      expect(page.status).toBe(200);
      expect(page.body.errors).toBeUndefined();
      expect(page.body.data.product).toMatchObject({ id: '2', name: expect.any(String), inventory: { inStock: expect.any(Number) } });
      const list = await postGraphQL(url(), PRODUCT_LIST);
      expect(list.status).toBe(200);
      expect(list.body.errors).toBeUndefined();
      expect(list.body.data.products).toHaveLength(50);
    });

    it('a document exactly at the depth limit (12) is served (once the default cost limit is cleared)', async () => {
      // Five nested `reviews` lists are estimated at 20^5 reviews: the shipped cost limit refuses it
      // (bad-requests.test.ts), so the depth limit alone is seen with the cost limit cleared.
      expect((await stack.query(deepQuery(12))).body.errors?.[0].extensions?.code).toBe('COST_LIMIT_EXCEEDED');
      await setPolicy(stack.db, '*', { costLimit: null });
      try {
        await eventually(() => stack.router.policies.resolve(null).costLimit === undefined, { what: 'the cleared cost limit to reach the router' });
        const { status, body } = await stack.query(deepQuery(12));
        expect(status).toBe(200);
        expect(body.errors).toBeUndefined();
      } finally {
        await setPolicy(stack.db, '*', { costLimit: DEFAULT_COST_LIMIT });
        await eventually(() => stack.router.policies.resolve(null).costLimit === DEFAULT_COST_LIMIT, { what: 'the default cost limit to come back' });
      }
    });
  });

  describe('document limits (defaults: depth 12, aliases 30, directives 50, tokens 2000)', () => {
    it('too deep: 400 GRAPHQL_VALIDATION_FAILED, no subgraph called', async () => {
      expectRefused(await stack.query(deepQuery(13)), 'GRAPHQL_VALIDATION_FAILED', 'Query depth exceeds the limit of 12 (found 13).', { name: 'maxDepth', max: 12, found: 13 });
    });

    it('too many aliases: 400 GRAPHQL_VALIDATION_FAILED, no subgraph called', async () => {
      const query = `{ ${Array.from({ length: 31 }, (_, i) => `p${i}: product(id: "${i + 1}") { id }`).join(' ')} }`;
      expectRefused(await stack.query(query), 'GRAPHQL_VALIDATION_FAILED', 'Number of aliases exceeds the limit of 30 (found 31).', { name: 'maxAliases', max: 30, found: 31 });
    });

    it('too many directives: 400 GRAPHQL_VALIDATION_FAILED, no subgraph called', async () => {
      const query = `{ product(id: "1") { ${'id @include(if: true) '.repeat(51)}} }`;
      expectRefused(await stack.query(query), 'GRAPHQL_VALIDATION_FAILED', 'Number of directives exceeds the limit of 50 (found 51).', { name: 'maxDirectives', max: 50, found: 51 });
    });

    it('too many tokens: 400 GRAPHQL_PARSE_FAILED at parse time, no subgraph called', async () => {
      const query = `{ product(id: "1") { ${'id '.repeat(2_000)}} }`;
      expectRefused(await stack.query(query), 'GRAPHQL_PARSE_FAILED', 'Number of tokens exceeds the limit of 2000.', { name: 'maxTokens', max: 2000 });
    });

    it('the refusals are not masked in production either', async () => {
      const answer = await postGraphQL(production.url, deepQuery(13));
      expect(answer.status).toBe(400);
      expect(answer.body.errors?.[0]).toMatchObject({ message: 'Query depth exceeds the limit of 12 (found 13).', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
    });
  });

  describe('request body size (default 1 MiB)', () => {
    const query = '{ product(id: "1") { id } }';

    it('serves a body under the limit', async () => {
      const { status, body } = await stack.query(query, { variables: { padding: 'x'.repeat(900_000) } });
      expect(status).toBe(200);
      expect(body.data.product.id).toBe('1');
    });

    it('refuses a content-length over the limit with 413 REQUEST_TOO_LARGE', async () => {
      const { status, body } = await stack.query(query, { variables: { padding: 'x'.repeat(1_100_000) } });
      expect(status).toBe(413);
      expect(body.errors?.[0]).toMatchObject({
        message: 'The request body exceeds the limit of 1048576 bytes.',
        extensions: { code: 'REQUEST_TOO_LARGE', status: 413, limit: { name: 'maxBodyBytes', max: 1_048_576 } },
      });
      expect(product().snapshot().graphqlRequests).toBe(0);
    });

    it('refuses a chunked body without content-length once past the limit, without reading all of it', async () => {
      const sent = { bytes: 0 };
      const size = 64 * 1024 * 1024;
      const response = await fetch(stack.router.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
        body: chunkedBody(size, sent),
        duplex: 'half',
      } as RequestInit);
      expect(response.status).toBe(413);
      expect(((await response.json()) as any).errors[0].extensions.code).toBe('REQUEST_TOO_LARGE');
      // The router stopped reading just past 1 MiB; socket buffers let the client push a little more.
      expect(sent.bytes).toBeLessThan(size / 4);
      expect(product().snapshot().graphqlRequests).toBe(0);
    });
  });

  describe('CSRF prevention', () => {
    const getUrl = () => `${stack.router.url}?query=${encodeURIComponent('{ product(id: "1") { id } }')}`;

    it('refuses a GET without a preflight header with 400 BAD_REQUEST, calling no subgraph', async () => {
      const response = await fetch(getUrl(), { headers: { accept: 'application/graphql-response+json' } });
      expect(response.status).toBe(400);
      const body = (await response.json()) as any;
      expect(body.errors[0].extensions.code).toBe('BAD_REQUEST');
      expect(body.errors[0].message).toContain('x-graphql-yoga-csrf');
      expect(product().snapshot().graphqlRequests).toBe(0);
    });

    it('serves a GET with the x-graphql-yoga-csrf header', async () => {
      const response = await fetch(getUrl(), { headers: { accept: 'application/graphql-response+json', 'x-graphql-yoga-csrf': '1' } });
      expect(response.status).toBe(200);
      expect(((await response.json()) as any).data.product.id).toBe('1');
    });

    it('refuses a form-encoded POST and serves a JSON one', async () => {
      const form = await fetch(stack.router.url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/graphql-response+json' },
        body: new URLSearchParams({ query: '{ product(id: "1") { id } }' }).toString(),
      });
      expect(form.status).toBe(400);
      expect(((await form.json()) as any).errors[0].extensions.code).toBe('BAD_REQUEST');
      const json = await stack.query('{ product(id: "1") { id } }');
      expect(json.status).toBe(200);
      expect(json.body.data.product.id).toBe('1');
    });
  });

  describe('production and development', () => {
    const introspection = '{ __schema { queryType { name } types { name } } }';

    it('production refuses introspection (__schema and __type) without a permission rule: 403 FORBIDDEN (authentication off: no token could help)', async () => {
      for (const query of [introspection, '{ __type(name: "Product") { fields { name } } }']) {
        const { status, body } = await postGraphQL(production.url, query);
        expect(status).toBe(403);
        expect(body.errors?.[0].extensions?.code).toBe('FORBIDDEN');
        expect(body.errors?.[0].message).toMatch(/^Introspection is off in production/);
      }
      // The rule and its live changes: test/integration/introspection.test.ts.
    });

    it('development answers introspection (GraphiQL needs it)', async () => {
      const { status, body } = await stack.query(introspection);
      expect(status).toBe(200);
      expect(body.data.__schema.queryType.name).toBe('Query');
      expect(body.data.__schema.types.map((t: { name: string }) => t.name)).toContain('Product');
    });

    it('production gives no "Did you mean" suggestions in validation errors; development does', async () => {
      for (const query of ['{ product(id: "1") { nme } }', '{ product(idd: "1") { id } }', 'query ($id: Idd!) { product(id: $id) { id } }']) {
        const prod = await postGraphQL(production.url, query);
        expect(prod.status).toBe(400);
        expect(prod.body.errors?.[0].extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
        expect(prod.body.errors?.map((e) => e.message).join(' ')).not.toMatch(/Did you mean/);
        const dev = await stack.query(query);
        expect(dev.body.errors?.[0].message).toMatch(/Did you mean/);
      }
      const { body } = await postGraphQL(production.url, '{ product(id: "1") { nme } }');
      expect(body.errors?.[0].message).toBe('Cannot query field "nme" on type "Product".');
      expect(product().snapshot().graphqlRequests).toBe(0);
    });
  });
});
