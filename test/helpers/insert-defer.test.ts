// Random `@defer` insertion: seeded, valid, never on a mutation's root fields, and the same answer once the directives are ignored.
import {
  buildSchema,
  execute,
  getNamedType,
  getNullableType,
  GraphQLSchema,
  isEnumType,
  isLeafType,
  isListType,
  Lexer,
  parse,
  print,
  Source,
  TokenKind,
  TypeInfo,
  validate,
  visit,
  visitWithTypeInfo,
  type DocumentNode,
  type GraphQLFieldResolver,
  type GraphQLNamedType,
  type GraphQLTypeResolver,
} from 'graphql';
import { GraphQLDeferDirective } from '@graphql-tools/utils';
import { composeServices } from '@theguild/federation-composition';
import { describe, expect, it } from 'vitest';
import { ALL_FEDERATION_FIXTURES } from '../fixtures/federation/index.js';
import { generateQuery } from '../differential/generate-query.js';
import { KNOWN_VALUES } from '../differential/known-values.js';
import { directiveCount, insertDefer, withoutDefer } from './insert-defer.js';

/** The schema with `@defer` declared, as the router's API schema declares it (gateway-schema.ts). */
const withDefer = (schema: GraphQLSchema) => new GraphQLSchema({ ...schema.toConfig(), directives: [...schema.getDirectives(), GraphQLDeferDirective] });

const SHAPES = withDefer(
  buildSchema(/* GraphQL */ `
    interface Node { id: ID! }
    type Cat implements Node { id: ID! name: String lives: Int! owner: Person friends: [Node!]! }
    type Person implements Node { id: ID! name: String! pets: [Pet!] best: Pet }
    type Dog implements Node { id: ID! name: String! barks: Boolean }
    union Pet = Cat | Dog
    enum Color { RED GREEN }
    type Query { node(id: ID!): Node pets(first: Int): [Pet!]! person(id: ID!): Person color: Color }
    type Mutation { adopt(id: ID!): Pet! rename(id: ID!, name: String!): Person }
  `),
);

function apiSchemaOfFixtures(): GraphQLSchema {
  const result = composeServices(ALL_FEDERATION_FIXTURES.map((f) => ({ name: f.name, url: `http://${f.name}.invalid/graphql`, typeDefs: parse(f.sdl) })));
  if (result.errors) throw new Error(result.errors.map((e) => e.message).join('\n'));
  return withDefer(buildSchema(result.publicSdl));
}

/** The `@defer`s of a document: their labels, whether each defers, and the type of the selection set each stands in. */
function defersOf(schema: GraphQLSchema, document: DocumentNode) {
  const typeInfo = new TypeInfo(schema);
  const found: { label?: string; on: boolean; parent?: string }[] = [];
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Directive(node) {
        if (node.name.value !== 'defer') return;
        const arg = (name: string) => node.arguments?.find((a) => a.name.value === name)?.value;
        const label = arg('label');
        const condition = arg('if');
        found.push({ label: label?.kind === 'StringValue' ? label.value : undefined, on: !(condition?.kind === 'BooleanValue' && !condition.value), parent: typeInfo.getParentType()?.name });
      },
    }),
  );
  return found;
}

function tokens(query: string): number {
  const lexer = new Lexer(new Source(query));
  let count = 0;
  while (lexer.advance().kind !== TokenKind.EOF) count++;
  return count;
}

/**
 * Answers any query over any schema with made-up values, the same for the same path: leaves by type, two items per
 * list, the first possible type of an abstract one. graphql-js 16 validates `@defer` but does not act on it, so a
 * document and its deferred copy must answer exactly alike.
 */
const fieldResolver: GraphQLFieldResolver<unknown, unknown> = (_source, _args, _context, info) => {
  const type = getNullableType(info.returnType);
  const leaf = (t: GraphQLNamedType) => (isEnumType(t) ? t.getValues()[0].value : t.name === 'Int' ? 1 : t.name === 'Float' ? 1.5 : t.name === 'Boolean' ? true : `${info.parentType.name}.${info.fieldName}`);
  const named = getNamedType(info.returnType);
  const one = isLeafType(named) ? leaf(named) : {};
  return isListType(type) ? [one, one] : one;
};
const typeResolver: GraphQLTypeResolver<unknown, unknown> = (_value, _context, info, abstractType) => info.schema.getPossibleTypes(abstractType)[0].name;

describe('insertDefer', () => {
  const fixtures = apiSchemaOfFixtures();

  it('is deterministic for a seed and differs between seeds', () => {
    const { query } = generateQuery(fixtures, 11, { knownValues: KNOWN_VALUES });
    expect(insertDefer(fixtures, query, 5)).toEqual(insertDefer(fixtures, query, 5));
    const outcomes = new Set(Array.from({ length: 10 }, (_, seed) => insertDefer(fixtures, query, seed).query));
    expect(outcomes.size).toBeGreaterThan(5);
  });

  it.each([
    ['a schema of every shape', SHAPES],
    ['the Federation v2 fixtures', fixtures],
  ])('over 1000 generated queries on %s: valid, at least one @defer on, unique labels, within the router limits, same answer', (_name, schema) => {
    const failures: string[] = [];
    let defers = 0;
    let nested = 0;
    let onFragments = 0;
    for (let seed = 0; seed < 1000; seed++) {
      const { query, variables } = generateQuery(schema, seed, { knownValues: KNOWN_VALUES });
      const deferred = insertDefer(schema, query, seed);
      const document = parse(deferred.query);
      const problems = validate(schema, document).map((e) => e.message);
      const found = defersOf(schema, document);
      const labels = found.flatMap((d) => (d.label ? [d.label] : []));
      if (found.length !== deferred.defers) problems.push(`says ${deferred.defers} @defers, has ${found.length}`);
      if (!found.some((d) => d.on)) problems.push('no @defer that defers');
      if (new Set(labels).size !== labels.length) problems.push(`labels repeat: ${labels.join(', ')}`);
      // The router's limits (config/schema.ts): 2000 tokens, 50 directives.
      if (tokens(deferred.query) > 2000) problems.push(`${tokens(deferred.query)} tokens`);
      const directives = directiveCount(document);
      if (directives > Math.max(50, directiveCount(parse(query)))) problems.push(`${directives} directives`);
      if (withoutDefer(deferred.query).replace(/\s+/g, ' ') === deferred.query.replace(/\s+/g, ' ')) problems.push('withoutDefer left it unchanged');
      const plain = execute({ schema, document: parse(query), variableValues: variables, fieldResolver, typeResolver });
      const withDirectives = execute({ schema, document, variableValues: variables, fieldResolver, typeResolver });
      if (JSON.stringify(plain) !== JSON.stringify(withDirectives)) problems.push(`answers differ: ${JSON.stringify(plain).slice(0, 200)} ≠ ${JSON.stringify(withDirectives).slice(0, 200)}`);
      if (problems.length) failures.push(`seed ${seed}: ${problems.join('; ')}\n${deferred.query}`);
      defers += found.length;
      if (/@defer[^{]*\{[^}]*@defer/.test(deferred.query)) nested++;
      if (/\.\.\.[A-Za-z]\w*[^\n]*@defer/.test(deferred.query)) onFragments++;
    }
    expect(failures.slice(0, 3)).toEqual([]);
    // Enough variety to mean something: several per query, nested ones, and spreads of named fragments deferred.
    expect(defers / 1000).toBeGreaterThan(2);
    expect(nested).toBeGreaterThan(100);
    expect(onFragments).toBeGreaterThan(50);
  });

  it('never defers root fields of a mutation, and defers below them', () => {
    const query = 'mutation { adopt(id: "1") { ... on Cat { name owner { name } } } rename(id: "2", name: "Rex") { id name } }';
    for (let seed = 0; seed < 200; seed++) {
      const deferred = insertDefer(SHAPES, query, seed);
      const document = parse(deferred.query);
      expect(validate(SHAPES, document)).toEqual([]);
      const found = defersOf(SHAPES, document);
      expect(found.length).toBeGreaterThan(0);
      expect(found.filter((d) => d.parent === 'Mutation')).toEqual([]);
    }
  });

  it('defers root fields of a query, with labels and conditions', () => {
    const parents = new Set<string | undefined>();
    const args = new Set<string>();
    for (let seed = 0; seed < 200; seed++) {
      const deferred = insertDefer(SHAPES, '{ person(id: "1") { name best { ... on Dog { name } } } color }', seed);
      for (const d of defersOf(SHAPES, parse(deferred.query))) parents.add(d.parent);
      for (const m of deferred.query.matchAll(/@defer\(([^)]*)\)/g)) args.add(m[1].replace(/"d\d+"/, '"…"'));
    }
    expect(parents).toContain('Query');
    expect(parents).toContain('Person');
    for (const part of ['label: "…"', 'if: true', 'if: false']) expect([...args].some((a) => a.includes(part)), part).toBe(true);
  });

  it('leaves a subscription alone, and labels never repeat one the document has', () => {
    const subscriptions = withDefer(buildSchema('type Query { a: Int } type Subscription { tick: Tick } type Tick { n: Int }'));
    expect(insertDefer(subscriptions, 'subscription { tick { n } }', 1)).toEqual({ query: 'subscription { tick { n } }', defers: 0 });
    for (let seed = 0; seed < 100; seed++) {
      const deferred = insertDefer(SHAPES, '{ person(id: "1") { ... @defer(label: "d0") { name } best { __typename } } pets { __typename } }', seed, { wrapRate: 0.9 });
      const labels = defersOf(SHAPES, parse(deferred.query)).flatMap((d) => (d.label ? [d.label] : []));
      expect(new Set(labels).size).toBe(labels.length);
    }
  });
});

describe('directiveCount', () => {
  it('counts the directives of a fragment again for each spread, as graphql-armor does', () => {
    expect(directiveCount(parse('{ a @skip(if: false) ...F ...F @include(if: true) } fragment F on Q { b @skip(if: false) c @defer }'))).toBe(1 + 2 + 2 + 1);
  });

  it('keeps a document whose fragments repeat under the limit with fewer @defers', () => {
    const fragments = Array.from({ length: 6 }, (_, i) => `fragment F${i} on Person { ${i ? `...F${i - 1} ...F${i - 1}` : 'name'} best { __typename } }`).join(' ');
    const query = `{ person(id: "1") { ...F5 } } ${fragments}`;
    for (let seed = 0; seed < 50; seed++) {
      const deferred = insertDefer(SHAPES, query, seed, { wrapRate: 0.9, markRate: 0.9 });
      expect(directiveCount(parse(deferred.query))).toBeLessThanOrEqual(50);
      expect(deferred.defers).toBeGreaterThan(0);
    }
  });
});

describe('withoutDefer', () => {
  it('removes every @defer and nothing else', () => {
    expect(withoutDefer('{ a { ... @defer(label: "x") { b } ...F @defer @skip(if: true) } } fragment F on A { c }')).toBe(print(parse('{ a { ... { b } ...F @skip(if: true) } } fragment F on A { c }')));
  });
});
