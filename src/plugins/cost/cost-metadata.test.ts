// Cost metadata read from supergraph SDL: weights and list sizes by coordinate, owners by registered name, @link renames.
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { composeSupergraph } from '../../gateway/compose.js';
import { Supergraph } from '../../gateway/supergraph/supergraph.js';

const LINK = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key", "@cost", "@listSize", "@shareable"])';

function composed(): string {
  const outcome = composeSupergraph([
    {
      name: 'catalog',
      url: 'http://catalog/graphql',
      sdl: `${LINK}
        type Query {
          products(first: Int = 10): [Product!]! @listSize(slicingArguments: ["first"], requireOneSlicingArgument: false)
          connection(first: Int): Connection @listSize(slicingArguments: ["first"], sizedFields: ["edges"])
          search(text: String @cost(weight: 3), filter: Filter): [Product!]! @listSize(assumedSize: 4)
        }
        scalar Money @cost(weight: 4)
        enum Color @cost(weight: 1) { RED GREEN }
        input Filter { color: Color, min: Int @cost(weight: 2) }
        input Plain { text: String }
        type Connection { edges: [Product!]! }
        type Shop @cost(weight: 6) { name: String @shareable }
        type Product @key(fields: "id") { id: ID! price: Money! @cost(weight: 2) }`,
    },
    {
      name: 'reviews',
      url: 'http://reviews/graphql',
      sdl: `${LINK}
        type Product @key(fields: "id") { id: ID! reviews: [Int!] @listSize(assumedSize: 20) }
        type Shop { name: String @shareable }`,
    },
  ]);
  if (!outcome.ok) throw new Error(outcome.errors.map((e) => e.message).join('\n'));
  return outcome.supergraphSdl;
}

describe('the cost facts of a composed supergraph', () => {
  const metadata = Supergraph.fromSdl(composed()).cost;

  it('keeps every @cost weight by schema coordinate', () => {
    expect(Object.fromEntries(metadata.weights)).toEqual({
      Money: 4,
      Color: 1,
      Shop: 6,
      'Filter.min': 2,
      'Query.search(text:)': 3,
      'Product.price': 2,
    });
  });

  it('keeps every @listSize with the spec defaults filled in', () => {
    expect(metadata.listSizes.get('Query.products')).toEqual({ assumedSize: undefined, slicingArguments: ['first'], sizedFields: [], requireOneSlicingArgument: false });
    expect(metadata.listSizes.get('Query.connection')).toEqual({ assumedSize: undefined, slicingArguments: ['first'], sizedFields: ['edges'], requireOneSlicingArgument: true });
    expect(metadata.listSizes.get('Product.reviews')).toEqual({ assumedSize: 20, slicingArguments: [], sizedFields: [], requireOneSlicingArgument: true });
  });

  it('names the subgraphs resolving each field by their registered names', () => {
    expect(metadata.subgraphs).toEqual(['catalog', 'reviews']);
    expect(metadata.owners.get('Product.price')).toEqual(['catalog']);
    expect(metadata.owners.get('Product.reviews')).toEqual(['reviews']);
    // No @join__field: every subgraph defining the type resolves it (key fields, shareable fields).
    expect(metadata.owners.get('Product.id')).toEqual(['catalog', 'reviews']);
    expect(metadata.owners.get('Shop.name')).toEqual(['catalog', 'reviews']);
    expect(metadata.owners.get('Product')).toEqual(['catalog', 'reviews']);
  });

  it('groups the same facts by type and field, and marks input types whose values can cost', () => {
    expect(metadata.types.get('Product')?.fields.get('price')).toMatchObject({ weight: 2, owners: ['catalog'] });
    expect(metadata.types.get('Query')?.fields.get('search')?.argumentWeights.get('text')).toBe(3);
    expect(metadata.types.get('Filter')?.inputCarriesCost).toBe(true);
    expect(metadata.types.get('Plain')?.inputCarriesCost).toBe(false);
  });

  it('reads a parsed document as well as a string', () => {
    expect(Supergraph.fromDocument(parse(composed())).cost.weights).toEqual(metadata.weights);
  });
});

describe('the cost facts of hand-written supergraphs', () => {
  it('follows @link renames, skips graphs that do not resolve a field, and inherits interface weights', () => {
    const metadata = Supergraph.fromSdl(/* GraphQL */ `
      schema
        @link(url: "https://specs.apollo.dev/link/v1.0")
        @link(url: "https://specs.apollo.dev/join/v0.5", for: EXECUTION)
        @link(url: "https://specs.apollo.dev/cost/v0.1", as: "price", import: [{ name: "@listSize", as: "@size" }]) {
        query: Query
      }
      enum join__Graph {
        A @join__graph(name: "alpha", url: "http://a")
        B @join__graph(name: "beta", url: "http://b")
      }
      interface Node @join__type(graph: A) {
        id: ID!
        items(limit: Int): [Int] @size(slicingArguments: ["limit"]) @price(weight: 3)
      }
      type Thing implements Node @join__type(graph: A, key: "id") @join__type(graph: B, key: "id") {
        id: ID!
        items(limit: Int): [Int] @join__field(graph: A)
        label: String @join__field(graph: A, external: true) @join__field(graph: B)
        moved: Int @join__field(graph: A, usedOverridden: true) @join__field(graph: B, override: "alpha")
      }
      type Query @join__type(graph: A) {
        thing: Thing @join__field(graph: A) @cost(weight: 99)
      }
    `).cost;
    // @cost is not the cost spec's directive here (its namespace is renamed to "price"): not read.
    expect(metadata.weights.get('Query.thing')).toBeUndefined();
    expect(metadata.weights.get('Node.items')).toBe(3);
    expect(metadata.weights.get('Thing.items')).toBe(3);
    expect(metadata.listSizes.get('Thing.items')?.slicingArguments).toEqual(['limit']);
    expect(metadata.owners.get('Thing.label')).toEqual(['beta']);
    expect(metadata.owners.get('Thing.moved')).toEqual(['beta']);
    expect(metadata.owners.get('Thing.id')).toEqual(['alpha', 'beta']);
  });

  it('reads the plain directive names when the supergraph links no cost spec', () => {
    const metadata = Supergraph.fromSdl('type Query { a: [Int] @cost(weight: 2) @listSize(assumedSize: 3) }').cost;
    expect(metadata.weights.get('Query.a')).toBe(2);
    expect(metadata.listSizes.get('Query.a')?.assumedSize).toBe(3);
    expect(metadata.subgraphs).toEqual([]);
  });
});
