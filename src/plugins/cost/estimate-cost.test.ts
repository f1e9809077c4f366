// Estimated cost, hand-computed: defaults, list sizes, @cost on fields, types and arguments, fragments, directives, subgraphs.
import { parse, type GraphQLSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { composeSupergraph, type SubgraphDefinition } from '../../gateway/compose.js';
import { buildGatewaySchema } from '../../gateway/gateway-schema.js';
import type { CostMetadata } from './cost-metadata.js';
import { Supergraph } from '../../gateway/supergraph/supergraph.js';
import { estimateCost, type CostOptions } from './estimate-cost.js';

const LINK = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key", "@cost", "@listSize"])';

const CATALOG = /* GraphQL */ `${LINK}
type Query {
  version: String
  product(id: ID!): Product
  products(first: Int = 10, last: Int): [Product!]! @listSize(slicingArguments: ["first", "last"], requireOneSlicingArgument: false)
  strictProducts(first: Int, last: Int): [Product!]! @listSize(slicingArguments: ["first", "last"], assumedSize: 7)
  topPicks: [Product!]!
  productConnection(first: Int!, after: String): ProductConnection @listSize(slicingArguments: ["first"], sizedFields: ["edges"])
  search(text: String! @cost(weight: 3), filter: SearchFilter): [SearchResult!]! @listSize(assumedSize: 4)
  node(id: ID!): Node
}
type Mutation {
  addToCart(productId: ID!): Cart!
  clearCart: Boolean!
  checkout: Cart @cost(weight: 25)
}
scalar Money @cost(weight: 4)
enum Category @cost(weight: 1) { TOOLS BOOKS }
input SearchFilter { category: Category, minRating: Int @cost(weight: 2), and: SearchFilter }
interface Node { id: ID! }
union SearchResult = Product | Shop
type Product implements Node @key(fields: "id") {
  id: ID!
  name: String!
  price: Money! @cost(weight: 2)
  related(limit: Int = 3 @cost(weight: 1)): [Product!]! @listSize(slicingArguments: ["limit"])
}
type Shop implements Node @cost(weight: 6) { id: ID! name: String! revenue: Money }
type ProductConnection { edges: [ProductEdge!]! pageInfo: PageInfo! totalCount: Int! }
type ProductEdge { cursor: String! node: Product! }
type PageInfo { hasNextPage: Boolean! }
type Cart { count: Int! items: [Product!]! @listSize(assumedSize: 5) }
`;

const REVIEWS = /* GraphQL */ `${LINK}
type Product @key(fields: "id") { id: ID! reviews: [Review!] @listSize(assumedSize: 20) }
type Review { id: ID! rating: Int! author: User }
type User { name: String }
`;

const INVENTORY = /* GraphQL */ `${LINK}
type Product @key(fields: "id") { id: ID! stock: Stock @cost(weight: 5) }
type Stock { inStock: Int! }
`;

interface Graph {
  schema: GraphQLSchema;
  metadata: CostMetadata;
}

/** Composes the subgraphs and builds the public stitched schema the router validates documents against. */
function graphOf(subgraphs: SubgraphDefinition[]): Graph {
  const outcome = composeSupergraph(subgraphs);
  if (!outcome.ok) throw new Error(outcome.errors.map((e) => e.message).join('\n'));
  const { schema } = buildGatewaySchema(outcome.supergraphSdl, { executorFor: () => () => ({ data: null }) });
  return { schema, metadata: Supergraph.fromSdl(outcome.supergraphSdl).cost };
}

const shop = graphOf([
  { name: 'catalog', url: 'http://catalog/graphql', sdl: CATALOG },
  { name: 'reviews', url: 'http://reviews/graphql', sdl: REVIEWS },
  { name: 'inventory', url: 'http://inventory/graphql', sdl: INVENTORY },
]);

function estimate(query: string, options: CostOptions = {}, graph: Graph = shop) {
  return estimateCost(graph.schema, graph.metadata, parse(query), options);
}

const DETAILS = /* GraphQL */ `fragment Details on Product { price reviews { rating } }`;

describe('estimateCost: default weights', () => {
  it('costs scalar fields nothing', () => {
    // version: String, a leaf without @cost = 0
    expect(estimate('{ version }')).toEqual({ total: 0, bySubgraph: { catalog: 0 }, notes: [] });
  });

  it('costs an object field 1 and its scalar fields 0', () => {
    // product: 1 (composite default) + id 0 + name 0 = 1
    expect(estimate('{ product(id: "1") { id name } }')).toEqual({ total: 1, bySubgraph: { catalog: 1 }, notes: [] });
  });

  it('costs __typename and introspection nothing', () => {
    // __typename 0, __schema 0 (not walked), product 1 + __typename 0 = 1
    expect(estimate('{ __typename __schema { types { name fields { name } } } product(id: "1") { __typename id } }').total).toBe(1);
  });
});

describe('estimateCost: list sizes', () => {
  it('multiplies nested lists: assumedSize inside a slicing argument', () => {
    // products(first: 5) × (Product 1 + reviews assumedSize 20 × (Review 1 + id 0)) = 5 × 21 = 105
    // catalog: 5 × 1 = 5; reviews: 5 × 20 × 1 = 100
    expect(estimate('{ products(first: 5) { reviews { id } } }')).toEqual({ total: 105, bySubgraph: { catalog: 5, reviews: 100 }, notes: [] });
  });

  it('reads the slicing argument from a literal', () => {
    // products(first: 3) × Product 1 = 3
    expect(estimate('{ products(first: 3) { name } }').total).toBe(3);
  });

  it('reads the slicing argument from a variable, then from its default, then from the argument default', () => {
    const query = 'query Page($n: Int) { products(first: $n) { name } }';
    // $n = 7: 7 × 1 = 7
    expect(estimate(query, { variables: { n: 7 } }).total).toBe(7);
    // $n defaults to 4: 4 × 1 = 4
    expect(estimate('query Page($n: Int = 4) { products(first: $n) { name } }').total).toBe(4);
    // $n absent, no default: execution uses first's default 10: 10 × 1 = 10
    expect(estimate(query, { variables: {} }).total).toBe(10);
  });

  it('uses the argument default when the slicing argument is absent', () => {
    // products(first: Int = 10): 10 × 1 = 10
    expect(estimate('{ products { name } }')).toEqual({ total: 10, bySubgraph: { catalog: 10 }, notes: [] });
  });

  it('takes the largest of several slicing arguments', () => {
    // max(first 3, last 8) = 8; requireOneSlicingArgument: false, so no note: 8 × 1 = 8
    expect(estimate('{ products(first: 3, last: 8) { name } }')).toEqual({ total: 8, bySubgraph: { catalog: 8 }, notes: [] });
  });

  it('notes a broken requireOneSlicingArgument and still estimates', () => {
    // exactly one given: 2 × 1 = 2, no note
    expect(estimate('{ strictProducts(first: 2) { name } }')).toEqual({ total: 2, bySubgraph: { catalog: 2 }, notes: [] });
    // none given, no default: assumedSize 7 × 1 = 7
    const none = estimate('{ strictProducts { name } }');
    expect(none.total).toBe(7);
    expect(none.notes).toEqual(['Query.strictProducts: no slicing argument given where @listSize requires one; used assumedSize']);
    // two given: max(2, 4) × 1 = 4
    const two = estimate('{ strictProducts(first: 2, last: 4) { name } }');
    expect(two.total).toBe(4);
    expect(two.notes).toEqual(['Query.strictProducts: 2 slicing arguments given where @listSize requires one; used the largest']);
  });

  it('falls back to the configurable default list size', () => {
    // topPicks has no @listSize: default 10 × 1 = 10; with listSize 3: 3 × 1 = 3
    expect(estimate('{ topPicks { name } }').total).toBe(10);
    expect(estimate('{ topPicks { name } }', { defaults: { listSize: 3 } }).total).toBe(3);
  });

  it('sizes the sizedFields of a connection instead of the connection', () => {
    const query = 'query Conn($first: Int!) { productConnection(first: $first) { totalCount pageInfo { hasNextPage } edges { cursor node { name price } } } }';
    // productConnection 1 + totalCount 0 + pageInfo 1 + edges first × (ProductEdge 1 + node (Product 1 + price 2))
    // first = 4: 1 + 0 + 1 + 4 × 4 = 18
    expect(estimate(query, { variables: { first: 4 } }).total).toBe(18);
    // first = 25: 1 + 0 + 1 + 25 × 4 = 102
    expect(estimate(query, { variables: { first: 25 } }).total).toBe(102);
  });

  it('treats a negative slicing argument as an empty list', () => {
    // max(0, -5) × 1 = 0
    expect(estimate('{ products(first: -5) { name } }').total).toBe(0);
  });
});

describe('estimateCost: @cost on fields, types and arguments', () => {
  it('multiplies argument weights by the lists above the field, not by its own', () => {
    // per product: 1 + related (limit @cost 1 + limit 4 × Product 1) = 1 + 5 = 6; × first 2 = 12
    expect(estimate('{ products(first: 2) { related(limit: 4) { name } } }').total).toBe(12);
    // limit not given: no argument cost, default 3: 2 × (1 + 3 × 1) = 8
    expect(estimate('{ products(first: 2) { related { name } } }').total).toBe(8);
  });

  it('lets a field weight override its type weight', () => {
    // product 1 + price (@cost 2 on the field wins over Money's @cost 4) = 3
    expect(estimate('{ product(id: "1") { price } }').total).toBe(3);
  });

  it('applies the weight of an object type and of a scalar type to fields returning them', () => {
    // node: max(Product 1, Shop @cost 6 + revenue (Money @cost 4)) = max(1, 10) = 10
    expect(estimate('{ node(id: "s1") { ... on Shop { revenue } } }')).toEqual({ total: 10, bySubgraph: { catalog: 10 }, notes: [] });
  });

  it('adds argument and input-field weights once per call', () => {
    // text @cost 3
    // filter: category (Category @cost 1) + minRating @cost 2 + and: { category 1 } = 4
    // search: assumedSize 4 × max(Product 1, Shop 6) = 24
    // 3 + 4 + 24 = 31
    expect(estimate('{ search(text: "chair", filter: { category: TOOLS, minRating: 4, and: { category: BOOKS } }) { __typename } }').total).toBe(31);
    // the same from a variable: 3 + minRating 2 + 24 = 29
    expect(estimate('query S($f: SearchFilter) { search(text: "chair", filter: $f) { __typename } }', { variables: { f: { minRating: 3 } } }).total).toBe(29);
    // filter not given: 3 + 24 = 27
    expect(estimate('{ search(text: "chair") { __typename } }').total).toBe(27);
  });
});

describe('estimateCost: fragments', () => {
  it('counts a named fragment at each position where it is used', () => {
    // Details on one Product = price 2 + reviews 20 × Review 1 = 22
    // product: 1 + 22 = 23; products(first: 2): 2 × 23 = 46; total 69
    // catalog: (1 + 2) + 2 × (1 + 2) = 9; reviews: 20 + 2 × 20 = 60
    const query = `{ product(id: "1") { ...Details } products(first: 2) { ...Details } } ${DETAILS}`;
    expect(estimate(query)).toEqual({ total: 69, bySubgraph: { catalog: 9, reviews: 60 }, notes: [] });
  });

  it('does not inflate a fragment spread twice, or a field selected twice, at one position', () => {
    // execution merges them: 1 + price 2 + reviews 20 = 23, not 1 + 2 × 22 + 2
    expect(estimate(`{ product(id: "1") { ...Details ...Details price } } ${DETAILS}`).total).toBe(23);
    // inline fragments merge the same way: 1 + price 2 = 3
    expect(estimate('{ product(id: "1") { ... on Product { price } ... { price } } }').total).toBe(3);
  });

  it('takes the most expensive member of a union, not the sum', () => {
    // Product: 1 + price 2 + reviews 20 = 23; Shop: 6 + name 0 + revenue 4 = 10; max = 23
    // search: text 3 + assumedSize 4 × 23 = 95; catalog: 3 + 4 × 3 = 15; reviews: 4 × 20 = 80
    const query = '{ search(text: "x") { ... on Product { price reviews { rating } } ... on Shop { name revenue } } }';
    expect(estimate(query)).toEqual({ total: 95, bySubgraph: { catalog: 15, reviews: 80 }, notes: [] });
  });

  it('takes the most expensive implementation of an interface, with fragments on the interface itself', () => {
    // Product: 1 + price 2 = 3; Shop: 6 + name 0 = 6; max = 6
    expect(estimate('{ node(id: "1") { id ... on Product { price } ... on Shop { name } } }')).toEqual({ total: 6, bySubgraph: { catalog: 6 }, notes: [] });
    // Product: 1 + id 0 + reviews 20 = 21; Shop: 6 + id 0 = 6; max = 21
    const query = '{ node(id: "1") { ... on Node { id } ...ProductParts } } fragment ProductParts on Product { reviews { rating } }';
    expect(estimate(query)).toEqual({ total: 21, bySubgraph: { catalog: 1, reviews: 20 }, notes: [] });
  });

  it('walks a fragment reused at every level once per distinct position, without blowing up', () => {
    // Each level selects the next fragment twice (two aliases), 30 levels deep: 2^30 positions
    // if walked naively. Cost per Product at level i: C_i = 2 × (own 1 + C_{i+1}), C_30 = 0.
    const levels = 30;
    let fragments = `fragment F${levels} on Product { name }`;
    for (let i = levels - 1; i >= 0; i -= 1) fragments += ` fragment F${i} on Product { a: topPicksOf { ...F${i + 1} } b: topPicksOf { ...F${i + 1} } }`;
    const deep = graphOf([{ name: 'deep', url: 'http://deep', sdl: `${LINK} type Query { product: Product } type Product { name: String topPicksOf: Product }` }]);
    let expected = 0;
    for (let i = levels - 1; i >= 0; i -= 1) expected = 2 * (1 + expected);
    const started = performance.now();
    const result = estimate(`{ product { ...F0 } } ${fragments}`, {}, deep);
    expect(result.total).toBe(1 + expected);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('estimateCost: @skip and @include', () => {
  const query = 'query P($withReviews: Boolean!, $skipPrice: Boolean = true) { product(id: "1") { price @skip(if: $skipPrice) reviews @include(if: $withReviews) { rating } name @include(if: false) } }';

  it('honours literal and variable conditions, variable defaults included', () => {
    // price skipped ($skipPrice defaults to true), reviews not included, name not included: 1
    expect(estimate(query, { variables: { withReviews: false } }).total).toBe(1);
    // 1 + price 2 + reviews 20 = 23
    expect(estimate(query, { variables: { withReviews: true, skipPrice: false } }).total).toBe(23);
  });

  it('honours them on fragments', () => {
    // both fragments left out: product 1
    expect(estimate(`{ product(id: "1") { ... @skip(if: true) { price } ...Details @include(if: false) } } ${DETAILS}`).total).toBe(1);
  });
});

describe('estimateCost: mutations', () => {
  it('gives each mutation root field a base cost of 10', () => {
    // addToCart: 10 (in place of Cart's 1) + count 0 = 10
    expect(estimate('mutation { addToCart(productId: "1") { count } }')).toEqual({ total: 10, bySubgraph: { catalog: 10 }, notes: [] });
    // addToCart 10 + items assumedSize 5 × 1 = 15; clearCart 10; total 25
    expect(estimate('mutation { addToCart(productId: "1") { count items { name } } clearCart }').total).toBe(25);
  });

  it('lets @cost on a mutation field and the defaults override the base', () => {
    // checkout @cost 25 + count 0 = 25
    expect(estimate('mutation { checkout { count } }').total).toBe(25);
    // mutationFieldCost 3 + count 0 = 3
    expect(estimate('mutation { addToCart(productId: "1") { count } }', { defaults: { mutationFieldCost: 3 } }).total).toBe(3);
  });
});

describe('estimateCost: per-subgraph breakdown', () => {
  it('charges each field to the subgraph resolving it, times the lists above it', () => {
    // per product: catalog: Product 1; inventory: stock 5 + inStock 0; reviews: 20 × (Review 1 + author 1 + name 0) = 40
    // products(first: 2): catalog 2, inventory 10, reviews 80; total 92
    const query = '{ products(first: 2) { __typename name stock { inStock } reviews { rating author { name } } } }';
    expect(estimate(query)).toEqual({ total: 92, bySubgraph: { catalog: 2, inventory: 10, reviews: 80 }, notes: [] });
  });
});

describe('estimateCost: operation selection', () => {
  const document = 'query A { version } query B { product(id: "1") { price } }';

  it('costs the operation named in the request', () => {
    expect(estimate(document, { operationName: 'B' }).total).toBe(3);
  });

  it('costs nothing, with a note, when no operation can be selected', () => {
    expect(estimate(document)).toEqual({ total: 0, bySubgraph: {}, notes: ['no operation selected: the document has several and no operationName was given'] });
    expect(estimate(document, { operationName: 'C' }).notes).toEqual(['no operation named "C"']);
  });
});

describe('estimateCost: which variables the estimate depends on', () => {
  it('reports the variables it read: slicing arguments yes, an id no, a branch not taken no', () => {
    const query = 'query Q($id: ID!, $first: Int, $limit: Int, $withRelated: Boolean!) { product(id: $id) { name } products(first: $first) { id related(limit: $limit) @include(if: $withRelated) { id } } }';
    const without = new Set<string>();
    estimate(query, { variables: { id: '7', first: 3, limit: 2, withRelated: false }, variablesRead: without });
    expect([...without].sort()).toEqual(['first', 'withRelated']);
    const withRelated = new Set<string>();
    estimate(query, { variables: { id: '7', first: 3, limit: 2, withRelated: true }, variablesRead: withRelated });
    expect([...withRelated].sort()).toEqual(['first', 'limit', 'withRelated']);
  });
});
