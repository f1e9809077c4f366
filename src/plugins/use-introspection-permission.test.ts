// useIntrospectionPermission in process (yoga.fetch): what counts as introspection, who may, and what the others get.
import { describe, expect, it } from 'vitest';
import { parse } from 'graphql';
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { PermissionBook } from '../registry/permission-store.js';
import { requestStateOf } from '../request/request-state.js';
import { Authorizer } from '../security/authorization.js';
import { readsSchema } from '../security/introspection.js';
import { useIntrospectionPermission, type IntrospectionPermissionOptions } from './use-introspection-permission.js';

const typeDefs = /* GraphQL */ `
  type Item { id: ID! name: String! }
  type Query { item(id: ID!): Item }
`;

/** Stands in for use-authentication: `x-roles` (space-separated) makes the caller `sub:tester` with those roles; no header, anonymous. */
const useTestPrincipal: Plugin = {
  onRequestParse({ request, serverContext }) {
    const roles = request.headers.get('x-roles');
    if (roles === null) return;
    requestStateOf(serverContext).principal = { subject: 'tester', scopes: [], roles: roles.split(' ').filter(Boolean), claims: {}, token: '', expiresAt: new Date(Date.now() + 60_000) };
  },
};

function server(options: Partial<IntrospectionPermissionOptions> = {}) {
  const book = new PermissionBook();
  let resolverCalls = 0;
  const yoga = createYoga({
    schema: createSchema({
      typeDefs,
      resolvers: {
        Query: {
          item: (_: unknown, args: { id: string }) => {
            resolverCalls++;
            return { id: args.id, name: `item ${args.id}` };
          },
        },
      },
    }),
    maskedErrors: { isDev: false },
    logging: false,
    plugins: [useTestPrincipal, useIntrospectionPermission({ authorizer: new Authorizer({ book, defaultPolicy: 'open' }), ...options })],
  });
  return {
    book,
    calls: () => resolverCalls,
    post: async (query: string, headers: Record<string, string> = {}) => {
      const response = await yoga.fetch('http://localhost/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
        body: JSON.stringify({ query }),
      });
      return { status: response.status, headers: response.headers, body: (await response.json()) as any };
    },
  };
}

const DEVELOPER = { 'x-roles': 'developer' };

describe('useIntrospectionPermission', () => {
  describe('what counts as introspection', () => {
    it('__schema or __type anywhere in the document: any operation, fragment, inline fragment or alias', () => {
      const counted = [
        '{ __schema { queryType { name } } }',
        '{ __type(name: "Item") { name } }',
        '{ s: __schema { types { name } } }',
        'query A { item(id: "1") { id } } query B { __schema { queryType { name } } }',
        '{ ...F } fragment F on Query { __type(name: "Item") { name } }',
        '{ ... on Query { __schema { queryType { name } } } }',
      ];
      for (const query of counted) expect({ query, reads: readsSchema(parse(query)) }).toEqual({ query, reads: true });
    });

    it('__typename alone is not introspection, wherever it is', () => {
      for (const query of ['{ __typename }', '{ item(id: "1") { __typename id } }', '{ t: __typename ... on Query { __typename } }']) expect(readsSchema(parse(query))).toBe(false);
    });
  });

  it('refuses introspection without a rule: 403 FORBIDDEN for a caller with a token, and nothing runs', async () => {
    const s = server();
    const { status, body } = await s.post('{ __schema { queryType { name } } item(id: "1") { id } }', DEVELOPER);
    expect(status).toBe(403);
    expect(body.data).toBeUndefined();
    expect(body.errors).toEqual([expect.objectContaining({ message: 'Introspection is off in production: no permission rule allows it for this caller.', extensions: expect.objectContaining({ code: 'FORBIDDEN', status: 403 }) })]);
    expect(s.calls()).toBe(0);
  });

  it('answers a caller the introspection rule names, and only them; live, as the book changes', async () => {
    const s = server();
    s.book.replace([{ principal: 'role:developer', coordinate: 'introspection' }]);
    const allowed = await s.post('{ __schema { queryType { name } } }', DEVELOPER);
    expect(allowed.status).toBe(200);
    expect(allowed.body.data.__schema.queryType.name).toBe('Query');
    expect((await s.post('{ __type(name: "Item") { name } }', { 'x-roles': 'tester' })).status).toBe(403);
    s.book.replace([]);
    expect((await s.post('{ __schema { queryType { name } } }', DEVELOPER)).status).toBe(403);
  });

  it('anonymous: 401 UNAUTHENTICATED with WWW-Authenticate where a token could help, 403 with authentication off; a rule for anonymous lets them in', async () => {
    const authenticating = await server().post('{ __schema { queryType { name } } }');
    expect(authenticating.status).toBe(401);
    expect(authenticating.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(authenticating.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    expect(authenticating.body.errors[0].message).toMatch(/^Introspection is off in production/);
    const off = await server({ authenticates: false }).post('{ __schema { queryType { name } } }');
    expect(off.status).toBe(403);
    expect(off.body.errors[0].extensions.code).toBe('FORBIDDEN');
    const open = server({ authenticates: false });
    open.book.replace([{ principal: 'anonymous', coordinate: 'introspection' }]);
    expect((await open.post('{ __schema { queryType { name } } }')).status).toBe(200);
  });

  it('lets every document that does not introspect through, __typename included', async () => {
    const s = server();
    const { status, body } = await s.post('{ __typename item(id: "1") { __typename id name } }');
    expect(status).toBe(200);
    expect(body.data).toEqual({ __typename: 'Query', item: { __typename: 'Item', id: '1', name: 'item 1' } });
  });
});
