// Authorization on a stitched graph in process: denied fields never reach a subgraph, and clients see exactly what they saw before pruning.
import { buildSubgraphSchema } from '@apollo/subgraph';
import { buildSchema, execute, parse, print, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { composeSupergraph } from '../gateway/compose.js';
import { buildGatewaySchema } from '../gateway/gateway-schema.js';
import { PermissionBook } from '../registry/permission-store.js';
import { requestStateOf } from '../request/request-state.js';
import { Authorizer, installGuards, type Decision } from './authorization.js';

const LINK = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])';
const SDL = {
  product: /* GraphQL */ `${LINK}
    type Query { product(id: ID!): Product products(first: Int = 10): [Product!]! search: [Result!]! }
    union Result = Product | Shop
    type Shop { name: String! }
    type Product @key(fields: "id") { id: ID! name: String! price: Int! }`,
  reviews: /* GraphQL */ `${LINK}
    type Product @key(fields: "id") { id: ID! reviews(first: Int): [Review!] }
    type Review { rating: Int! body: String! author: Author }
    type Author { name: String! email: String }`,
  inventory: /* GraphQL */ `${LINK}
    type Product @key(fields: "id") { id: ID! inventory: Inventory }
    type Inventory { inStock: Int! warehouse: String }`,
};
type Name = keyof typeof SDL;

const products = ['1', '2', '3'].map((id) => ({ id, name: `Product ${id}`, price: Number(id) * 100 }));
const reviewsOf = (id: string) => [1, 2].map((n) => ({ rating: n, body: `review ${n} of ${id}`, author: { name: `author ${n}`, email: `a${n}@example.test` } }));
const RESOLVERS: Record<Name, any> = {
  product: {
    Query: {
      product: (_: unknown, { id }: { id: string }) => products.find((p) => p.id === id),
      products: (_: unknown, { first }: { first: number }) => products.slice(0, first),
      search: () => [products[0], { name: 'Shop A' }],
    },
    Result: { __resolveType: (value: { id?: string }) => (value.id ? 'Product' : 'Shop') },
    Product: { __resolveReference: (ref: { id: string }) => products.find((p) => p.id === ref.id) },
  },
  reviews: {
    Product: {
      __resolveReference: (ref: { id: string }) => ref,
      reviews: (product: { id: string }, { first }: { first?: number }) => reviewsOf(product.id).slice(0, first ?? 20),
    },
  },
  inventory: { Product: { __resolveReference: (ref: { id: string }) => ({ id: ref.id, inventory: { inStock: Number(ref.id) * 7, warehouse: 'Leipzig' } }) } },
};

/** The three subgraphs in process, each recording the documents it receives. */
function stitchedGraph() {
  const received: Record<Name, { query: string; variables: Record<string, unknown> }[]> = { product: [], reviews: [], inventory: [] };
  const outcome = composeSupergraph((Object.keys(SDL) as Name[]).map((name) => ({ name, url: `http://${name}/graphql`, sdl: SDL[name] })));
  if (!outcome.ok) throw new Error(outcome.errors.map((e) => e.message).join('\n'));
  const { schema } = buildGatewaySchema(outcome.supergraphSdl, {
    executorFor({ name }) {
      const subgraph = buildSubgraphSchema({ typeDefs: parse(SDL[name as Name]), resolvers: RESOLVERS[name as Name] });
      return async function inProcess(request) {
        received[name as Name].push({ query: print(request.document), variables: request.variables ?? {} });
        return execute({ schema: subgraph, document: request.document, variableValues: request.variables, contextValue: {} }) as ExecutionResult<any>;
      };
    },
  });
  installGuards(schema, (coordinate) => new Error(`Not allowed to read ${coordinate}.`));
  return { schema, received };
}

/** A book where each listed coordinate is granted to a role nobody in these tests has. */
function authorizerDenying(...coordinates: string[]) {
  const book = new PermissionBook();
  book.replace(coordinates.map((coordinate) => ({ principal: 'role:nobody', coordinate })));
  return new Authorizer({ book, defaultPolicy: 'open' });
}
const BOB = new Set(['authenticated', 'sub:bob']);

/** A GraphQL context whose request state carries the decision, as use-authorization leaves it. */
function contextWith(decision: Decision): object {
  const context = {};
  requestStateOf(context).decision = decision;
  return context;
}

async function run(schema: GraphQLSchema, document: DocumentNode, decision: Decision, variableValues?: Record<string, unknown>, rootValue?: unknown) {
  const result = await execute({ schema, document, variableValues, rootValue, contextValue: contextWith(decision) });
  return JSON.parse(JSON.stringify(result));
}

/**
 * Runs `query` twice on fresh graphs: as before pruning (the guards alone) and as now. Returns both
 * answers and what each subgraph received the second time.
 */
async function compare(query: string, denied: string[], variables?: Record<string, unknown>) {
  const document = parse(query);
  const before = stitchedGraph();
  const now = stitchedGraph();
  const decision = authorizerDenying(...denied).decide(now.schema, new Map(), document, undefined, BOB);
  expect(decision.refused).toBe(false);
  expect(decision.pruned).toBeDefined();
  const previous = await run(before.schema, document, { ...decision, pruned: undefined }, variables);
  const current = await run(now.schema, document, decision, variables);
  return { previous, current, received: now.received, receivedBefore: before.received };
}

const mentions = (received: { query: string }[], word: string) => received.filter((r) => new RegExp(`\\b${word}\\b`).test(r.query)).length;

describe('denied fields never reach a subgraph', () => {
  it('a denied nested field: its subgraph is not called, the rest of the page is complete', async () => {
    const { previous, current, received, receivedBefore } = await compare('{ product(id: "2") { name reviews { rating } inventory { inStock } } }', ['Product.reviews']);
    expect(current).toEqual(previous);
    expect(current.data).toEqual({ product: { name: 'Product 2', reviews: null, inventory: { inStock: 14 } } });
    expect(current.errors).toEqual([expect.objectContaining({ message: 'Not allowed to read Product.reviews.', path: ['product', 'reviews'] })]);
    expect(receivedBefore.reviews).toHaveLength(1); // what pruning saves
    expect(received.reviews).toHaveLength(0);
    expect(received.product).toHaveLength(1);
    expect(received.inventory).toHaveLength(1);
  });

  it('in a list: null with an error at every index, and still no call', async () => {
    const { previous, current, received } = await compare('{ products(first: 3) { id reviews { rating } } }', ['Product.reviews']);
    expect(current).toEqual(previous);
    expect(current.errors.map((e: { path: unknown }) => e.path)).toEqual([0, 1, 2].map((i) => ['products', i, 'reviews']));
    expect(received.reviews).toHaveLength(0);
  });

  it('in fragments, inline fragments and under aliases, with a variable used only there', async () => {
    const query = /* GraphQL */ `
      query Page($n: Int) { product(id: "1") { ...Details ... on Product { again: reviews(first: $n) { rating } } inventory { inStock } } }
      fragment Details on Product { name r: reviews(first: $n) { rating } }`;
    const { previous, current, received } = await compare(query, ['Product.reviews'], { n: 1 });
    expect(current).toEqual(previous);
    expect(current.data).toEqual({ product: { name: 'Product 1', r: null, again: null, inventory: { inStock: 7 } } });
    expect(current.errors.map((e: { path: unknown }) => e.path).sort()).toEqual([['product', 'again'], ['product', 'r']]);
    expect(received.reviews).toHaveLength(0);
    // The stitching layer rebuilds each subgraph document and declares only the variables it uses.
    for (const { query: sent, variables } of [...received.product, ...received.inventory]) {
      expect(sent).not.toMatch(/reviews|\$n/);
      expect(variables).not.toHaveProperty('n');
    }
  });

  it('a selection set emptied by pruning keeps __typename, and __typename and siblings are untouched', async () => {
    const { previous, current, received } = await compare('{ product(id: "1") { reviews { rating } } again: product(id: "2") { __typename reviews { rating } } }', ['Product.reviews']);
    expect(current).toEqual(previous);
    expect(current.data).toEqual({ product: { reviews: null }, again: { __typename: 'Product', reviews: null } });
    expect(received.reviews).toHaveLength(0);
    expect(received.product.map((r) => r.query).join('\n')).toMatch(/__typename/);
  });

  it('a denied non-null field: null bubbles as before, and the field is not requested', async () => {
    const one = await compare('{ product(id: "1") { name price } }', ['Product.name']);
    expect(one.current).toEqual(one.previous);
    expect(one.current.data).toEqual({ product: null });
    expect(mentions(one.received.product, 'name')).toBe(0);
    const list = await compare('{ products(first: 2) { name } }', ['Product.name']);
    expect(list.current).toEqual(list.previous);
    expect(list.current.data).toBeNull();
  });

  it('deep in another subgraph\'s answer: only that field goes', async () => {
    const { previous, current, received } = await compare('{ product(id: "1") { reviews { rating author { name email } } } }', ['Author.email']);
    expect(current).toEqual(previous);
    expect(current.errors.map((e: { path: unknown }) => e.path)).toEqual([0, 1].map((i) => ['product', 'reviews', i, 'author', 'email']));
    expect(received.reviews).toHaveLength(1);
    expect(received.reviews[0].query).toMatch(/author\s*{\s*name\s*}/);
    expect(mentions(received.reviews, 'email')).toBe(0);
  });

  it('a field selected twice, once through a pruned fragment, keeps its other selection', async () => {
    const query = '{ product(id: "1") { reviews { rating } ...Bodies } } fragment Bodies on Product { reviews { body } }';
    const { previous, current, received } = await compare(query, ['Review.body']);
    expect(current).toEqual(previous);
    expect(received.reviews).toHaveLength(1);
    expect(received.reviews[0].query).toMatch(/\brating\b/);
    expect(mentions(received.reviews, 'body')).toBe(0);
  });

  it('under a union member', async () => {
    const { previous, current, received } = await compare('{ search { __typename ... on Product { name reviews { rating } } ... on Shop { name } } }', ['Product.reviews']);
    expect(current).toEqual(previous);
    expect(current.data.search).toEqual([{ __typename: 'Product', name: 'Product 1', reviews: null }, { __typename: 'Shop', name: 'Shop A' }]);
    expect(received.reviews).toHaveLength(0);
  });
});

describe('decisions on the operation that runs', () => {
  // GraphQL spec 6.1: only the selected operation executes; the document's others are never read.
  const document = parse('query Catalogue { products { name } } query Finder { search { __typename } } fragment Unused on Product { reviews { rating } }');

  it('refuses an operation whose every root field is denied, though another operation of its document is allowed', () => {
    const { schema } = stitchedGraph();
    const authorizer = authorizerDenying('Query.search', 'Product.reviews');
    expect(authorizer.decide(schema, new Map(), document, 'Finder', BOB)).toMatchObject({ refused: true });
  });

  it('denies nothing in an allowed operation for fields only another operation or an unused fragment selects', () => {
    const { schema } = stitchedGraph();
    const authorizer = authorizerDenying('Query.search', 'Product.reviews');
    const decision = authorizer.decide(schema, new Map(), document, 'Catalogue', BOB);
    expect(decision).toMatchObject({ refused: false });
    expect([...decision.denied]).toEqual([]);
  });
});

describe('Authorizer memoisation', () => {
  const document = parse('{ product(id: "1") { name reviews { rating } } }');

  it('decides and prunes once per schema, document, rule version and principal set', () => {
    const { schema } = stitchedGraph();
    const authorizer = authorizerDenying('Product.reviews');
    const first = authorizer.decide(schema, new Map(), document, undefined, BOB);
    expect(authorizer.decide(schema, new Map(), document, undefined, new Set(['sub:bob', 'authenticated']))).toBe(first);
    expect(first.pruned).toBeDefined();
    expect(print(first.pruned!.operation)).not.toMatch(/reviews/);
    // Another principal set is another decision; one allowed everything carries nothing to prune.
    const allowed = authorizer.decide(schema, new Map(), document, undefined, new Set(['role:nobody']));
    expect(allowed.denied.size).toBe(0);
    expect(allowed.pruned).toBeUndefined();
  });

  it('shares one decision between users whom no rule tells apart, and keeps one per user a rule names', () => {
    const { schema } = stitchedGraph();
    const book = new PermissionBook();
    book.replace([{ principal: 'sub:carol', coordinate: 'Product.reviews' }]);
    const authorizer = new Authorizer({ book, defaultPolicy: 'open' });
    const alice = authorizer.decide(schema, new Map(), document, undefined, new Set(['authenticated', 'sub:alice', 'scope:read']));
    expect(authorizer.decide(schema, new Map(), document, undefined, new Set(['authenticated', 'sub:dave', 'scope:read']))).toBe(alice);
    expect([...alice.denied]).toEqual(['Product.reviews']);
    const carol = authorizer.decide(schema, new Map(), document, undefined, new Set(['authenticated', 'sub:carol', 'scope:read']));
    expect(carol.denied.size).toBe(0);
    // Scopes always count (the SDL's @requiresScopes reads them), named by a rule or not.
    const requiresScope = new Map([['Product.name', { authenticated: true, scopes: [['catalog']] }]]);
    const withScope = authorizer.decide(schema, requiresScope, document, undefined, new Set(['authenticated', 'sub:erin', 'scope:catalog']));
    expect(withScope.denied.has('Product.name')).toBe(false);
    expect(authorizer.decide(schema, requiresScope, document, undefined, new Set(['authenticated', 'sub:erin']))).not.toBe(withScope);
    // A grant that names a user is a new rule version: that user's next decision is their own.
    book.replace([{ principal: 'sub:carol', coordinate: 'Product.reviews' }, { principal: 'sub:dave', coordinate: 'Product.reviews' }]);
    expect(authorizer.decide(schema, new Map(), document, undefined, new Set(['authenticated', 'sub:dave', 'scope:read'])).denied.size).toBe(0);
  });

  it('decides again for a new schema: a swap may change the SDL\'s requirements for the same document', () => {
    const authorizer = authorizerDenying();
    const before = stitchedGraph().schema;
    expect(authorizer.decide(before, new Map(), document, undefined, BOB).denied.size).toBe(0);
    const after = stitchedGraph().schema;
    const requiresScope = new Map([['Product.reviews', { authenticated: true, scopes: [['reviews:read']] }]]);
    expect([...authorizer.decide(after, requiresScope, document, undefined, BOB).denied]).toEqual(['Product.reviews']);
  });

  it('holds a rule on an object type\'s field when the field is selected through an interface', async () => {
    const schema = buildSchema('type Query { node: Node } interface Node { id: ID! secret: String } type Product implements Node { id: ID! secret: String } type Shop implements Node { id: ID! secret: String }');
    installGuards(schema, (coordinate) => new Error(`Not allowed to read ${coordinate}.`));
    const authorizer = authorizerDenying('Product.secret');
    const read = async (query: string, node: Record<string, unknown>) => {
      const document = parse(query);
      const decision = authorizer.decide(schema, new Map(), document, undefined, BOB);
      return { decision, result: await run(schema, document, decision, undefined, { node }) };
    };
    const product = await read('{ node { id secret } }', { __typename: 'Product', id: '1', secret: 'hidden' });
    expect(product.decision.denied.has('Product.secret')).toBe(true);
    expect(product.result).toMatchObject({ data: { node: { id: '1', secret: null } }, errors: [{ message: 'Not allowed to read Product.secret.', path: ['node', 'secret'] }] });
    // Only some possible types deny it: kept in the operation, the guards decide per object.
    expect(product.decision.pruned).toBeUndefined();
    const shop = await read('{ node { id secret } }', { __typename: 'Shop', id: '2', secret: 'open' });
    expect(shop.result).toEqual({ data: { node: { id: '2', secret: 'open' } } });
  });

  it('holds a rule on an interface field for every type implementing it', async () => {
    const schema = buildSchema('type Query { node: Node } interface Node { id: ID! secret: String } type Product implements Node { id: ID! secret: String } type Shop implements Node { id: ID! secret: String }');
    installGuards(schema, (coordinate) => new Error(`Not allowed to read ${coordinate}.`));
    const authorizer = authorizerDenying('Node.secret');
    for (const node of [{ __typename: 'Product', id: '1', secret: 'hidden' }, { __typename: 'Shop', id: '2', secret: 'hidden' }]) {
      const document = parse('{ node { id secret ... on Product { secret } } }');
      const decision = authorizer.decide(schema, new Map(), document, undefined, BOB);
      const result = await run(schema, document, decision, undefined, { node });
      expect(result).toMatchObject({ data: { node: { id: node.id, secret: null } }, errors: [{ message: `Not allowed to read ${node.__typename}.secret.`, path: ['node', 'secret'] }] });
    }
  });
});
