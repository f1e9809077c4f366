// The query generator: seeded, and every document it makes validates against its schema.
import { buildSchema, parse, validate, visit, Kind, type GraphQLSchema } from 'graphql';
import { composeServices } from '@theguild/federation-composition';
import { describe, expect, it } from 'vitest';
import { ALL_FEDERATION_FIXTURES } from '../fixtures/federation/index.js';
import { generateQuery, mulberry32 } from './generate-query.js';
import { KNOWN_VALUES } from './known-values.js';

/** A schema with every shape the generator handles: interfaces, unions, enums, input objects, lists, required and custom-scalar arguments. */
const SHAPES = buildSchema(/* GraphQL */ `
  scalar DateTime
  enum Color { RED GREEN }
  input Window { from: Int!, to: Int, tags: [String!] }
  interface Node { id: ID! }
  interface Named { name: String }
  type Cat implements Node & Named { id: ID! name: String lives(max: Int = 9): Int! owner: Person friends: [Named!]! }
  type Person implements Node & Named { id: ID! name: String pets(color: Color!, window: Window): [Pet!] since(at: DateTime!): Int }
  type Dog implements Node { id: ID! name: String! barks: Boolean }
  union Pet = Cat | Dog
  type Query {
    node(id: ID!): Node
    pets(first: Int, color: Color = RED): [Pet!]!
    person(id: ID!): Person
    named: [Named]
    when(at: DateTime!): String
  }
`);

function apiSchemaOfFixtures(): GraphQLSchema {
  const result = composeServices(ALL_FEDERATION_FIXTURES.map((f) => ({ name: f.name, url: `http://${f.name}.invalid/graphql`, typeDefs: parse(f.sdl) })));
  if (result.errors) throw new Error(result.errors.map((e) => e.message).join('\n'));
  return buildSchema(result.publicSdl);
}

describe('mulberry32', () => {
  it('repeats its sequence for a seed and differs between seeds', () => {
    const a = mulberry32(42);
    const b = mulberry32(42);
    const c = mulberry32(43);
    const first = [a(), a(), a()];
    expect([b(), b(), b()]).toEqual(first);
    expect([c(), c(), c()]).not.toEqual(first);
    expect(first.every((x) => x >= 0 && x < 1)).toBe(true);
  });
});

describe('generateQuery', () => {
  const schemas: [string, GraphQLSchema][] = [
    ['a schema of every shape', SHAPES],
    ['the Federation v2 fixtures', apiSchemaOfFixtures()],
  ];

  it.each(schemas)('makes documents that validate against %s, over 3000 seeds', (_name, schema) => {
    const failures: string[] = [];
    for (let seed = 0; seed < 3000; seed++) {
      const { query } = generateQuery(schema, seed, { knownValues: KNOWN_VALUES });
      const errors = validate(schema, parse(query));
      if (errors.length) failures.push(`seed ${seed}: ${errors.map((e) => e.message).join('; ')}\n${query}`);
    }
    expect(failures.slice(0, 3)).toEqual([]);
  });

  it('is deterministic for a seed', () => {
    expect(generateQuery(SHAPES, 7)).toEqual(generateQuery(SHAPES, 7));
    expect(generateQuery(SHAPES, 7)).not.toEqual(generateQuery(SHAPES, 8));
  });

  it('declares exactly the variables it uses, with a value for each', () => {
    for (let seed = 0; seed < 500; seed++) {
      const { query, variables } = generateQuery(SHAPES, seed);
      const declared: string[] = [];
      const used = new Set<string>();
      visit(parse(query), {
        VariableDefinition: (node) => {
          declared.push(node.variable.name.value);
          return false;
        },
        Variable: (node) => void used.add(node.name.value),
      });
      expect(declared.sort()).toEqual(Object.keys(variables).sort());
      expect([...used].sort()).toEqual(declared);
    }
  });

  it('covers what the differential test is for: aliases, both fragment kinds on abstract types, conditions, variables, __typename', () => {
    const seen = new Set<string>();
    const schema = schemas[1][1];
    for (let seed = 0; seed < 500; seed++) {
      const { query } = generateQuery(schema, seed, { knownValues: KNOWN_VALUES });
      visit(parse(query), {
        Field: (node) => {
          if (node.alias) seen.add('alias');
          if (node.name.value === '__typename') seen.add('__typename');
        },
        InlineFragment: (node) => {
          const condition = node.typeCondition?.name.value;
          if (condition && ['SearchResult', 'SrchHit', 'Media'].includes(condition)) seen.add('inline fragment on an abstract type');
          if (condition && ['SrchArticle', 'SrchVideo', 'SrchPodcast', 'Book', 'Movie'].includes(condition)) seen.add('inline fragment on a possible type');
        },
        FragmentDefinition: () => void seen.add('named fragment'),
        Directive: (node) => {
          seen.add(`@${node.name.value}`);
          if (node.arguments?.[0]?.value.kind === Kind.VARIABLE) seen.add('condition variable');
        },
        Argument: (node) => void (node.value.kind === Kind.VARIABLE ? seen.add('argument variable') : seen.add('argument literal')),
      });
    }
    expect([...seen].sort()).toEqual(
      [
        '@include',
        '@skip',
        '__typename',
        'alias',
        'argument literal',
        'argument variable',
        'condition variable',
        'inline fragment on a possible type',
        'inline fragment on an abstract type',
        'named fragment',
      ].sort(),
    );
  });

  it('uses the known ids of a coordinate, so queries hit real data', () => {
    const ids = new Set<string>();
    const schema = schemas[1][1];
    for (let seed = 0; seed < 1000; seed++) {
      const { query, variables } = generateQuery(schema, seed, { knownValues: KNOWN_VALUES });
      for (const match of query.matchAll(/keyUser\(id: "([^"]+)"\)/g)) ids.add(match[1]);
      for (const value of Object.values(variables)) if (typeof value === 'string' && value.startsWith('u')) ids.add(value);
    }
    expect([...ids].sort()).toEqual(['u1', 'u2', 'u3', 'u9']);
  });
});
