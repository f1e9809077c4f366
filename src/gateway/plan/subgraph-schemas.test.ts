import { parse, print, printSchema, printType, type GraphQLObjectType, type GraphQLUnionType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { composeSupergraph } from '../compose.js';
import { buildGatewaySchema } from '../gateway-schema.js';
import { createPlanningExecutor, type PlanOutcome } from '../execute/planning-executor.js';
import { extractSubgraphSchemas } from './subgraph-schemas.js';

const fed = (imports: string) => `extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: [${imports}])`;

function supergraphOf(subgraphs: { name: string; sdl: string }[]): string {
  const outcome = composeSupergraph(subgraphs.map((s) => ({ ...s, url: `http://${s.name}.test/graphql` })));
  if (!outcome.ok) throw new Error(outcome.errors.map((e) => e.message).join('\n'));
  return outcome.supergraphSdl;
}

const SUPERGRAPH = supergraphOf([
  {
    name: 'catalog',
    sdl: `${fed('"@key", "@shareable"')}
      type Query { shelf(filter: Filter): [Item!]! }
      input Filter { genre: Genre }
      enum Genre { SCIFI DRAMA }
      union Item = Book | Movie
      type Book @key(fields: "id") { id: ID! title: String! @shareable }
      type Movie @key(fields: "id") { id: ID! }`,
  },
  {
    name: 'music',
    sdl: `${fed('"@key", "@shareable", "@interfaceObject"')}
      type Query { playlist: [Item!]! }
      union Item = Book | Song
      type Book @key(fields: "id") { id: ID! title: String @shareable }
      type Song { id: ID! }`,
  },
]);

describe('subgraph schemas read from the supergraph', () => {
  const schemas = extractSubgraphSchemas(parse(SUPERGRAPH));

  it('gives each subgraph its own types, field types, union members and root fields', () => {
    const catalog = schemas.get('CATALOG')!;
    const music = schemas.get('MUSIC')!;
    expect((catalog.getType('Item') as GraphQLUnionType).getTypes().map((t) => t.name)).toEqual(['Book', 'Movie']);
    expect((music.getType('Item') as GraphQLUnionType).getTypes().map((t) => t.name)).toEqual(['Book', 'Song']);
    // A shareable field keeps the type its own subgraph gave it.
    expect(String((catalog.getType('Book') as GraphQLObjectType).getFields().title.type)).toBe('String!');
    expect(String((music.getType('Book') as GraphQLObjectType).getFields().title.type)).toBe('String');
    expect(Object.keys(music.getQueryType()!.getFields())).toEqual(['playlist', '_entities']);
    expect(catalog.getType('Song')).toBeUndefined();
    expect(printType(catalog.getType('_Entity')!)).toBe('union _Entity = Book | Movie');
  });

  it('reads the join directives under the names the supergraph links them with (`as:`), as the supergraph model does', () => {
    const linked = SUPERGRAPH.replace(/(@link\(url: "https:\/\/specs\.apollo\.dev\/join\/v[\d.]+")/, '$1, as: "fed"').replaceAll('join__', 'fed__');
    expect(linked).toContain('as: "fed"');
    expect(linked).not.toContain('join__');
    const renamed = extractSubgraphSchemas(parse(linked));
    expect([...renamed.keys()]).toEqual([...schemas.keys()]);
    for (const [graph, schema] of schemas) expect(printSchema(renamed.get(graph)!), graph).toBe(printSchema(schema));
  });

  it('tells the planner when a document would be invalid in its subgraph: the plan is not used and the outcome says so', () => {
    // A supergraph edited by hand so that the catalog subgraph no longer has the Filter input type.
    const broken = SUPERGRAPH.replace(/input Filter @join__type\(graph: CATALOG\)/, 'input Filter @join__type(graph: MUSIC)');
    expect(broken).not.toBe(SUPERGRAPH);
    const { schema, executors } = buildGatewaySchema(SUPERGRAPH, { executorFor: () => () => ({ data: null }) });
    const outcomes: [PlanOutcome, string | undefined][] = [];
    const planner = createPlanningExecutor({ supergraph: parse(broken), apiSchema: schema, executors, onPlanned: (outcome, reason) => outcomes.push([outcome, reason]) });
    const document = parse('{ shelf(filter: { genre: SCIFI }) { ... on Book { title } } }');
    expect(planner.planFor(document, undefined)).toBeUndefined();
    expect(outcomes).toEqual([['invalid', expect.stringMatching(/catalog.*Unknown argument "filter"/)]]);
    const fine = parse('{ playlist { ... on Book { title } } }');
    expect(print(planner.planFor(fine, undefined)!.fetches[0].document)).toContain('playlist');
    expect(outcomes.at(-1)).toEqual(['planned', undefined]);
  });
});
