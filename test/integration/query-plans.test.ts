// Query plans answer exactly what stitching answers, healthy or failing, and stitching keeps what plans do not model.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_FAULT_SETTINGS, type DemoSubgraphName } from '../../subgraphs/index.js';
import type { RunningRouter } from '../../src/cli/start-router.js';
import { databaseKind } from '../helpers/database.js';
import { postGraphQL } from '../helpers/http.js';
import { readMetric, startStack, type Stack } from '../helpers/stack.js';

const QUERIES: { name: string; query: string; variables?: Record<string, unknown> }[] = [
  {
    name: 'the product page',
    query: 'query ProductPage($id: ID!) { product(id: $id) { id name price reviews { id rating body author } inventory { inStock warehouse } } }',
    variables: { id: '7' },
  },
  { name: 'a list with entity sections', query: '{ products(first: 4) { id name inventory { inStock } reviews { rating } } }' },
  { name: 'aliases and fragments', query: 'query Two { a: product(id: "1") { ...P } b: product(id: "2") { label: name ...P } } fragment P on Product { id price stock: inventory { inStock } }' },
  { name: 'an entity reached from another subgraph', query: '{ review(id: "r-1") { id rating product { id name price inventory { inStock } } } }' },
  { name: 'an unknown id', query: '{ product(id: "nope") { id name reviews { id } } }' },
  {
    name: '@skip and @include',
    query:
      'query Maybe($more: Boolean!, $less: Boolean!) { product(id: "5") { id reviews @include(if: $more) { id } ... on Product @skip(if: $less) { inventory { inStock } } price @skip(if: $more) } }',
    variables: { more: false, less: true },
  },
  {
    name: 'conditions that keep everything',
    query: 'query Maybe($more: Boolean!) { product(id: "5") { id reviews @include(if: $more) { id rating } inventory @include(if: $more) { inStock } } }',
    variables: { more: true },
  },
  { name: 'type names', query: '{ __typename product(id: "3") { __typename id inventory { __typename inStock } } }' },
];

const FAULTS: { name: string; subgraph?: DemoSubgraphName; mode?: 'down' | 'error' }[] = [
  { name: 'healthy' },
  { name: 'reviews down', subgraph: 'reviews', mode: 'down' },
  { name: 'inventory failing', subgraph: 'inventory', mode: 'error' },
  { name: 'product down', subgraph: 'product', mode: 'down' },
];

/** What a client reads of an answer: status, completeness, data, and the errors by path (their order is not part of the contract). */
function comparable(status: number, body: { data?: unknown; errors?: { path?: unknown; locations?: unknown }[]; extensions?: Record<string, unknown> }) {
  const errors = (body.errors ?? []).map(({ locations: _locations, ...error }) => error).sort((a, b) => JSON.stringify(a.path).localeCompare(JSON.stringify(b.path)));
  const completeness = body.extensions?.completeness as { missing: { path?: unknown }[] } | undefined;
  const missing = completeness?.missing.slice().sort((a, b) => JSON.stringify(a.path).localeCompare(JSON.stringify(b.path)));
  return { status, data: body.data, errors, completeness: completeness && { ...completeness, missing } };
}

describe(`query plans (${databaseKind} database)`, () => {
  let stack: Stack;
  let stitching: RunningRouter;
  beforeAll(async () => {
    stack = await startStack();
    stitching = await stack.startRouter({ queryPlans: false });
  });
  afterAll(async () => {
    await stack?.close();
  });
  afterEach(() => {
    for (const { subgraph } of Object.values(stack.subgraphs)) subgraph.faults.set(DEFAULT_FAULT_SETTINGS);
  });

  describe.each(FAULTS)('$name', (fault) => {
    it.each(QUERIES)('answers $name as stitching does', async ({ name, query, variables }) => {
      if (fault.subgraph) stack.subgraphs[fault.subgraph].subgraph.faults.set({ mode: fault.mode });
      const accept = 'application/graphql-response+json';
      const planned = await stack.query(query, { variables, headers: { accept } });
      const stitched = await postGraphQL(stitching.url, query, { variables, headers: { accept } });
      expect(comparable(planned.status, planned.body)).toEqual(comparable(stitched.status, stitched.body));
      // The page touches every subgraph: under a fault it must be the partial answer both paths agree on.
      if (fault.subgraph && name === 'the product page') expect(planned.body.errors?.length ?? 0).toBeGreaterThan(0);
    });
  });

  it('runs the product page from its plan, one call per subgraph', async () => {
    const before = await readMetric(stack.router, 'switchyard_executions_total', { path: 'plan' });
    const calls = async (name: string) => readMetric(stack.router, 'switchyard_subgraph_requests_total', { subgraph: name, outcome: 'ok' });
    const counts = await Promise.all(['product', 'reviews', 'inventory'].map(calls));
    const { body } = await stack.query('{ products(first: 5) { id reviews { id } inventory { inStock } } }');
    expect(body.errors).toBeUndefined();
    expect(body.data.products).toHaveLength(5);
    expect(await readMetric(stack.router, 'switchyard_executions_total', { path: 'plan' })).toBe(before + 1);
    const after = await Promise.all(['product', 'reviews', 'inventory'].map(calls));
    expect(after.map((n, i) => n - counts[i])).toEqual([1, 1, 1]);
  });

  it('skips the subgraph call of a section that @include leaves out', async () => {
    const reviewsCalls = () => readMetric(stack.router, 'switchyard_subgraph_requests_total', { subgraph: 'reviews', outcome: 'ok' });
    const before = await reviewsCalls();
    const plans = await readMetric(stack.router, 'switchyard_executions_total', { path: 'plan' });
    const { body } = await stack.query('query Maybe($more: Boolean!) { product(id: "1") { id reviews @include(if: $more) { id } } }', { variables: { more: false } });
    expect(body.errors).toBeUndefined();
    expect(body.data.product).toEqual({ id: '1' });
    expect(await readMetric(stack.router, 'switchyard_executions_total', { path: 'plan' })).toBe(plans + 1);
    expect(await reviewsCalls()).toBe(before);
  });

  it('never needed stitching to rescue a plan in any of the comparisons', async () => {
    expect(await readMetric(stack.router, 'switchyard_executions_total', { path: 'plan_error' })).toBe(0);
  });

  it('runs mutations from their plan: fields one after another, each with its entity sections', async () => {
    const before = await Promise.all(['plan', 'stitching'].map((path) => readMetric(stack.router, 'switchyard_executions_total', { path })));
    const added = await stack.query(
      'mutation { first: addReview(productId: "1", rating: 5, body: "planned") { id rating product { id name } } second: addReview(productId: "1", rating: 4, body: "after it") { id product { name reviews { body } } } }',
    );
    expect(added.body.errors).toBeUndefined();
    expect(added.body.data.first).toMatchObject({ rating: 5, product: { id: '1', name: expect.any(String) } });
    // The second field ran after the first had finished: its product already lists the first review.
    const bodies = added.body.data.second.product.reviews.map((r: { body: string }) => r.body);
    expect(bodies).toEqual(expect.arrayContaining(['planned', 'after it']));
    expect(added.body.data.second.id).not.toBe(added.body.data.first.id);
    const after = await Promise.all(['plan', 'stitching'].map((path) => readMetric(stack.router, 'switchyard_executions_total', { path })));
    expect(after).toEqual([before[0] + 1, before[1]]);
  });
});
