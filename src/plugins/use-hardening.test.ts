// useHardening in process (yoga.fetch): defaults, limits, body size, CSRF, production switches.
import { describe, expect, it } from 'vitest';
import { createSchema, createYoga } from 'graphql-yoga';
import { loadConfig } from '../config/load-config.js';
import { useHardening, type HardeningOptions } from './use-hardening.js';

const typeDefs = /* GraphQL */ `
  enum Colour { RED GREEN }
  input Filter { colour: Colour }
  type Item { id: ID! name: String! child: Item }
  type Query { item(id: ID!): Item  items(filter: Filter): [Item!]! }
`;

function server(options: HardeningOptions = {}) {
  let resolverCalls = 0;
  const item = (id: string): Record<string, unknown> => ({ id, name: `item ${id}`, child: () => item(`${id}.1`) });
  const yoga = createYoga({
    schema: createSchema({
      typeDefs,
      resolvers: {
        Query: {
          item: (_: unknown, args: { id: string }) => {
            resolverCalls++;
            return item(args.id);
          },
          items: () => {
            resolverCalls++;
            return [item('1')];
          },
        },
      },
    }),
    maskedErrors: { isDev: false },
    logging: false,
    plugins: useHardening(options),
  });
  return {
    calls: () => resolverCalls,
    post: async (query: string, init: { variables?: unknown; headers?: Record<string, string> } = {}) => {
      const response = await yoga.fetch('http://localhost/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...init.headers },
        body: JSON.stringify({ query, variables: init.variables }),
      });
      return { status: response.status, body: (await response.json()) as any };
    },
    fetch: async (input: string | Request, init?: RequestInit) => yoga.fetch(typeof input === 'string' ? new Request(input, init) : input),
  };
}

/** A document `depth` fields deep, its leaf included (`{ item { id } }` is 2). */
const nested = (depth: number) => `{ item(id: "1") { ${'child { '.repeat(depth - 2)}id${' }'.repeat(depth - 2)} } }`;

describe('useHardening', () => {
  it('defaults to the config schema defaults: each limit refuses one past its default (CSRF on and production off: see below)', async () => {
    const config = loadConfig({}, {});
    const s = server();
    const limitOf = async (query: string) => (await s.post(query)).body.errors?.[0]?.extensions?.limit;
    const repeat = (count: number, text: (i: number) => string) => Array.from({ length: count }, (_, i) => text(i)).join(' ');
    expect(await limitOf(nested(config.maxDepth))).toBeUndefined();
    expect(await limitOf(nested(config.maxDepth + 1))).toMatchObject({ name: 'maxDepth', max: config.maxDepth });
    expect(await limitOf(`{ ${repeat(config.maxAliases + 1, (i) => `a${i}: item(id: "1") { id }`)} }`)).toMatchObject({ name: 'maxAliases', max: config.maxAliases });
    expect(await limitOf(`{ item(id: "1") { ${repeat(config.maxDirectives + 1, () => 'id @include(if: true)')} } }`)).toMatchObject({ name: 'maxDirectives', max: config.maxDirectives });
    expect(await limitOf(`{ item(id: "1") { ${repeat(config.maxTokens, () => 'id')} } }`)).toMatchObject({ name: 'maxTokens', max: config.maxTokens });
    const tooLarge = await s.fetch('http://localhost/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ item(id: "1") { id } }', pad: 'x'.repeat(config.maxBodyBytes) }) });
    expect(tooLarge.status).toBe(413);
    expect(((await tooLarge.json()) as any).errors[0].extensions.limit).toMatchObject({ name: 'maxBodyBytes', max: config.maxBodyBytes });
  });

  it('adds the suggestion plugin only in production, CSRF only when on', () => {
    const development = useHardening({});
    expect(useHardening({ production: true }).length).toBeGreaterThan(development.length);
    expect(useHardening({ csrf: false }).length).toBe(development.length - 1);
  });

  describe('document limits', () => {
    it('accepts a document at every limit', async () => {
      const s = server({ maxDepth: 3, maxAliases: 2, maxDirectives: 2 });
      const { status, body } = await s.post('{ a: item(id: "1") @include(if: true) { child { id } } b: item(id: "2") @skip(if: false) { id } }');
      expect(status).toBe(200);
      expect(body.errors).toBeUndefined();
    });

    it.each([
      ['maxDepth', { maxDepth: 3 }, nested(4), 'Query depth exceeds the limit of 3 (found 4).', 4],
      ['maxAliases', { maxAliases: 2 }, '{ a: item(id: "1") { id } b: item(id: "2") { id } c: item(id: "3") { id } }', 'Number of aliases exceeds the limit of 2 (found 3).', 3],
      ['maxDirectives', { maxDirectives: 2 }, '{ item(id: "1") @include(if: true) @skip(if: false) { id @include(if: true) } }', 'Number of directives exceeds the limit of 2 (found 3).', 3],
    ] as const)('%s: 400 GRAPHQL_VALIDATION_FAILED naming the limit, nothing resolved', async (name, options, query, message, found) => {
      const s = server(options);
      const { status, body } = await s.post(query);
      expect(status).toBe(400);
      expect(body.errors).toHaveLength(1);
      expect(body.errors[0].message).toBe(message);
      expect(body.errors[0].extensions).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED', status: 400, limit: { name, max: Object.values(options)[0], found } });
      expect(s.calls()).toBe(0);
    });

    it('counts fragments by their fields, not as a level of their own', async () => {
      // item > child > id: 3 levels (6 if the spread and the inline fragment counted as levels).
      const s = server({ maxDepth: 3 });
      const { body } = await s.post('{ item(id: "1") { ... on Item { ...F } } } fragment F on Item { child { id } }');
      expect(body.errors).toBeUndefined();
    });

    it('maxTokens: 400 GRAPHQL_PARSE_FAILED at parse time, nothing resolved', async () => {
      const s = server({ maxTokens: 50 });
      const { status, body } = await s.post(`{ ${Array.from({ length: 30 }, (_, i) => `f${i}: item(id: "${i}") { id }`).join(' ')} }`);
      expect(status).toBe(400);
      expect(body.errors).toEqual([expect.objectContaining({ message: 'Number of tokens exceeds the limit of 50.' })]);
      expect(body.errors[0].extensions).toMatchObject({ code: 'GRAPHQL_PARSE_FAILED', limit: { name: 'maxTokens', max: 50 } });
      expect(s.calls()).toBe(0);
      // The parse cache remembers the refusal; the second answer is the same.
      expect((await s.post(`{ ${Array.from({ length: 30 }, (_, i) => `f${i}: item(id: "${i}") { id }`).join(' ')} }`)).body.errors[0].extensions.code).toBe('GRAPHQL_PARSE_FAILED');
    });
  });

  describe('request body size', () => {
    it('refuses a content-length over the limit with 413 REQUEST_TOO_LARGE', async () => {
      const s = server({ maxBodyBytes: 100 });
      const { status, body } = await s.post(`{ item(id: "${'x'.repeat(200)}") { id } }`);
      expect(status).toBe(413);
      expect(body.errors[0]).toMatchObject({ message: 'The request body exceeds the limit of 100 bytes.', extensions: { code: 'REQUEST_TOO_LARGE', status: 413, limit: { name: 'maxBodyBytes', max: 100 } } });
      expect(s.calls()).toBe(0);
    });

    it('stops reading a body without content-length once past the limit', async () => {
      const s = server({ maxBodyBytes: 100 });
      let pulled = 0;
      const chunk = new TextEncoder().encode(' '.repeat(64));
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          pulled++;
          if (pulled > 1000) controller.close();
          else controller.enqueue(chunk);
        },
      });
      const request = new Request('http://localhost/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body, duplex: 'half' } as RequestInit);
      expect(request.headers.get('content-length')).toBeNull();
      const response = await s.fetch(request);
      expect(response.status).toBe(413);
      expect(((await response.json()) as any).errors[0].extensions.code).toBe('REQUEST_TOO_LARGE');
      expect(pulled).toBeLessThan(10);
    });

    it('reads a small body without content-length as usual', async () => {
      const s = server({ maxBodyBytes: 100 });
      const bytes = new TextEncoder().encode(JSON.stringify({ query: '{ item(id: "1") { id } }' }));
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(bytes);
          controller.close();
        },
      });
      const response = await s.fetch(new Request('http://localhost/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body, duplex: 'half' } as RequestInit));
      expect(response.status).toBe(200);
      expect(((await response.json()) as any).data.item.id).toBe('1');
    });
  });

  describe('CSRF prevention', () => {
    const get = '/graphql?query=' + encodeURIComponent('{ item(id: "1") { id } }');

    it('refuses a GET without a preflight header with 400 BAD_REQUEST', async () => {
      const s = server();
      const response = await s.fetch(`http://localhost${get}`, { headers: { accept: 'application/graphql-response+json' } });
      expect(response.status).toBe(400);
      const body = (await response.json()) as any;
      expect(body.errors[0].extensions.code).toBe('BAD_REQUEST');
      expect(body.errors[0].message).toContain('x-graphql-yoga-csrf');
      expect(s.calls()).toBe(0);
    });

    it.each(['x-graphql-yoga-csrf', 'graphql-require-preflight', 'apollo-require-preflight'])('accepts a GET carrying %s', async (header) => {
      const response = await server().fetch(`http://localhost${get}`, { headers: { accept: 'application/graphql-response+json', [header]: '1' } });
      expect(response.status).toBe(200);
    });

    it('refuses a form-like POST and accepts a JSON one', async () => {
      const s = server();
      const form = await s.fetch('http://localhost/graphql', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'query=%7B%20item(id%3A%20%221%22)%20%7B%20id%20%7D%20%7D' });
      expect(form.status).toBe(400);
      expect((await s.post('{ item(id: "1") { id } }')).status).toBe(200);
    });

    it('can be switched off', async () => {
      const response = await server({ csrf: false }).fetch(`http://localhost${get}`);
      expect(response.status).toBe(200);
    });
  });

  describe('production', () => {
    it('leaves introspection alone: in production it is use-introspection-permission\'s, which knows the caller', async () => {
      for (const options of [{ production: true }, {}]) {
        const { status, body } = await server(options).post('{ __schema { queryType { name } } }');
        expect(status).toBe(200);
        expect(body.data.__schema.queryType.name).toBe('Query');
      }
    });

    it('removes field, argument, enum-value and variable suggestions; development keeps them', async () => {
      const documents = ['{ item(id: "1") { nme } }', '{ item(idd: "1") { id } }', '{ items(filter: { colour: REDD }) { id } }'];
      for (const query of documents) {
        const { body } = await server({ production: true }).post(query);
        expect(body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
        expect(body.errors[0].message).not.toContain('Did you mean');
        expect((await server().post(query)).body.errors[0].message).toContain('Did you mean');
      }
      const variables = { filter: { colour: 'REDD' } };
      const withVariables = await server({ production: true }).post('query Q($filter: Filter) { items(filter: $filter) { id } }', { variables });
      expect(withVariables.body.errors[0].message).toMatch(/REDD/);
      expect(withVariables.body.errors[0].message).not.toContain('Did you mean');
      expect((await server().post('query Q($filter: Filter) { items(filter: $filter) { id } }', { variables })).body.errors[0].message).toContain('Did you mean');
    });
  });
});
