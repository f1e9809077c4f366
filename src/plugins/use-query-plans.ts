// Runs the queries that have a plan by their plan; everything else goes on to stitching.
import type { Plugin } from 'graphql-yoga';
import type { GraphHolder } from '../gateway/served-graph.js';
import { DECISION } from '../security/authorization.js';
import type { Logger } from '../telemetry/logger.js';
import type { RouterMetrics } from '../telemetry/metrics.js';

export interface QueryPlansOptions {
  graph: GraphHolder;
  metrics?: RouterMetrics;
  logger?: Logger;
}

/**
 * Replaces the execute function for an operation when the graph the request started on has a plan
 * for it. Stitching keeps what plans do not model: mutations, subscriptions, introspection, interface objects, progressive overrides, and requests whose authorization
 * decision denies fields (the guards on the stitched schema null them and prune their fetches).
 */
export function useQueryPlans(options: QueryPlansOptions): Plugin {
  const { graph, metrics, logger } = options;
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
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
        // A failure of the plan runner itself is a bug, never a subgraph's doing (those become field
        // errors): the request is run again by stitching rather than lost, and the bug is counted and logged.
        return planner!.execute(plan, executeArgs).catch((error: unknown) => {
          metrics?.executions.inc({ path: 'plan_error' });
          logger?.error({ err: error, operation: executeArgs.operationName }, 'query plan failed; running the operation by stitching');
          return executeFn(executeArgs);
        });
      });
    },
  };
}
