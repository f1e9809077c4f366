// Query plans per served graph, planned and run: planned once per document, run against the subgraph executors, shaped by the compiled projection, delivered whole or in parts.
import { buildASTSchema, type DocumentNode, type ExecutionArgs, type ExecutionResult, type GraphQLSchema } from 'graphql';
import type { Executor } from '@graphql-tools/utils';
import type { QueryPlan } from '../plan/build-plan.js';
import type { Fetch } from '../plan/plan-types.js';
import { runPlan, startPlan, type RunRequest } from '../plan/run-plan.js';
import { deliverIncrementally } from '../deliver/incremental-delivery.js';
import { splitDeferred } from '../deliver/deferred-parts.js';
import { requestStateOf } from '../../request/request-state.js';
import { PlanUnsupported } from '../plan/supergraph-model.js';
import { Supergraph } from '../supergraph/supergraph.js';
import type { SupergraphModel } from '../plan/supergraph-model.js';
import { requestError } from '../../errors/client-error.js';
import { forbiddenField } from '../../security/forbidden-field.js';
import type { DocumentText } from '../../cache/document-text.js';
import { SectionCache, type ReturnedEntity, type SectionCacheOptions } from '../plan/section-cache.js';
import { withSectionCache } from '../plan/cached-fetch.js';
import { eventAnswer, subgraphFetch, type FetchAnswer, type FetchFn } from '../plan/subgraph-fetch.js';
import type { CallBudget } from '../../request/call-budget.js';
import { createPlanMemo, type PlanOutcome } from '../plan/plan-memo.js';
import { createAnswerShaper, type ProjectionMismatch, type ProjectionMode, type ShapeAnswer } from './shape-answer.js';

export type { PlanOutcome } from '../plan/plan-memo.js';

export interface PlanningExecutorOptions {
  /** The served graph's supergraph, whose join facts the plans follow (a bare document is wrapped, for tests). */
  supergraph: Supergraph | DocumentNode;
  /** The client-facing schema (the stitched one): the projection runs on a copy of it without resolvers. */
  apiSchema: GraphQLSchema;
  /** The executor of each subgraph, by `join__Graph` value. */
  executors: ReadonlyMap<string, Executor>;
  /**
   * Progressive-override labels switched on (`@override(from:, label: "beta")`); `percent(N)`
   * labels are switched on for N% of requests, drawn per request. Default: none.
   */
  overrideLabels?: ReadonlySet<string>;
  /** The draw for `percent(N)` labels, in [0, 1). Default Math.random. */
  random?: () => number;
  /** The error of a field the caller may not read. Default: `forbiddenField`, the one the stitched schema's guards throw too. */
  deniedError?: (coordinate: string) => Error;
  /**
   * Told once per document planned, with the outcome: `planned`; `unsatisfiable` (a field without
   * a source where it is asked: the request is refused, with the reason); `unsupported` (what plans do not
   * model, with the reason, logged at debug level); `invalid` (a subgraph document failed its
   * subgraph's validation) and `failed` (the planner threw): planner bugs, logged as errors.
   */
  onPlanned?: (outcome: PlanOutcome, reason: string | undefined, operationName: string | undefined) => void;
  /**
   * The normalised text of a document (decision 009): how a request's document finds a plan warmed
   * from another document object with the same text. Share one across graphs so a document is
   * printed once. Default: a memo of this planner's own.
   */
  documentText?: DocumentText;
  /**
   * How an answer is shaped from the merged subgraph answers (decision 013): `compiled` (default),
   * `graphql-js` (`execute` over resolvers that read the tree: the reference), or `verify` (both;
   * the answer is graphql-js's, and every difference is told to `onProjectionMismatch`).
   */
  projection?: ProjectionMode;
  /** A compiled projection answered otherwise than graphql-js (`verify` only): a bug. */
  onProjectionMismatch?: ProjectionMismatch;
  /** The deferred parts' budget when the request's state has none (use-deadline off), in ms. Default DEFAULT_DEFER_DEADLINE_MS. */
  deferDeadlineMs?: number;
  /** The section cache (decision 010): parts it holds fresh are not fetched. Absent: every part is fetched. */
  sectionCache?: Omit<SectionCacheOptions, 'keyFieldsOf'> & {
    /** Purges the entities a mutation returned, on every router (the mutation's answer waits for it). */
    purgeEntities?: (entities: ReturnedEntity[]) => Promise<void>;
  };
}

/** The deferred parts' budget when neither the operation's policy nor the router's config sets one, in ms. */
export const DEFAULT_DEFER_DEADLINE_MS = 10_000;

/** Plans a served graph's operations and runs their plans (the engine the query-plans plugin drives). */
export interface PlanningExecutor {
  /**
   * The plan of an operation, or undefined when the planner does not model it (stitching executes
   * it). Memoised per document, and per authorization decision: `denied` (the coordinates it
   * denies, one set object per decision) leaves those fields out and answers them FORBIDDEN.
   */
  planFor(document: DocumentNode, operationName: string | null | undefined, denied?: ReadonlySet<string>): QueryPlan | undefined;
  /**
   * Runs a plan and projects the merged answers onto the client's operation: one answer, or, for an
   * operation with an active `@defer` whose client reads an incremental format (the request state's
   * `incremental`), a stream of payloads (gateway/deliver/, decision 027).
   */
  execute(plan: QueryPlan, args: ExecutionArgs): Promise<ExecutionResult | AsyncIterable<ExecutionResult>>;
  /**
   * Completes one event of a subscription (decision 031): the plan's root fetch (the subscription
   * the subgraph pushes events on) is answered by `event`; every other fetch runs as in a query,
   * within `budget` (the event's own signal and deadline), through the section cache; the merged
   * tree is projected onto the client's operation. A failed section nulls that section in this
   * event only.
   */
  completeEvent(plan: QueryPlan, args: ExecutionArgs, event: ExecutionResult, budget: CallBudget): Promise<ExecutionResult>;
  /**
   * Plans an operation before any request asks for it (decision 009: warm plans on publish), as a
   * request without denied fields and without progressive-override labels would. A later request
   * whose document prints the same finds the plan ready, whatever its document object. Returns
   * whether it was planned (false: stitching would run it).
   */
  warm(document: DocumentNode, operationName: string | null | undefined): boolean;
  /** Why an operation has no plan (for logs and tests). */
  whyUnplanned(document: DocumentNode, operationName: string | null | undefined): string | undefined;
}

/**
 * One served graph's query plans, planned and run (decision 007: one engine for every query and
 * mutation; stitching runs only what plans do not model). A plan does per document what stitching
 * does per field and per request (choose subgraphs, build and print their documents), so a request
 * only fills in variables and representations. Made of three named parts:
 * 1. the plan memo (`createPlanMemo`, plan/plan-memo.ts): a plan per document, operation, decision and labels;
 * 2. the run (`createPlanRuns`): one wiring of a request's run, which `execute` and `completeEvent`
 *    share: the fetch functions (the subgraph call, with the section cache around it when it is on),
 *    `runPlan`, the purge of what a mutation returned, the shaped answer;
 * 3. the answer's shape (`createAnswerShaper`, shape-answer.ts): the compiled projection (decision
 *    013), graphql-js its reference; a deferred answer is delivered in parts (gateway/deliver/).
 */
export function createPlanningExecutor(options: PlanningExecutorOptions): PlanningExecutor {
  const supergraph = options.supergraph instanceof Supergraph ? options.supergraph : Supergraph.fromDocument(options.supergraph);
  const model = supergraph.join;
  const supergraphSchema = buildASTSchema(supergraph.document, { assumeValid: true, assumeValidSDL: true });
  const memo = createPlanMemo(model, supergraphSchema, options);
  const { shape, projector } = createAnswerShaper(options.apiSchema, options.projection ?? 'compiled', options.onProjectionMismatch);
  const runs = createPlanRuns(model, supergraphSchema, options, shape);

  return {
    planFor(document, operationName, denied) {
      const plan = memo.lookup(document, operationName, memo.labelsForRequest(), denied);
      return plan instanceof PlanUnsupported ? undefined : plan;
    },
    warm(document, operationName) {
      return !(memo.warm(document, operationName) instanceof PlanUnsupported);
    },
    whyUnplanned(document, operationName) {
      const plan = memo.lookup(document, operationName, memo.labelsForRequest());
      return plan instanceof PlanUnsupported ? plan.message : undefined;
    },
    async completeEvent(plan, args, event, budget) {
      const root = plan.subscription;
      if (!root) throw new Error('completeEvent: not a subscription plan');
      const request = runs.requestOf(plan, args, { fetch: root, answer: eventAnswer(root, event) });
      return runs.answer(plan, args, { ...request, budgetOf: () => budget });
    },
    async execute(plan, args) {
      if (plan.unsatisfiable !== undefined) return { errors: [requestError('QUERY_PLANNING_FAILED', `The query cannot be planned: ${plan.unsatisfiable}.`)] };
      const request = runs.requestOf(plan, args);
      const purge = runs.purgeOf(plan, args);
      const state = requestStateOf(args.contextValue);
      const split = state.incremental ? splitDeferred(args.document, args.operationName, request.variables) : undefined;
      if (split) {
        const stream = deliverIncrementally({
          plan,
          split,
          format: state.incremental!,
          projector,
          operationName: args.operationName,
          variables: request.variables,
          context: args.contextValue,
          deniedError: request.deniedError,
          deferDeadlineMs: state.deferDeadlineMs ?? options.deferDeadlineMs ?? DEFAULT_DEFER_DEADLINE_MS,
          start: (budgetOf) => startPlan(plan, { ...request, budgetOf }),
          afterRun: purge,
        });
        if (stream) return stream;
      }
      return runs.answer(plan, args, request, purge);
    },
  };
}

/** A fetch answered without a call: a subscription's root fetch, by the event (decision 031). */
interface AnsweredFetch {
  readonly fetch: Fetch;
  readonly answer: FetchAnswer;
}

/** One wiring of a plan's run for a request, shared by `execute` (whole or deferred) and `completeEvent`. */
interface PlanRuns {
  /**
   * The run's request: the variables, the denied fields' error, and each subgraph's fetch (the
   * subgraph call, with the section cache around it for this request when it is on); `answered`
   * is not sent.
   */
  requestOf(plan: QueryPlan, args: ExecutionArgs, answered?: AnsweredFetch): RunRequest;
  /** A mutation's purge of the entities it returned from the section cache (undefined: nothing to purge). */
  purgeOf(plan: QueryPlan, args: ExecutionArgs): ((data: Record<string, unknown>) => Promise<void>) | undefined;
  /** Runs the plan, then `afterRun` (the purge), and shapes the answer; errors no field stands for follow the projection's. */
  answer(plan: QueryPlan, args: ExecutionArgs, request: RunRequest, afterRun?: (data: Record<string, unknown>) => Promise<void>): Promise<ExecutionResult>;
}

function createPlanRuns(model: SupergraphModel, supergraphSchema: GraphQLSchema, options: PlanningExecutorOptions, shape: ShapeAnswer): PlanRuns {
  const deniedError = options.deniedError ?? forbiddenField;
  const sectionCache = options.sectionCache ? new SectionCache({ ...options.sectionCache, keyFieldsOf: entityKeyFields(model) }, supergraphSchema) : undefined;
  const purgeEntities = options.sectionCache?.purgeEntities;
  const executorOf = (graph: string): Executor => {
    const executor = options.executors.get(graph);
    if (!executor) throw new Error(`no executor for subgraph ${graph}`);
    return executor;
  };
  return {
    requestOf(plan, args, answered) {
      const variables = (args.variableValues ?? undefined) as Record<string, unknown> | undefined;
      const sections = sectionCache?.forRequest(plan, args.contextValue, variables);
      const call = subgraphFetch(executorOf, args.contextValue);
      // The section cache wraps the subgraph call, for this request only (its viewer, notes and deadline).
      const cached = sections ? withSectionCache(sections)(call) : call;
      const fetch: FetchFn = answered ? (request) => (request.fetch === answered.fetch ? answered.answer : cached(request)) : cached;
      const fetchOf = (graph: string): FetchFn => {
        executorOf(graph); // an unknown subgraph fails the run where it is asked for, as it always has
        return fetch;
      };
      return { fetchOf, variables, deniedError };
    },
    purgeOf(plan, args) {
      if (!sectionCache || !purgeEntities || !plan.fetches.some((f) => f.operation === 'mutation')) return undefined;
      return async (data) => {
        // A mutation's answer names the entities it changed: their cached parts go, on every router.
        const entities = sectionCache.mutationEntities(args.document, args.operationName, data);
        if (entities.length > 0) await purgeEntities(entities);
      };
    },
    async answer(plan, args, request, afterRun) {
      const run = await runPlan(plan, request);
      if (afterRun) await afterRun(run.data);
      const result = await shape(args, run.data, request.variables);
      if (run.unplaced.length === 0) return result;
      return { ...result, errors: [...(result.errors ?? []), ...run.unplaced] };
    },
  };
}

/** The top-level fields of each `@key` of a type, over every subgraph (for entity tags), worked out on first use. */
function entityKeyFields(model: SupergraphModel): (typeName: string) => string[][] {
  const keyFields = new Map<string, string[][]>();
  return function keyFieldsOf(typeName) {
    let keys = keyFields.get(typeName);
    if (!keys) {
      const seen = new Set<string>();
      keys = [];
      for (const graph of model.graphsOf(typeName)) {
        for (const key of model.keysIn(typeName, graph)) {
          const fields = [...model.fieldSet(key).keys()].sort();
          if (!seen.has(fields.join(' '))) keys.push(fields);
          seen.add(fields.join(' '));
        }
      }
      keyFields.set(typeName, keys);
    }
    return keys;
  };
}
