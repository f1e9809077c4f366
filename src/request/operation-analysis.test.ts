// The operation analysis: GetOperation, and CollectFields with @skip/@include as graphql-js executes them, memoised per document.
import { buildSchema, parse, type FieldNode, type GraphQLObjectType, type OperationDefinitionNode } from 'graphql';
import { collectFields as referenceCollectFields } from 'graphql/execution/collectFields.js';
import { describe, expect, it } from 'vitest';
import { includedByConditions } from './included-by-conditions.js';
import { analyseOperation } from './operation-analysis.js';

const schema = buildSchema(/* GraphQL */ `
  type Query { a: Int b: Int c: Int node: Node }
  interface Node { id: ID! }
  type Book implements Node { id: ID! title: String }
  type Film implements Node { id: ID! minutes: Int }
`);
const query = schema.getQueryType()!;

/** The fields the analysis collects for the root with these variables, as response keys and the nodes' positions. */
function collected(text: string, variables: Record<string, unknown>) {
  const analysis = analyseOperation(parse(text));
  const fields = analysis.collectFields(schema, query, [analysis.operation!.selectionSet], (directives) =>
    includedByConditions(directives, (value) => (value.kind === 'Variable' ? variables[value.name.value] : value.kind === 'BooleanValue' ? value.value : undefined)),
  );
  return shape(fields);
}

/** What graphql-js's executor collects for the same document and variables. */
function reference(text: string, variables: Record<string, unknown>) {
  const document = parse(text);
  const analysis = analyseOperation(document);
  const fragments = Object.fromEntries(analysis.fragments);
  return shape(referenceCollectFields(schema, fragments, variables, query, (analysis.operation as OperationDefinitionNode).selectionSet));
}

function shape(fields: ReadonlyMap<string, readonly FieldNode[]>) {
  return [...fields].map(([key, nodes]) => `${key}@${nodes.map((n) => n.loc?.start).join('+')}`);
}

describe('operation analysis: CollectFields as execution does it', () => {
  const documents = [
    'query ($x: Boolean!) { a @skip(if: $x) b a }',
    'query ($x: Boolean!) { ...F @include(if: $x) ...F c } fragment F on Query { a b }',
    'query ($x: Boolean!) { ...F ...F @include(if: $x) } fragment F on Query { a }',
    'query ($x: Boolean!, $y: Boolean!) { ... @skip(if: $x) { a ...G @include(if: $y) } ...G } fragment G on Query { b c @skip(if: $y) }',
    'query ($x: Boolean!) { a @skip(if: $x) @include(if: true) b @include(if: false) }',
  ];
  for (const text of documents) {
    it(`agrees with graphql-js for every condition value: ${text}`, () => {
      for (const x of [true, false]) {
        for (const y of [true, false]) expect(collected(text, { x, y })).toEqual(reference(text, { x, y }));
      }
    });
  }

  it('keeps every conditional field when no variables are given (what plans and authorization read)', () => {
    const analysis = analyseOperation(parse('query ($x: Boolean!) { a @skip(if: $x) ...F @include(if: $x) } fragment F on Query { b }'));
    expect([...analysis.collectFields(schema, query, [analysis.operation!.selectionSet]).keys()]).toEqual(['a', 'b']);
  });

  it('collects fragments on an interface for each object type that implements it', () => {
    const analysis = analyseOperation(parse('{ node { id ... on Book { title } ...Timed } } fragment Timed on Film { minutes }'));
    const node = analysis.collectFields(schema, query, [analysis.operation!.selectionSet]).get('node')!;
    const book = schema.getType('Book') as GraphQLObjectType;
    const film = schema.getType('Film') as GraphQLObjectType;
    expect([...analysis.collectFields(schema, book, node.map((n) => n.selectionSet)).keys()]).toEqual(['id', 'title']);
    expect([...analysis.collectFields(schema, film, node.map((n) => n.selectionSet)).keys()]).toEqual(['id', 'minutes']);
  });

  it('keeps a deferred fragment\'s fields with @defer as a guard of their own, and reports an unknown fragment', () => {
    const deferred = analyseOperation(parse('{ b ... @defer(label: "x") @include(if: $on) { a } }'));
    const collection = deferred.collection(schema, query, [deferred.operation!.selectionSet]);
    expect(collection.unsupported).toBeUndefined();
    expect([...collection.fields.keys()]).toEqual(['b', 'a']);
    const a = collection.fields.get('a')![0];
    expect(deferred.guardsOf(a).map((guards) => guards.map((list) => list.map((d) => d.name.value)))).toEqual([[['include'], ['defer']]]);
    const unknown = analyseOperation(parse('{ ...Missing }'));
    expect(unknown.collection(schema, query, [unknown.operation!.selectionSet]).unsupported).toBe('unknown fragment Missing');
  });
});

describe('operation analysis: once per document', () => {
  it('picks the operation as GetOperation() does, and reads its declared variables and defaults', () => {
    const document = parse('query A($n: Int = 3, $s: String) { a } query B { b }');
    expect(analyseOperation(document, 'B').operation?.name?.value).toBe('B');
    expect(analyseOperation(document).operation).toBeUndefined();
    expect(analyseOperation(document, 'C').operation).toBeUndefined();
    const a = analyseOperation(document, 'A');
    expect(a.variableDefinitions.map((d) => d.variable.name.value)).toEqual(['n', 's']);
    expect(a.variableDefaults).toEqual({ n: 3 });
  });

  it('hands every reader the same analysis and the same collection for a document', () => {
    const document = parse('{ a b }');
    const analysis = analyseOperation(document, undefined);
    expect(analyseOperation(document, null)).toBe(analysis);
    const sets = [analysis.operation!.selectionSet];
    expect(analysis.collectFields(schema, query, sets)).toBe(analysis.collectFields(schema, query, [analysis.operation!.selectionSet]));
    // Another document of the same text is another analysis: the memo is by identity, dropped with the document.
    expect(analyseOperation(parse('{ a b }'))).not.toBe(analysis);
  });

  it('keeps no analysis for an operation name the document does not hold (made-up names cannot grow the memo)', () => {
    const document = parse('query A { a } query B { b }');
    expect(analyseOperation(document, 'A')).toBe(analyseOperation(document, 'A'));
    const unknown = analyseOperation(document, 'Nope');
    expect(unknown.operation).toBeUndefined();
    expect(analyseOperation(document, 'Nope')).not.toBe(unknown);
  });
});
