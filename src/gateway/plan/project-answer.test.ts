import {
  buildSchema,
  execute,
  GraphQLError,
  isAbstractType,
  isEnumType,
  isLeafType,
  isListType,
  isNonNullType,
  parse,
  type DocumentNode,
  type ExecutionResult,
  type FieldNode,
  type GraphQLFieldResolver,
  type GraphQLObjectType,
  type GraphQLOutputType,
} from 'graphql';
import { collectFields, collectSubfields } from 'graphql/execution/collectFields.js';
import { describe, expect, it } from 'vitest';
import { createAnswerProjector } from './project-answer.js';

const schema = buildSchema(`
  enum Color { RED GREEN }
  interface Node { id: ID! }
  interface Media { title: String }
  type Book implements Node & Media { id: ID! title: String pages: Int! author: Person tags: [String!] }
  type Song implements Node & Media { id: ID! title: String seconds: Float color: Color! }
  type Person implements Node { id: ID! name: String! friends: [Person!]! best: Person favourite: Media }
  union Result = Book | Song | Person
  type Query {
    node(id: ID!): Node
    media: [Media]
    search: [Result!]
    strict: [Result!]!
    person: Person!
    maybePerson: Person
    color: Color
    count: Int
    matrix: [[Int!]]
  }
  type Mutation { rename(name: String!): Person! bump: Int }
`);

/** The reference: graphql-js execute over resolvers that read the tree by response key (what the router ran before). */
const fromResponseKey: GraphQLFieldResolver<Record<string, unknown>, unknown> = (source, _args, _context, info) => source[info.path.key];
function reference(document: DocumentNode, tree: Record<string, unknown>, variables?: Record<string, unknown>): ExecutionResult {
  return execute({ schema, document, rootValue: tree, variableValues: variables, fieldResolver: fromResponseKey }) as ExecutionResult;
}

/** What a client would compare: data and every error's message, path, locations, extensions and kind. */
function observable(result: ExecutionResult) {
  return JSON.stringify({ data: result.data, errors: result.errors?.map((error) => ({ ...error.toJSON(), kind: error.originalError?.constructor.name })) });
}

/** A deterministic generator (mulberry32). */
function randomOf(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A merged tree for a query, as plan runs make them, with the failures they can hold: a field's
 * error object, null where the schema says non-null, a value of the wrong shape, an unknown or
 * missing `__typename`, a list where an object is expected and the other way round.
 */
function treeFor(document: DocumentNode, random: () => number, variables: Record<string, unknown> = {}, faults = 0.12): Record<string, unknown> {
  const fragments = Object.fromEntries(document.definitions.flatMap((d) => (d.kind === 'FragmentDefinition' ? [[d.name.value, d]] : [])));
  const operation = document.definitions.find((d) => d.kind === 'OperationDefinition')!;
  const rootType = schema.getRootType(operation.operation)!;
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)];
  const fault = () => pick([new GraphQLError('subgraph failed', { extensions: { code: 'SUBGRAPH_ERROR' } }), null, undefined, 'text', 42.5, { nested: true }, [1, 2], true]);

  function object(type: GraphQLObjectType, nodes: readonly FieldNode[] | null, depth: number): Record<string, unknown> {
    const fields = nodes ? collectSubfields(schema, fragments, variables, type, nodes) : collectFields(schema, fragments, variables, type, operation.selectionSet);
    const out: Record<string, unknown> = { __typename: type.name };
    for (const [key, fieldNodes] of fields) {
      const definition = type.getFields()[fieldNodes[0].name.value];
      if (!definition) continue;
      out[key] = value(definition.type, fieldNodes, depth + 1);
    }
    return out;
  }

  function value(type: GraphQLOutputType, nodes: readonly FieldNode[], depth: number): unknown {
    if (random() < faults) return fault();
    if (isNonNullType(type)) return value(type.ofType, nodes, depth);
    if (random() < 0.1) return null;
    if (isListType(type)) return Array.from({ length: depth > 4 ? 0 : Math.floor(random() * 4) }, () => value(type.ofType, nodes, depth));
    if (isLeafType(type)) {
      if (isEnumType(type)) return pick([...type.getValues().map((v) => v.value), 'BLUE']);
      return pick<unknown>(type.name === 'Int' ? [1, 7, -3, 2 ** 40] : type.name === 'Float' ? [1.5, 3] : type.name === 'Boolean' ? [true] : ['a', 'b', 7]);
    }
    const concrete = isAbstractType(type) ? pick(schema.getPossibleTypes(type)) : (type as GraphQLObjectType);
    const result = object(concrete, nodes, depth);
    if (isAbstractType(type) && random() < 0.05) result.__typename = pick([undefined, 'Nope', 'Color', 'Query', 7]);
    return result;
  }

  return object(rootType as GraphQLObjectType, null, 0);
}

const QUERIES: { query: string; variables?: Record<string, unknown>[] }[] = [
  { query: '{ person { id name best { name } friends { id name friends { name } } } }' },
  { query: '{ maybePerson { id name friends { id } favourite { title __typename } } count color }' },
  { query: '{ search { __typename ... on Book { id pages tags } ... on Song { id color seconds } ... on Person { name } } }' },
  { query: '{ strict { ... on Node { id } ...B } } fragment B on Book { title author { name } }' },
  { query: '{ media { title ... on Book { pages } } a: media { __typename t: title } }' },
  { query: '{ node(id: "1") { id ... on Person { name best { best { name } } } } matrix }' },
  { query: '{ person { n1: name n2: name, name best { name } best { id } } __typename }' },
  { query: '{ __proto__: count constructor: color toString: person { id } }' },
  {
    query: 'query ($a: Boolean!, $b: Boolean = true) { person { id @skip(if: $a) name @include(if: $b) ... on Person @include(if: $a) { best { id } } } count @skip(if: $b) }',
    variables: [{ a: true }, { a: false }, { a: true, b: false }, { a: false, b: false }],
  },
  { query: 'mutation { rename(name: "x") { id name } bump }' },
];

describe('the compiled answer projection', () => {
  const projector = createAnswerProjector(schema);

  it('answers every tree exactly as graphql-js execute does, failures and null propagation included', () => {
    let compared = 0;
    let withErrors = 0;
    let nulledData = 0;
    for (const { query, variables: variableSets = [undefined] } of QUERIES) {
      const document = parse(query);
      for (const variables of variableSets) {
        for (let seed = 0; seed < 150; seed++) {
          const random = randomOf(seed * 7919 + query.length);
          const tree = treeFor(document, random, { a: false, b: true, ...variables }, seed % 3 === 0 ? 0 : 0.12);
          const projection = projector.projectionOf(document, undefined, variables);
          expect(projection, query).toBeDefined();
          const compiled = projection!(tree);
          const expected = reference(document, tree, variables);
          expect(observable(compiled), `${query} seed ${seed}`).toBe(observable(expected));
          compared += 1;
          if (expected.errors) withErrors += 1;
          if (expected.data === null) nulledData += 1;
        }
      }
    }
    // The trees must exercise failures, or the comparison proves little.
    expect(compared).toBe(13 * 150);
    expect(withErrors).toBeGreaterThan(compared / 3);
    expect(nulledData).toBeGreaterThan(20);
  });

  it('answers the same as graphql-js on a clean tree, with aliases, __typename and fragments', () => {
    const document = parse('{ search { __typename ... on Book { id t: title } } person { id name } }');
    const tree = {
      search: [
        { __typename: 'Book', id: '1', t: 'Dune' },
        { __typename: 'Song', id: '2' },
      ],
      person: { __typename: 'Person', id: 'p', name: 'Ada' },
    };
    const result = projector.projectionOf(document, undefined, undefined)!(tree);
    expect(result).toEqual({ data: { search: [{ __typename: 'Book', id: '1', t: 'Dune' }, { __typename: 'Song' }], person: { id: 'p', name: 'Ada' } } });
    expect(observable(result)).toBe(observable(reference(document, tree)));
  });

  it('keeps an alias named __proto__ as a field of the answer, not its prototype', () => {
    const result = projector.projectionOf(parse('{ __proto__: count }'), undefined, undefined)!({ ['__proto__']: 3 } as never);
    expect(Object.keys(result.data!)).toEqual(['__proto__']);
    expect(JSON.stringify(result.data)).toBe('{"__proto__":3}');
  });

  it('leaves introspection to graphql-js, and a condition variable that is not a boolean', () => {
    expect(projector.projectionOf(parse('{ __schema { queryType { name } } }'), undefined, undefined)).toBeUndefined();
    expect(projector.projectionOf(parse('{ __type(name: "Book") { name } count }'), undefined, undefined)).toBeUndefined();
    const conditional = parse('query ($a: Boolean) { count @skip(if: $a) }');
    expect(projector.projectionOf(conditional, undefined, { a: null })).toBeUndefined();
    expect(projector.projectionOf(conditional, undefined, { a: true })!({ count: 1 })).toEqual({ data: {} });
  });

  it('compiles a document once and reuses it per combination of condition values', () => {
    const document = parse('query ($a: Boolean!) { count @include(if: $a) color }');
    const on = projector.projectionOf(document, undefined, { a: true });
    expect(projector.projectionOf(document, undefined, { a: true })).toBe(on);
    expect(projector.projectionOf(document, undefined, { a: false })).not.toBe(on);
    expect(on!({ count: 2, color: 'RED' })).toEqual({ data: { count: 2, color: 'RED' } });
  });
});

