// Query cost: estimated once per document before any subgraph call, refused over the policy limit, measured after.
import type { DocumentNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { alsoOnSubscribe } from './subscribe-hooks.js';
import { BoundedMap } from '../cache/bounded-map.js';
import { requestError } from '../errors/client-error.js';
import type { QueryPlan } from '../gateway/plan/plan-types.js';
import { planOfRequest } from '../gateway/plan/request-plan.js';
import type { ServedGraph } from '../gateway/served-graph.js';
import type { PolicyBook } from '../registry/policy-store.js';
import { requestStateOf } from '../request/request-state.js';
import type { RouterMetrics } from '../telemetry/metrics.js';
import { actualTotalCost } from './cost/actual-cost.js';
import { estimateCost, type CostEstimate } from './cost/estimate-cost.js';
import { PlanPlacement } from './cost/plan-placement.js';

export interface CostLimitOptions {
  policies: PolicyBook;
  metrics?: RouterMetrics;
}

/**
 * Estimates kept per document object (least recently used dropped first): the parse cache hands the
 * same document to repeated queries, which differ only in the variables costing reads (page sizes);
 * one dropped only costs an estimate again.
 */
const PER_DOCUMENT_VARIANTS = 64;

/**
 * The estimates of one document, keyed by the values of the variables costing has read so far
 * (slicing arguments such as `first`; not `id`, so a product page costs once whatever the id). When a
 * costing reads a variable outside that list (another branch), the list grows and the memo restarts:
 * an estimate is only ever reused for requests equal in every variable that could change it.
 */
interface DocumentMemo {
  relevant: string[];
  variants: BoundedMap<string, CostEstimate>;
}

/**
 * 1. Cost metadata (`@cost`, `@listSize`, owning subgraphs) comes from the served graph's supergraph
 *    (the one the request started on), which reads it once.
 * 2. The estimate is memoised per document object and per value of the variables it depends on
 *    (slicing arguments come from them; see DocumentMemo); a new graph starts a new memo, since the
 *    document cache is per schema too.
 * 3. Over the operation's `cost_limit`: 400 COST_LIMIT_EXCEEDED with `extensions.cost = { estimated, limit }`,
 *    before any subgraph call, and before the operation is planned (the total does not need the plan).
 * The estimate joins the request state (`cost`), where the rate limiter after this plugin reads it.
 * 4. A subgraph whose share of the estimate exceeds its route's `costBudget` is skipped: its sections
 *    come back null with SUBGRAPH_COST_EXCEEDED, the rest of the page is served. The shares follow the
 *    operation's query plan when it has one (`planOfRequest`: looked up once per request): a field
 *    is charged to the subgraph whose fetch selects it, so a budget never skips a subgraph for fields
 *    another serves (`@provides`); the estimate is then memoised per plan.
 * 5. After execution, the actual cost (from real list sizes) is measured; both go to
 *    `switchyard_operation_cost{kind}` so ops can tune limits from data.
 */
export function useCostLimit(options: CostLimitOptions): Plugin {
  const { policies, metrics } = options;
  /** Estimates by document, or by plan when the operation has one (its split follows the plan). */
  const memoByGraph = new WeakMap<ServedGraph, WeakMap<DocumentNode | QueryPlan, DocumentMemo>>();
  const placements = new WeakMap<QueryPlan, PlanPlacement>();

  function placementOf(plan: QueryPlan): PlanPlacement {
    let placement = placements.get(plan);
    if (!placement) placements.set(plan, (placement = new PlanPlacement(plan)));
    return placement;
  }

  function estimate(served: ServedGraph, document: DocumentNode, operationName: string | undefined, variables: Record<string, unknown> | undefined, plan: QueryPlan | undefined): CostEstimate {
    let memo = memoByGraph.get(served);
    if (!memo) memoByGraph.set(served, (memo = new WeakMap()));
    // A plan is made per document (and decision), so it keys its document's estimates as well.
    const owner = plan ?? document;
    let entry = memo.get(owner);
    if (!entry) memo.set(owner, (entry = { relevant: [], variants: new BoundedMap(PER_DOCUMENT_VARIANTS) }));
    const keyOf = (names: readonly string[]) => `${operationName ?? ''}|${names.length ? JSON.stringify(names.map((name) => variables?.[name])) : ''}`;
    let key = keyOf(entry.relevant);
    let result = entry.variants.get(key);
    if (!result) {
      const read = new Set<string>();
      result = estimateCost(served.schema, served.supergraph.cost, document, { operationName, variables, variablesRead: read, placement: plan && placementOf(plan) });
      const added = [...read].filter((name) => !entry.relevant.includes(name));
      if (added.length > 0) {
        // A variable no cached estimate depended on: the old keys no longer say enough.
        entry.relevant = [...entry.relevant, ...added].sort();
        entry.variants.clear();
        key = keyOf(entry.relevant);
      }
      entry.variants.set(key, result);
    }
    return result;
  }

  return alsoOnSubscribe({
    onExecute({ args, setResultAndStopExecution }) {
      const state = requestStateOf(args.contextValue);
      const operation = state.operation;
      if (!operation) return;
      const served = state.graph;
      const name = state.operationName;
      const variables = (args.variableValues ?? undefined) as Record<string, unknown> | undefined;
      // The total does not depend on the plan: an operation over its limit is refused before it is
      // planned (a client sending costly documents must not make the router plan each of them).
      const unplanned = estimate(served, args.document, args.operationName ?? undefined, variables, undefined);
      const limit = policies.resolve(name).costLimit;
      if (limit !== undefined && unplanned.total > limit) {
        state.cost = unplanned;
        metrics?.costRejected.inc({ operation: metrics.operationLabel(name) });
        setResultAndStopExecution({
          errors: [
            requestError('COST_LIMIT_EXCEEDED', `The estimated cost of this operation (${unplanned.total}) exceeds its limit (${limit}). Ask for fewer items or fields.`, {
              extensions: { cost: { estimated: unplanned.total, limit } },
            }),
          ],
        });
        return;
      }
      // The plan the request runs (looked up once per request, after authorization decided): the
      // split follows the fetches that will really run.
      const plan = planOfRequest(state, args);
      const cost = plan ? estimate(served, args.document, args.operationName ?? undefined, variables, plan) : unplanned;
      state.cost = cost;
      for (const [subgraph, share] of Object.entries(cost.bySubgraph)) {
        const budget = served.routes.get(subgraph)?.costBudget;
        if (budget !== undefined && share > budget) {
          state.skip(subgraph, {
            code: 'SUBGRAPH_COST_EXCEEDED',
            message: `Skipped: the estimated cost of the "${subgraph}" sections (${share}) exceeds that subgraph's budget (${budget}).`,
          });
        }
      }
      if (operation.operation === 'subscription') return;
      return {
        onExecuteDone({ result }) {
          if (!metrics || !('data' in result)) return;
          metrics.operationCost.observe({ kind: 'estimated' }, cost.total);
          if (result.data) {
            metrics.operationCost.observe({ kind: 'actual' }, actualTotalCost(served.schema, served.supergraph.cost, args.document, result.data as Record<string, unknown>, { operationName: args.operationName ?? undefined, variables }));
          }
        },
      };
    },
  });
}
