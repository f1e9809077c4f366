// The budget of one subgraph call when it is not its request's: a deferred payload's own signal and deadline.
import type { ExecutionRequest } from '@graphql-tools/utils';

/**
 * A call's signal and absolute deadline (`performance.now()` ms). The request's are the default
 * (request-state.ts); a deferred part of a query has its own (decision 026, 3): a child of the
 * request's signal (the client leaving aborts it too), with the defer deadline instead of the
 * request's.
 */
export interface CallBudget {
  readonly signal: AbortSignal;
  readonly deadlineAt: number;
}

/** Budgets by the execution request they were given to; the subgraph executor reads them back. */
const budgets = new WeakMap<ExecutionRequest, CallBudget>();

/** Gives a subgraph call a budget of its own (the request object is the call's, made for it). */
export function withCallBudget(request: ExecutionRequest, budget: CallBudget): ExecutionRequest {
  budgets.set(request, budget);
  return request;
}

/** The call's own budget, or undefined: the request's holds. */
export function callBudgetOf(request: ExecutionRequest): CallBudget | undefined {
  return budgets.get(request);
}
