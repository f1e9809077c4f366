// One fetch of a plan as a function (decision 026, 1): what the runner asks, what it gets back, and the plain subgraph call.
import { GraphQLError, OperationTypeNode, type ExecutionResult } from 'graphql';
import type { ExecutionRequest, Executor } from '@graphql-tools/utils';
import { clientError } from '../../errors/client-error.js';
import { withCallBudget, type CallBudget } from '../../request/call-budget.js';
import type { Fetch, FetchStep, SelectionTree } from './build-plan.js';

type Data = Record<string, unknown>;

/** One entity step of a call: the distinct representations the runner collected, in its own order. */
export interface FetchLookup {
  readonly step: FetchStep;
  readonly representations: readonly Data[];
}

/** One subgraph call as the runner sees it: the representations it wants answered, in its own order. */
export interface FetchCall {
  readonly fetch: Fetch;
  /** The fetch's own variables (representations not included). */
  readonly variables: Data;
  /** Entity fetches: per step the client's conditions leave in, its representations (root fetches: none). */
  readonly lookups?: readonly FetchLookup[];
  /** The budget of the payload the fetch belongs to, when it is not the request's (a deferred part's, decision 026, 3). */
  readonly budget?: CallBudget;
}

/**
 * The answer as if every representation had been sent: `_entities` (or the step's alias) index for
 * index, each error's path `[alias, index, …]` at the runner's index. `settled` holds, per step, the
 * representations answered without this call (by index: a wrapper's fresh or stale copies). They
 * are merged like answers, and neither an error without an index nor an answer without data
 * concerns them.
 */
export interface FetchAnswer extends ExecutionResult {
  readonly settled?: ReadonlyMap<FetchStep, ReadonlyMap<number, unknown>>;
}

/** A fetch: an answer at once when nothing had to wait (the section cache's memory path), a promise otherwise. */
export type FetchFn = (call: FetchCall) => FetchAnswer | Promise<FetchAnswer>;

/**
 * The plain subgraph call: the fetch's document with its variables and, per entity step, its
 * representations (a step left out gets none). The executors turn every failure of a call into an
 * answer with errors; should one throw all the same, its error stands for the fetch's fields like
 * any other, so a plan never fails as a whole (and a mutation is never run a second time by anything).
 */
export function subgraphFetch(executorOf: (graph: string) => Executor, context: unknown): FetchFn {
  return async function callSubgraph({ fetch, variables, lookups, budget }) {
    let sent = variables;
    if (lookups) {
      sent = { ...variables };
      for (const { step, representations } of lookups) sent[step.representationsVariable!] = representations;
      for (const step of fetch.steps) if (!(step.representationsVariable! in sent)) sent[step.representationsVariable!] = [];
    }
    const request: ExecutionRequest = { document: fetch.document, variables: sent, context, operationType: fetch.operation === 'mutation' ? OperationTypeNode.MUTATION : OperationTypeNode.QUERY };
    if (budget) withCallBudget(request, budget);
    const executor = executorOf(fetch.graph);
    let result: ExecutionResult;
    try {
      result = (await executor(request)) as ExecutionResult;
    } catch (error) {
      const failure = error instanceof GraphQLError ? error : clientError('SUBGRAPH_ERROR', `subgraph "${fetch.subgraph}" failed`, { subgraph: fetch.subgraph });
      return { errors: [failure] };
    }
    if (fetch.renamed && result.data) restoreKeys(result.data, fetch);
    return result;
  };
}

/**
 * A subscription event as its root fetch's answer (decision 031): the event a subgraph pushed stands
 * for the root fetch's call, its aliased fields renamed back like a call's answer. Copied, since the
 * event object is shared by every stream completing it.
 */
export function eventAnswer(fetch: Fetch, event: ExecutionResult): FetchAnswer {
  if (!fetch.renamed || !event.data) return event;
  const data = structuredClone(event.data) as Data;
  restoreKeys(data, fetch);
  return { ...event, data };
}

/** Renames the answer's aliased fields (`PlannedField.subgraphKey`) back to the client's response keys. */
function restoreKeys(answer: Data, fetch: Fetch): void {
  for (const step of fetch.steps) {
    if (step.entityType === undefined) restoreTree(answer, step.selection);
    else restoreTree(answer[step.alias ?? '_entities'], step.selection);
  }
}

function restoreTree(value: unknown, tree: SelectionTree): void {
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const item of value) restoreTree(item, tree);
    return;
  }
  const object = value as Data;
  for (const [key, field] of tree.fields) {
    if (field.subgraphKey && field.subgraphKey in object) {
      object[key] = object[field.subgraphKey];
      delete object[field.subgraphKey];
    }
    if (field.selection) restoreTree(object[key], field.selection);
  }
  for (const [typeName, fragment] of tree.fragments) if (object.__typename === undefined || object.__typename === typeName) restoreTree(object, fragment);
}
