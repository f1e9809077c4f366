// Warm plans on publish (decision 009): a router plans the most used operations on a new graph before swapping it in.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { mostUsedOperations } from '../../src/registry/operation-log.js';
import { nextSwap, readMetric, startStack, type Stack } from '../helpers/stack.js';
import { eventually, postGraphQL } from '../helpers/http.js';
import type { RunningRouter } from '../../src/cli/start-router.js';
import { databaseKind } from '../helpers/database.js';

const PRODUCT_PAGE = 'query ProductPage($id: ID!) { product(id: $id) { name reviews { body rating } } }';
// Another text of the same document: a document object yoga's parse cache has never seen.
const PRODUCT_PAGE_REFORMATTED = `# sent by another build of the app
query ProductPage($id: ID!) {
  product(id: $id) { name, reviews { body, rating } }
}`;
const CATALOGUE = '{ products(first: 2) { name } }';
const NEVER_RECORDED = 'query Names { products(first: 1) { name } }';

const planned = (router: RunningRouter) => readMetric(router, 'switchyard_plans_total', { outcome: 'planned' });
const byPlan = (router: RunningRouter) => readMetric(router, 'switchyard_executions_total', { path: 'plan' });

describe(`warm plans on publish (${databaseKind} database)`, () => {
  let stack: Stack;
  let cold: RunningRouter;

  beforeAll(async () => {
    stack = await startStack();
    // A second router on the same registry with warming off, to show what a publish costs without it.
    cold = await stack.startRouter({ warmOperations: 0 });
    for (let i = 0; i < 3; i += 1) expect((await stack.query(PRODUCT_PAGE, { variables: { id: '1' }, headers: { 'graphql-client-name': 'web' } })).body.errors).toBeUndefined();
    expect((await stack.query(CATALOGUE, { headers: { 'graphql-client-name': 'ios' } })).body.errors).toBeUndefined();
    await eventually(async () => (await mostUsedOperations(stack.db, { since: new Date(Date.now() - 60_000), limit: 10 })).length === 2, { what: 'the operations to be recorded' });
  }, 60_000);

  afterAll(async () => {
    await stack?.close();
  });

  it('plans the recorded operations when a publish swaps the graph in, so their first request after it plans nothing', async () => {
    const before = await planned(stack.router);
    const coldBefore = await planned(cold);
    const coldSwapped = nextSwap(cold);
    await stack.publishRoute('reviews', { timeoutMs: 4_000 });
    await coldSwapped;
    // Both recorded operations were planned on the new graph before it served a request.
    expect(await planned(stack.router)).toBe(before + 2);
    expect(await planned(cold)).toBe(coldBefore);

    const atSwap = await planned(stack.router);
    const executedByPlan = await byPlan(stack.router);
    for (const query of [PRODUCT_PAGE, PRODUCT_PAGE_REFORMATTED]) {
      const { body } = await stack.query(query, { variables: { id: '1' }, operationName: 'ProductPage' });
      expect(body.errors).toBeUndefined();
      expect(body.data.product.name).toBeTruthy();
    }
    expect((await stack.query(CATALOGUE)).body.errors).toBeUndefined();
    // Three requests ran by plan, and not one of them had to plan.
    expect(await byPlan(stack.router)).toBe(executedByPlan + 3);
    expect(await planned(stack.router)).toBe(atSwap);

    // An operation nobody recorded is planned by its first request, as before.
    expect((await stack.query(NEVER_RECORDED)).body.errors).toBeUndefined();
    expect(await planned(stack.router)).toBe(atSwap + 1);

    // Without warming, the first request of each operation after the publish plans it.
    expect((await postGraphQL(cold.url, PRODUCT_PAGE, { variables: { id: '1' } })).body.errors).toBeUndefined();
    expect(await planned(cold)).toBe(coldBefore + 1);
  }, 60_000);

  it('turns off with SWITCHYARD_WARM_OPERATIONS=0 and refuses a negative count', async () => {
    expect(loadConfig({}, { SWITCHYARD_WARM_OPERATIONS: '0' }).warmOperations).toBe(0);
    expect(loadConfig({}, {}).warmOperations).toBe(500);
    expect(() => loadConfig({}, { SWITCHYARD_WARM_OPERATIONS: '-1' })).toThrow(/warmOperations \(SWITCHYARD_WARM_OPERATIONS\)/);
  });
});
