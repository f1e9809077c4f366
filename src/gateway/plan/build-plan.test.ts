import { readFileSync } from 'node:fs';
import { parse, print, type ExecutionResult } from 'graphql';
import type { ExecutionRequest, Executor } from '@graphql-tools/utils';
import { describe, expect, it } from 'vitest';
import { composeSupergraph } from '../compose.js';
import { buildGatewaySchema } from '../gateway-schema.js';
import { createPlanningExecutor } from './planning-executor.js';

const WORKLOAD = new URL('../../../bench/workloads/federation-benchmark/', import.meta.url);

function workloadPlanner(executors = new Map<string, Executor>()) {
  const names = ['accounts', 'inventory', 'products', 'reviews'];
  const outcome = composeSupergraph(names.map((name) => ({ name, url: `http://${name}.test/graphql`, sdl: readFileSync(new URL(`subgraphs/${name}.graphql`, WORKLOAD), 'utf8') })));
  if (!outcome.ok) throw new Error(JSON.stringify(outcome.errors));
  const { schema } = buildGatewaySchema(outcome.supergraphSdl, { executorFor: () => () => ({ data: null }) });
  return createPlanningExecutor({ supergraph: parse(outcome.supergraphSdl), apiSchema: schema, executors });
}

/** A fetch described by its subgraph and the positions of its steps (`path:Type`, or `root`). */
function describeFetches(text: string) {
  const planner = workloadPlanner();
  const plan = planner.planFor(parse(text), undefined);
  if (!plan) throw new Error(planner.whyUnplanned(parse(text), undefined));
  return plan.fetches.map((f) => ({
    id: f.id,
    subgraph: f.subgraph,
    steps: f.steps.map((s) => (s.entityType ? `${s.path.join('.')}:${s.entityType}` : 'root')),
    dependsOn: f.dependsOn.map((d) => d.id),
    document: print(f.document),
  }));
}

describe('query plans', () => {
  it('keeps fields in their parent subgraph and moves the others to entity look-ups by key', () => {
    const fetches = describeFetches('{ topProducts { upc name reviews { body } } }');
    expect(fetches.map(({ document: _, ...f }) => f)).toEqual([
      { id: 0, subgraph: 'products', steps: ['root'], dependsOn: [] },
      { id: 1, subgraph: 'reviews', steps: ['topProducts:Product'], dependsOn: [0] },
    ]);
    // The key and the type name ride along in the parent fetch for the representations.
    expect(fetches[0].document).toMatch(/topProducts \{\s+upc\s+name\s+__typename\s+\}/);
    expect(fetches[1].document).toContain('_entities(representations: $representations)');
  });

  it('fetches @requires fields first, from the subgraph that owns them, and waits for them', () => {
    const fetches = describeFetches('{ users { reviews { product { shippingEstimate } } } }');
    const products = fetches.find((f) => f.subgraph === 'products')!;
    const inventory = fetches.find((f) => f.subgraph === 'inventory')!;
    expect(products.document).toMatch(/price\s+weight/);
    expect(inventory.dependsOn).toContain(products.id);
    expect(inventory.steps).toEqual(['users.reviews.product:Product']);
  });

  it('reads a field the parent field @provides from the same subgraph', () => {
    const fetches = describeFetches('{ topProducts { reviews { author { username } } } }');
    expect(fetches.map((f) => f.subgraph)).toEqual(['products', 'reviews']);
    expect(fetches[1].document).toMatch(/author \{\s+username/);
  });

  it('sends the look-ups of one subgraph that become ready together in one request', () => {
    const fetches = describeFetches('{ users { reviews { product { name reviews { author { reviews { product { name } } } } } } } }');
    const products = fetches.filter((f) => f.subgraph === 'products');
    expect(products).toHaveLength(1);
    expect(products[0].steps).toHaveLength(2);
    expect(products[0].document).toContain('_0: _entities(representations: $_0_representations)');
    expect(products[0].document).toContain('_1: _entities(representations: $_1_representations)');
  });

  it('declares in each subgraph document only the client variables it uses', () => {
    const fetches = describeFetches('query Q($id: ID!, $first: Int) { user(id: $id) { name } topProducts(first: $first) { name } }');
    expect(fetches.find((f) => f.subgraph === 'accounts')!.document).toMatch(/^query \(\$id: ID!\)/);
    expect(fetches.find((f) => f.subgraph === 'products')!.document).toMatch(/^query \(\$first: Int\)/);
  });

  it('plans @defer as the same fetches as the query without it, and never sends @defer or @stream to a subgraph', () => {
    const deferred = describeFetches('{ topProducts { upc ... @defer(label: "more") { name reviews { body } } } }');
    const plain = describeFetches('{ topProducts { upc ... { name reviews { body } } } }');
    expect(deferred).toEqual(plain);
    expect(deferred.map((f) => f.document).join('\n')).not.toMatch(/@defer|@stream/);
    const streamed = describeFetches('{ topProducts(first: 2) @stream(initialCount: 1) { name } }');
    expect(streamed.map((f) => f.document).join('\n')).not.toMatch(/@stream/);
  });

  it.each([['a subscription', 'subscription { __typename }', /subscription/]])('leaves %s to stitching, saying why', (_, text, reason) => {
    const planner = workloadPlanner();
    expect(planner.planFor(parse(text), undefined)).toBeUndefined();
    expect(planner.whyUnplanned(parse(text), undefined)).toMatch(reason);
  });

  it('answers introspection from the API schema, with no subgraph call for it', () => {
    expect(describeFetches('{ __schema { queryType { name } } __type(name: "Product") { name } }')).toEqual([]);
    expect(describeFetches('{ __typename topProducts { name } }').map((f) => f.subgraph)).toEqual(['products']);
  });

  it('sends a field its own @skip/@include, with the variables they read, and fetches a fragment\'s fields', () => {
    const fetches = describeFetches('query Q($x: Boolean!, $y: Boolean!) { topProducts { name @include(if: $x) ... on Product @skip(if: $y) { price } } }');
    expect(fetches[0].document).toMatch(/^query \(\$x: Boolean!\)/);
    expect(fetches[0].document).toContain('name @include(if: $x)');
    expect(fetches[0].document).toMatch(/\n\s+price\n/);
  });

  it('plans a document once', () => {
    const planner = workloadPlanner();
    const document = parse('{ topProducts { name inStock } }');
    expect(planner.planFor(document, undefined)).toBe(planner.planFor(document, undefined));
  });
});

describe('running a plan', () => {
  /** Subgraphs answering from functions of the request; every request is recorded. */
  function fakeSubgraphs(answers: Record<string, (request: ExecutionRequest) => ExecutionResult>) {
    const calls: { subgraph: string; variables: Record<string, unknown> }[] = [];
    const executors = new Map<string, Executor>();
    for (const [graph, answer] of Object.entries(answers)) {
      executors.set(graph, (async (request: ExecutionRequest) => {
        calls.push({ subgraph: graph, variables: request.variables ?? {} });
        return answer(request);
      }) as Executor);
    }
    return { executors, calls };
  }

  const products = (request: ExecutionRequest): ExecutionResult =>
    print(request.document).includes('topProducts')
      ? { data: { topProducts: [{ upc: '1', name: 'A', __typename: 'Product' }, { upc: '2', name: 'B', __typename: 'Product' }, { upc: '1', name: 'A', __typename: 'Product' }] } }
      : { data: null };

  it('merges entity answers into every object that stands for the entity, asking once per entity', async () => {
    const { executors, calls } = fakeSubgraphs({
      PRODUCTS: products,
      INVENTORY: (request) => ({ data: { _entities: (request.variables!.representations as { upc: string }[]).map((r) => ({ inStock: r.upc === '1' })) } }),
    });
    const planner = workloadPlanner(executors);
    const document = parse('{ topProducts { name inStock } }');
    const result = (await planner.execute(planner.planFor(document, undefined)!, { schema: undefined as never, document, contextValue: {} })) as ExecutionResult;
    expect(result).toEqual({ data: { topProducts: [{ name: 'A', inStock: true }, { name: 'B', inStock: false }, { name: 'A', inStock: true }] } });
    expect(calls[1].variables.representations).toEqual([
      { __typename: 'Product', upc: '1' },
      { __typename: 'Product', upc: '2' },
    ]);
  });

  it('puts an entity error on the fields of that entity, at their client paths', async () => {
    const { executors } = fakeSubgraphs({
      PRODUCTS: products,
      INVENTORY: () => ({
        data: { _entities: [null, { inStock: false }] },
        errors: [{ message: 'stock unknown', path: ['_entities', 0], extensions: { code: 'SUBGRAPH_ERROR', subgraph: 'inventory' } }] as never,
      }),
    });
    const planner = workloadPlanner(executors);
    const document = parse('{ topProducts { name inStock } }');
    const result = (await planner.execute(planner.planFor(document, undefined)!, { schema: undefined as never, document, contextValue: {} })) as ExecutionResult;
    expect(result.data).toEqual({ topProducts: [{ name: 'A', inStock: null }, { name: 'B', inStock: false }, { name: 'A', inStock: null }] });
    expect(result.errors?.map((e) => [e.path, e.message, e.extensions.subgraph])).toEqual([
      [['topProducts', 0, 'inStock'], 'stock unknown', 'inventory'],
      [['topProducts', 2, 'inStock'], 'stock unknown', 'inventory'],
    ]);
  });
});
