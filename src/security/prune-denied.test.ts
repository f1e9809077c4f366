// Unit tests of pruning: what goes, what stays (and keeps its identity), emptied selection sets, fragments, abstract types.
import { buildSchema, getOperationAST, Kind, parse, print, type FieldNode, type FragmentDefinitionNode, type GraphQLResolveInfo, type OperationDefinitionNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import { delegationInfo, pruneDenied } from './prune-denied.js';

const schema = buildSchema(/* GraphQL */ `
  type Query { product(id: ID!): Product node: Node search: [Result!]! }
  interface Node { id: ID! secret: String }
  union Result = Product | Shop
  type Product implements Node { id: ID! secret: String name: String! reviews(first: Int): [Review!] }
  type Shop implements Node { id: ID! secret: String name: String! }
  type Review { rating: Int! body: String! }
`);

function prune(query: string, denied: string[]) {
  const document = parse(query);
  const operation = getOperationAST(document) as OperationDefinitionNode;
  const fragments = document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION);
  return { document, operation, fragments, pruned: pruneDenied(schema, operation, fragments, new Set(denied)) };
}

const squash = (text: string) => text.replace(/\s+/g, ' ').trim();
const fieldAt = (operation: OperationDefinitionNode, ...path: number[]) => {
  let node: any = operation;
  for (const index of path) node = node.selectionSet.selections[index];
  return node as FieldNode;
};

describe('pruneDenied', () => {
  it('removes denied fields, aliased or not, and keeps everything else by identity', () => {
    const { operation, pruned } = prune('{ product(id: "1") { name r: reviews(first: 2) { rating } } other: product(id: "2") { name } }', ['Product.reviews']);
    expect(squash(print(pruned!.operation))).toBe('{ product(id: "1") { name } other: product(id: "2") { name } }');
    const [product, other] = pruned!.operation.selectionSet.selections as FieldNode[];
    expect(other).toBe(fieldAt(operation, 1)); // untouched subtree: the same node
    expect(product.selectionSet!.selections[0]).toBe(fieldAt(operation, 0, 0));
    expect([...pruned!.fields]).toEqual([[fieldAt(operation, 0), product]]);
  });

  it('gives an emptied selection set __typename: fields, inline fragments and fragment definitions alike', () => {
    const { pruned } = prune('{ product(id: "1") { reviews { rating } ... on Product { reviews { body } } ...R } } fragment R on Product { reviews { rating } }', ['Product.reviews']);
    expect(squash(print(pruned!.operation))).toBe('{ product(id: "1") { ... on Product { __typename } ...R } }');
    expect(squash(print(pruned!.fragments.R))).toBe('fragment R on Product { __typename }');
    expect(squash(print(prune('{ product(id: "1") { reviews { rating } } }', ['Product.reviews']).pruned!.operation))).toBe('{ product(id: "1") { __typename } }');
  });

  it('marks a field whose only change is in a fragment it spreads: delegation then needs the pruned fragments', () => {
    const { operation, pruned } = prune('{ product(id: "1") { name ...R } } fragment R on Product { reviews { body rating } }', ['Review.body']);
    expect(pruned!.operation).toBe(operation);
    expect(pruned!.fields.get(fieldAt(operation, 0))).toBe(fieldAt(operation, 0));
    expect(squash(print(pruned!.fragments.R))).toBe('fragment R on Product { reviews { rating } }');
  });

  it('prunes a field of an abstract type only when every possible type denies it, as the object-type guards would', () => {
    expect(prune('{ node { id secret } }', ['Product.secret'])).toMatchObject({ pruned: undefined });
    const both = prune('{ node { id secret } }', ['Product.secret', 'Shop.secret']);
    expect(squash(print(both.pruned!.operation))).toBe('{ node { id } }');
    const member = prune('{ search { ... on Product { name reviews { rating } } ... on Shop { name } } }', ['Product.reviews']);
    expect(squash(print(member.pruned!.operation))).toBe('{ search { ... on Product { name } ... on Shop { name } } }');
  });

  it('returns undefined when the operation reads nothing denied', () => {
    expect(prune('{ product(id: "1") { name } }', ['Product.reviews']).pruned).toBeUndefined();
    // Denied fields only in a fragment this operation does not spread.
    expect(prune('query A { product(id: "1") { name } } fragment R on Product { reviews { rating } }', ['Product.reviews']).pruned).toBeUndefined();
  });
});

describe('delegationInfo', () => {
  const { operation, pruned } = prune('{ product(id: "1") { name reviews { rating } } other: product(id: "2") { name } }', ['Product.reviews']);
  const infoFor = (node: FieldNode) => ({ fieldNodes: [node], fragments: {}, operation }) as unknown as GraphQLResolveInfo;

  it('is the same info, no allocation, for an unaffected field', () => {
    const info = infoFor(fieldAt(operation, 1));
    expect(delegationInfo(info, pruned!)).toBe(info);
  });

  it('sees the pruned nodes, fragments and operation for an affected one', () => {
    const info = delegationInfo(infoFor(fieldAt(operation, 0)), pruned!);
    expect(squash(print(info.fieldNodes[0]))).toBe('product(id: "1") { name }');
    expect(info.operation).toBe(pruned!.operation);
    expect(info.fragments).toBe(pruned!.fragments);
  });
});
