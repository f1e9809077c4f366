import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { GraphHolder } from '../gateway/served-graph.js';
import type { PlanningExecutor } from '../gateway/execute/planning-executor.js';
import { Supergraph } from '../gateway/supergraph/supergraph.js';
import { createMetrics } from '../telemetry/metrics.js';
import { PolicyBook } from '../registry/policy-store.js';
import { useCostLimit } from './use-cost-limit.js';
import { useQueryPlans } from './use-query-plans.js';
import { useRequestState } from './use-request-state.js';

/**
 * A router in miniature whose "stitching" answers `stitched`, with a planner that runs every plan
 * with `execute` and plans what `planFor` says (default: everything); with the cost limit before
 * query plans when `costLimit` is set, as router.ts orders them.
 */
function miniRouter(execute: PlanningExecutor['execute'], options: { planFor?: PlanningExecutor['planFor']; costLimit?: boolean } = {}) {
  const schema = createSchema({ typeDefs: 'type Query { hello: String }', resolvers: { Query: { hello: () => 'stitched' } } });
  const planFor = options.planFor ?? (() => ({ fetches: [], denied: [], variableDefaults: {} }));
  const planner: PlanningExecutor = { planFor, whyUnplanned: () => undefined, warm: () => true, execute, completeEvent: () => Promise.reject(new Error('no subscriptions here')) };
  const graph = new GraphHolder();
  graph.swap({ schema, supergraph: Supergraph.fromSdl('type Query { hello: String }'), subgraphs: [], routes: new Map(), source: 'test', planner });
  const metrics = createMetrics({ processMetrics: false });
  const cost = options.costLimit ? [useCostLimit({ policies: new PolicyBook() })] : [];
  const yoga = createYoga({ schema: () => graph.current!.schema, plugins: [useRequestState(graph), ...cost, useQueryPlans({ metrics })], logging: false });
  const query = async () => (await yoga.fetch('http://router.test/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ hello }"}' })).json();
  const count = async (path: string) => (await metrics.executions.get()).values.find((v) => v.labels.path === path)?.value ?? 0;
  return { query, count };
}

describe('useQueryPlans', () => {
  it('answers from the plan when there is one', async () => {
    const router = miniRouter(async () => ({ data: { hello: 'planned' } }));
    expect(await router.query()).toEqual({ data: { hello: 'planned' } });
    expect(await router.count('plan')).toBe(1);
  });

  it('fails the request with a masked error when the plan runner fails, never running it a second time by stitching', async () => {
    const router = miniRouter(async () => {
      throw new TypeError('a bug in the plan runner');
    });
    const body = (await router.query()) as { data?: unknown; errors?: { message: string }[] };
    expect(body.data ?? null).toBeNull();
    expect(JSON.stringify(body)).not.toContain('stitched');
    expect(JSON.stringify(body)).not.toContain('a bug in the plan runner');
    expect(body.errors).toHaveLength(1);
    expect(await router.count('plan_error')).toBe(1);
  });

  it('finds the plan alone, with the cost limit off', async () => {
    const router = miniRouter(async () => ({ data: { hello: 'planned' } }));
    expect(await router.query()).toEqual({ data: { hello: 'planned' } });
  });

  it('looks a request\'s plan up once with the cost limit on: the plan it is charged for is the plan it runs', async () => {
    // A planner whose answer changes from one look-up to the next, as a `percent(N)` progressive
    // override drawn per look-up does: here no plan first, then one.
    let lookups = 0;
    const planFor = () => (++lookups % 2 === 0 ? { fetches: [], denied: [], variableDefaults: {} } : undefined);
    const router = miniRouter(async () => ({ data: { hello: 'planned' } }), { planFor, costLimit: true });
    expect(await router.query()).toEqual({ data: { hello: 'stitched' } });
    expect(lookups).toBe(1);
    expect(await router.count('stitching')).toBe(1);
    expect(await router.count('plan')).toBe(0);
  });
});
