// Rules 1 and 13 of build-plan.ts: the operation's root fields, each in the root fetch of the subgraph that serves it cheapest (a mutation's one after another, a subscription's one field in its one root fetch).
import type { FieldNode, GraphQLObjectType, SelectionSetNode } from 'graphql';
import type { FieldGroups, OperationAnalysis } from '../../request/operation-analysis.js';
import { planCost } from './batch-fetches.js';
import { collectFields } from './collect-fields.js';
import { coverage } from './field-sources.js';
import { FieldPlacer } from './place-fields.js';
import type { FetchOperation, PlanStep, Scope } from './plan-types.js';
import { rootPosition } from './positions.js';
import { isCondition } from './selection-tree.js';
import { PlanUnsatisfiable, PlanUnsupported } from './supergraph-model.js';

/** Fields the router answers from the API schema without a subgraph (GraphQL spec 4.1, 4.2). */
const INTROSPECTION_ROOTS = new Set(['__typename', '__schema', '__type']);

const NO_ROOTS: ReadonlyMap<string, PlanStep> = new Map();

/**
 * 1. Plans the operation's root fields: a query's grouped by subgraph, a mutation's one after
 *    another, a subscription's one field in the one root fetch its events come from (13).
 */
export function planRoot(placer: FieldPlacer, rootType: GraphQLObjectType, selectionSet: SelectionSetNode, operation: FetchOperation): void {
  placer.keys.recordClientKeys(rootType, selectionSet);
  const serial = operation === 'mutation';
  const fields = collectFields(placer.schema, placer.analysis, rootType, [selectionSet]);
  if (operation === 'subscription') checkSubscriptionRoot(placer.analysis, fields);
  // Every subgraph starts at the root.
  const scope: Scope = { graphs: new Set(placer.model.subgraphName.keys()) };
  const planned: { key: string; nodes: readonly FieldNode[]; graphs: string[] }[] = [];
  for (const [key, nodes] of fields) {
    const name = nodes[0].name.value;
    if (INTROSPECTION_ROOTS.has(name)) continue;
    if (name.startsWith('__')) throw new PlanUnsupported(`the meta field ${name}`);
    // 9. A denied root field makes no fetch at all (an empty one would be no document).
    if (placer.deny(rootType, name, key, [])) continue;
    const graphs = placer.model.resolversOf(rootType.name, name, placer.labels);
    if (graphs.length === 0) throw new PlanUnsupported(`no subgraph resolves ${rootType.name}.${name}`);
    planned.push({ key, nodes, graphs });
  }
  const choices = new Map(planned.map((field) => [field, rootChoices(placer, rootType, selectionSet, field, scope, operation)]));
  if (operation === 'subscription') {
    // 13. The one root field (checkSubscriptionRoot; none when it is denied, 9) in the one root
    // fetch, of the subgraph chosen as for a query; everything else of the selection hangs off it.
    for (const field of planned) {
      const step = placer.steps.rootStep(cheapest(choices.get(field)!, NO_ROOTS).graph);
      placer.steps.rootOperations.set(step, 'subscription');
      placer.planObjectFields(rootType, new Map([[field.key, field.nodes]]), rootPosition(step, scope), new Set());
    }
    return;
  }
  if (serial) {
    let previous: PlanStep[] = [];
    for (const field of planned) {
      const first = placer.steps.all.length;
      const step = placer.steps.newStep(cheapest(choices.get(field)!, NO_ROOTS).graph, [], undefined);
      placer.steps.rootOperations.set(step, 'mutation');
      for (const before of previous) step.dependsOn.add(before);
      placer.planObjectFields(rootType, new Map([[field.key, field.nodes]]), rootPosition(step, scope), new Set());
      // 1. The next mutation field waits for everything this one needs, its entity steps included.
      previous = placer.steps.all.slice(first);
    }
    return;
  }
  // 1. Fields with the fewest cheapest subgraphs are placed first: the root fetches they need are
  // then there for the fields that any of several subgraphs would serve as cheaply.
  const ties = (field: (typeof planned)[number]): number => {
    const costs = choices.get(field)!;
    return costs.filter((cost) => !costs.some((other) => cheaper(other, cost))).length;
  };
  for (const field of [...planned].sort((a, b) => ties(a) - ties(b))) {
    const graph = cheapest(choices.get(field)!, placer.steps.roots).graph;
    placer.planObjectFields(rootType, new Map([[field.key, field.nodes]]), rootPosition(placer.steps.rootStep(graph), scope), new Set());
  }
}

/**
 * 13. A subscription selects exactly one root field, not an introspection one (GraphQL spec
 *     5.2.3.1, Single Root Field, which graphql-js's SingleFieldSubscriptionsRule checks before
 *     planning), and which one must not depend on variables: the spec's draft (5.2.4.1,
 *     CollectSubscriptionFields) and graphql-js 17 forbid `@skip`/`@include` in its top-level
 *     selection, and graphql-js 16 throws validating one that reads a variable, as a subgraph
 *     receiving it would. What breaks this is left to stitching, whose validation reports it.
 */
function checkSubscriptionRoot(analysis: OperationAnalysis, fields: FieldGroups): void {
  if (fields.size !== 1) throw new PlanUnsupported(`a subscription selects exactly one root field, not ${fields.size}`);
  const [nodes] = fields.values();
  const name = nodes[0].name.value;
  if (name.startsWith('__')) throw new PlanUnsupported(`a subscription's root field may not be the meta field ${name}`);
  const conditional = nodes.some((node) => analysis.guardsOf(node).some((guards) => guards.some((list) => list.some(isCondition))));
  if (conditional) throw new PlanUnsupported(`a subscription's root field ${name} may not be under @skip or @include`);
}

/**
 * 1. What serving a root field from each subgraph that resolves it costs: each is tried alone (its
 *    ways to what it leaves included, 12). One from which part of the selection has no source at
 *    all is never chosen; when that holds for each, the operation is unsatisfiable.
 */
function rootChoices(placer: FieldPlacer, rootType: GraphQLObjectType, selectionSet: SelectionSetNode, field: RootField, scope: Scope, operation: FetchOperation): RootCost[] {
  const { key, nodes, graphs } = field;
  if (graphs.length === 1) return [{ graph: graphs[0], sequential: 0, calls: 0, covered: 0, lookups: 0 }];
  const costs: RootCost[] = [];
  let failure: PlanUnsupported | undefined;
  for (const graph of graphs) {
    const trial = new FieldPlacer({ ...placer.facts, rootLookups: operation === 'query' });
    trial.keys.recordClientKeys(rootType, selectionSet);
    const step = operation === 'mutation' ? trial.steps.newStep(graph, [], undefined) : trial.steps.rootStep(graph);
    try {
      trial.planObjectFields(rootType, new Map([[key, nodes]]), rootPosition(step, scope), new Set());
    } catch (error) {
      if (!(error instanceof PlanUnsupported)) throw error;
      // What the planner does not model outweighs a missing source: stitching may still answer it.
      if (!failure || (failure instanceof PlanUnsatisfiable && !(error instanceof PlanUnsatisfiable))) failure = error;
      continue;
    }
    const cost = planCost(trial.steps.all);
    costs.push({ graph, sequential: cost.sequential, calls: cost.calls, covered: coverage(placer, rootType, nodes[0].name.value, nodes, graph).covered, lookups: trial.steps.all.length });
  }
  if (costs.length === 0) throw failure!;
  return costs;
}

/** A root field and the subgraphs that resolve it (1). */
interface RootField {
  readonly key: string;
  readonly nodes: readonly FieldNode[];
  readonly graphs: readonly string[];
}

/** What serving a root field from one subgraph costs (1). */
interface RootCost {
  graph: string;
  /** Requests one after another: the last stage plus one (stages.ts). */
  sequential: number;
  /** Requests. */
  calls: number;
  /** How much of the selection below the field the subgraph resolves by itself (coverage). */
  covered: number;
  /** Steps: the root one and each entity look-up, however they are batched. */
  lookups: number;
}

function cheaper(a: RootCost, b: RootCost): boolean {
  if (a.sequential !== b.sequential) return a.sequential < b.sequential;
  if (a.calls !== b.calls) return a.calls < b.calls;
  if (a.covered !== b.covered) return a.covered > b.covered;
  return a.lookups < b.lookups;
}

/**
 * 1. The cheapest choice: the fewest requests one after another, then the fewest requests (a
 *    subgraph already serving a root field saves its root request), then the one that resolves
 *    most of the selection below the field by itself (as chooseWay ranks ways, 12), then the
 *    fewest look-ups (batched in those requests); supergraph order breaks ties.
 */
function cheapest(choices: readonly RootCost[], roots: ReadonlyMap<string, PlanStep>): RootCost {
  let best: RootCost | undefined;
  for (const choice of choices) {
    const cost = roots.has(choice.graph) ? { ...choice, calls: choice.calls - 1 } : choice;
    if (!best || cheaper(cost, best)) best = cost;
  }
  return best!;
}
