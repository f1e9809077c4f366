// Actual cost from response data, hand-computed: real list lengths, absent and null fields, abstract types, mutations.
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { composeSupergraph } from '../../gateway/compose.js';
import { buildGatewaySchema } from '../../gateway/gateway-schema.js';
import { actualTotalCost } from './actual-cost.js';
import { Supergraph } from '../../gateway/supergraph/supergraph.js';
import { estimateCost } from './estimate-cost.js';

const LINK = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key", "@cost", "@listSize"])';

const outcome = composeSupergraph([
  {
    name: 'catalog',
    url: 'http://catalog/graphql',
    sdl: `${LINK}
      type Query {
        products(first: Int = 10): [Product!]! @listSize(slicingArguments: ["first"], requireOneSlicingArgument: false)
        search: [Result!]! @listSize(assumedSize: 4)
      }
      type Mutation { addToCart(productId: ID!): Boolean! }
      union Result = Product | Shop
      type Shop @cost(weight: 6) { name: String! }
      type Product @key(fields: "id") { id: ID! name: String! price: Int! @cost(weight: 2) }`,
  },
  { name: 'reviews', url: 'http://reviews/graphql', sdl: `${LINK} type Product @key(fields: "id") { id: ID! reviews: [Review!] @listSize(assumedSize: 20) } type Review { rating: Int! }` },
  { name: 'inventory', url: 'http://inventory/graphql', sdl: `${LINK} type Product @key(fields: "id") { id: ID! stock: Stock @cost(weight: 5) } type Stock { inStock: Int! }` },
]);
if (!outcome.ok) throw new Error(outcome.errors.map((e) => e.message).join('\n'));
const { schema } = buildGatewaySchema(outcome.supergraphSdl, { executorFor: () => () => ({ data: null }) });
const metadata = Supergraph.fromSdl(outcome.supergraphSdl).cost;

/** The actual cost, as the router's histogram takes it. */
const actual = (query: string, data: Record<string, unknown> | null) => actualTotalCost(schema, metadata, parse(query), data);

describe('actualTotalCost', () => {
  const page = '{ products(first: 3) { name stock { inStock } reviews { rating } } }';

  it('counts the lists the response really holds', () => {
    const data = {
      products: [
        { name: 'Stool', stock: { inStock: 1 }, reviews: [{ rating: 4 }, { rating: 5 }] },
        { name: 'Lamp', stock: null, reviews: [] },
        { name: 'Desk', stock: { inStock: 0 }, reviews: null },
      ],
    };
    // 3 products × 1 = 3
    // stock present on all 3 (the look-up ran, even when it answered null) × 5 = 15
    // 2 + 0 + 0 (null) reviews × 1 = 2
    expect(actual(page, data)).toBe(20);
    // The estimate for the same document: 3 × (1 + 5 + 20 × 1) = 78
    expect(estimateCost(schema, metadata, parse(page)).total).toBe(78);
  });

  it('costs nothing for fields absent from the data, or below a null', () => {
    // stock and reviews absent (skipped, or under a failed parent): 1 product × 1 = 1
    expect(actual(page, { products: [{ name: 'Stool' }] })).toBe(1);
    // no data at all: 0
    expect(actual(page, null)).toBe(0);
  });

  it('counts each alias with its own list', () => {
    // a: 1 × 1 = 1; b: 2 × (1 + price 2) = 6; total 7
    const query = '{ a: products(first: 1) { name } b: products(first: 2) { price } }';
    expect(actual(query, { a: [{ name: 'Stool' }], b: [{ price: 1 }, { price: 2 }] })).toBe(7);
  });

  it('costs each object of a union as its __typename says', () => {
    // Product: 1 + price 2 = 3; two Shops: 6 each = 12; total 15
    const query = '{ search { __typename ... on Product { price } ... on Shop { name } } }';
    const data = { search: [{ __typename: 'Product', price: 1 }, { __typename: 'Shop', name: 'A' }, { __typename: 'Shop', name: 'B' }] };
    expect(actual(query, data)).toBe(15);
  });

  it('takes the most expensive possible type when the data has no __typename', () => {
    // { price }: max(Product 1 + price 2, Shop 6 + name absent 0) = 6
    // { name }:  max(Product 1 + price absent 0, Shop 6 + name 0) = 6; total 12
    const query = '{ search { ... on Product { price } ... on Shop { name } } }';
    expect(actual(query, { search: [{ price: 1 }, { name: 'A' }] })).toBe(12);
  });

  it('gives a mutation root field its base cost', () => {
    // addToCart: 10
    expect(actual('mutation { addToCart(productId: "1") }', { addToCart: true })).toBe(10);
  });
});
