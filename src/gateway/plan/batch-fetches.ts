// Ordering and batching: plan steps in an order that follows their dependencies, grouped into one request per subgraph and moment (6).
import type { DirectiveNode, VariableDefinitionNode } from 'graphql';
import { lastStage } from './stages.js';
import { emitFetch } from './emit-documents.js';
import type { Fetch, FetchOperation, FetchStep, PlanStep } from './plan-types.js';
import { PlanUnsupported } from './supergraph-model.js';

/** Orders steps so each follows its dependencies; a cycle cannot be executed in any order. */
function topologicalOrder(steps: readonly PlanStep[]): PlanStep[] {
  const ordered: PlanStep[] = [];
  const state = new Map<PlanStep, 'visiting' | 'done'>();
  const visit = (step: PlanStep): void => {
    const seen = state.get(step);
    if (seen === 'done') return;
    if (seen === 'visiting') throw new PlanUnsupported('steps depend on each other in a cycle');
    state.set(step, 'visiting');
    for (const dependency of step.dependsOn) visit(dependency);
    state.set(step, 'done');
    ordered.push(step);
  };
  for (const step of steps) visit(step);
  return ordered;
}

/** Steps that go in one request, and the groups (by index, all made before it) whose answers it waits for. */
interface StepGroup {
  steps: PlanStep[];
  dependsOn: number[];
}

/**
 * 6. Entity steps of one subgraph that wait for the same steps are ready at the same moment: they
 *    go in one request, one aliased `_entities` field each (as stitching's batching does per tick).
 *    Groups come in the order they are made, so a group's index is its fetch's id, and a group
 *    waits only for groups made before it.
 */
function groupSteps(planned: readonly PlanStep[]): StepGroup[] {
  // Steps come dependencies first, so the groups a step waits for are known when it is placed.
  const steps = topologicalOrder(planned);
  const groups: StepGroup[] = [];
  const byKey = new Map<string, number>();
  const groupOf = new Map<PlanStep, number>();
  for (const step of steps) {
    const dependsOn = [...new Set([...step.dependsOn].map((d) => groupOf.get(d)!))].sort((a, b) => a - b);
    const key = step.entityType === undefined ? `root\u0000${step.id}` : `${step.graph}\u0000${dependsOn.join(',')}`;
    let index = byKey.get(key);
    if (index === undefined) {
      index = groups.push({ steps: [], dependsOn }) - 1;
      byKey.set(key, index);
    }
    groups[index]!.steps.push(step);
    groupOf.set(step, index);
  }
  return groups;
}

/** What a plan's steps cost as requests: how many run one after another at most, and how many there are. */
export function planCost(planned: readonly PlanStep[]): { sequential: number; calls: number } {
  const groups = groupSteps(planned);
  // Stages (stages.ts) count from 0: as many requests one after another as the last stage plus one.
  const sequential = groups.length === 0 ? 0 : lastStage(groups, (group) => group.dependsOn.map((d) => groups[d]!)) + 1;
  return { sequential, calls: groups.length };
}

/** The fetches of a plan's steps (6), each emitted once the fetches it waits for are. */
export function batchFetches(
  planned: readonly PlanStep[],
  definitions: ReadonlyMap<string, VariableDefinitionNode>,
  /** The root steps whose documents are not queries: each mutation field's, a subscription's one (every other fetch is a query). */
  rootOperations: ReadonlyMap<PlanStep, Exclude<FetchOperation, 'query'>>,
  /** The client operation's directives, per operation type of the fetch (5). */
  operationDirectives: Readonly<Record<FetchOperation, readonly DirectiveNode[]>> = { query: [], mutation: [], subscription: [] },
): Fetch[] {
  const fetches: Fetch[] = [];
  const built = new Map<PlanStep, FetchStep>();
  for (const group of groupSteps(planned)) {
    // A root step is alone in its group: its operation type is the group's.
    const operation = rootOperations.get(group.steps[0]) ?? 'query';
    fetches.push(emitFetch({ id: fetches.length, steps: group.steps, operation, dependsOn: group.dependsOn.map((id) => fetches[id]) }, { definitions, built, operationDirectives: operationDirectives[operation] }));
  }
  return fetches;
}
