// The plan one request runs: looked up once per request, by whichever plugin asks first.
import type { DocumentNode, GraphQLSchema } from 'graphql';
import type { RequestState } from '../../request/request-state.js';
import type { QueryPlan } from './plan-types.js';

/** What of a request's execution arguments the look-up reads. */
export interface PlannedExecution {
  schema: GraphQLSchema;
  document: DocumentNode;
  operationName?: string | null;
}

/**
 * The query plan a request runs, or undefined when it runs by stitching (the graph has no planner,
 * the request's schema is not its graph's, or the planner does not model the operation). Looked up
 * once, after authorization decided (a plan is per decision), and kept on the request state: the
 * cost limit charges subgraphs by the plan that really runs, and a progressive override's
 * `percent(N)` label is drawn once per request, whichever plugin asks first or alone.
 */
export function planOfRequest(state: RequestState, args: PlannedExecution): QueryPlan | undefined {
  if (state.plan !== undefined) return state.plan ?? undefined;
  const { graph } = state;
  const plan = graph.planner && graph.schema === args.schema ? graph.planner.planFor(args.document, args.operationName, state.decision?.denied) : undefined;
  state.plan = plan ?? null;
  return plan;
}
