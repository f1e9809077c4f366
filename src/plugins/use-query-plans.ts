// Runs the operations that have a plan by their plan; what plans do not model goes on to stitching, chosen once per document.
import type { Plugin } from 'graphql-yoga';
import { planOfRequest } from '../gateway/plan/request-plan.js';
import { requestStateOf } from '../request/request-state.js';
import type { Logger } from '../telemetry/logger.js';
import type { RouterMetrics } from '../telemetry/metrics.js';

export interface QueryPlansOptions {
  metrics?: RouterMetrics;
  logger?: Logger;
}

/**
 * Replaces the execute function for an operation when the graph the request started on has a plan
 * for it. The engine is chosen here, once per document: stitching runs what plans do not model
 * (subscriptions), never as
 * a second attempt at a planned operation. A failure of the plan runner itself is a bug (subgraph
 * failures become field errors): it fails the request with a masked error, is counted
 * (`executions_total{path="plan_error"}`) and logged; re-running it could run a mutation twice.
 */
export function useQueryPlans(options: QueryPlansOptions): Plugin {
  const { metrics, logger } = options;
  return {
    onExecute({ args, setExecuteFn }) {
      // The graph the request started on (its schema is args.schema), whatever swap happened since.
      const state = requestStateOf(args.contextValue);
      const planner = state.graph.planner;
      // Looked up once per request: use-cost-limit may have asked already (same graph, document and decision).
      const plan = planOfRequest(state, args);
      if (!plan) {
        metrics?.executions.inc({ path: 'stitching' });
        return;
      }
      metrics?.executions.inc({ path: 'plan' });
      setExecuteFn(function executeByPlan(executeArgs) {
        return planner!.execute(plan, executeArgs).catch((error: unknown) => {
          metrics?.executions.inc({ path: 'plan_error' });
          logger?.error({ err: error, operation: executeArgs.operationName }, 'query plan failed');
          throw error;
        });
      });
    },
  };
}
