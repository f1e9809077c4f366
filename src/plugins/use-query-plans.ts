// Runs the queries that have a plan by their plan; everything else goes on to stitching.
import type { Plugin } from 'graphql-yoga';
import type { GraphHolder } from '../gateway/served-graph.js';
import { DECISION } from '../security/authorization.js';
import type { RouterMetrics } from '../telemetry/metrics.js';

export interface QueryPlansOptions {
  graph: GraphHolder;
  metrics?: RouterMetrics;
}

/**
 * Replaces the execute function for an operation when the graph the request started on has a plan
 * for it. Stitching keeps what plans do not model: mutations, subscriptions, introspection, interface objects, progressive overrides, and requests whose authorization
 * decision denies fields (the guards on the stitched schema null them and prune their fetches).
 */
export function useQueryPlans(options: QueryPlansOptions): Plugin {
  const { graph, metrics } = options;
  return {
    onExecute({ args, setExecuteFn }) {
      const served = graph.current;
      const planner = served?.planner;
      // A request that started on an older graph keeps it, and its stitched schema.
      const plan = planner && served.schema === args.schema && !(args.contextValue as unknown as Record<symbol, unknown>)[DECISION] ? planner.planFor(args.document, args.operationName) : undefined;
      if (!plan) {
        metrics?.executions.inc({ path: 'stitching' });
        return;
      }
      metrics?.executions.inc({ path: 'plan' });
      setExecuteFn(function executeByPlan(executeArgs) {
        return planner!.execute(plan, executeArgs);
      });
    },
  };
}
