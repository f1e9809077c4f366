// Query plans per served graph, planned and run: planned once per document, run against the subgraph executors, shaped by the compiled projection.
import {
  buildASTSchema,
  execute,
  parse,
  printSchema,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLFieldResolver,
  type GraphQLSchema,
} from 'graphql';
import type { Executor } from '@graphql-tools/utils';
import { buildPlan, type QueryPlan } from './build-plan.js';
import { runPlan, startPlan } from './run-plan.js';
import { deliverIncrementally } from '../deliver/incremental-delivery.js';
import { splitDeferred } from '../deliver/deferred-parts.js';
import { requestStateOf } from '../../request/request-state.js';
import { PlanInvalid, PlanUnsatisfiable, PlanUnsupported } from './supergraph-model.js';
import { Supergraph } from '../supergraph/supergraph.js';
import type { SupergraphModel } from './supergraph-model.js';
import { requestError } from '../../errors/client-error.js';
import { forbiddenField } from '../../security/forbidden-field.js';
import { createDocumentText, type DocumentText } from '../../cache/document-text.js';
import { analyseOperation } from '../../request/operation-analysis.js';
import { SectionCache, type ReturnedEntity, type SectionCacheOptions } from './section-cache.js';
import { withSectionCache } from './cached-fetch.js';
import { eventAnswer, subgraphFetch, type FetchFn } from './subgraph-fetch.js';
import type { CallBudget } from '../../request/call-budget.js';
import { createAnswerProjector, interfaceObjectTypeResolver, type AnswerProjector, type Projection } from './project-answer.js';

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
  projection?: 'compiled' | 'graphql-js' | 'verify';
  /** A compiled projection answered otherwise than graphql-js (`verify` only): a bug. */
  onProjectionMismatch?: (operationName: string | undefined, difference: string) => void;
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

export type PlanOutcome = 'planned' | 'unsatisfiable' | 'unsupported' | 'invalid' | 'failed';

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

/** Reads the merged tree by response key: subgraph answers carry the client's aliases. */
const fromResponseKey: GraphQLFieldResolver<Record<string, unknown>, unknown> = function fromResponseKey(source, _args, _context, info) {
  return source[info.path.key];
};

const NONE: ReadonlySet<string> = new Set<string>();

/**
 * One served graph's query plans, planned and run (decision 007: one engine for every query and
 * mutation; stitching runs only what plans do not model). A plan does per document what stitching
 * does per field and per request (choose subgraphs, build and print their documents), so a request
 * only fills in variables and representations. Made of three named parts:
 * 1. the plan memo (`createPlanMemo`): a plan per document, operation, decision and labels;
 * 2. the run (`runPlan`) over each request's fetch functions (the subgraph call, with the section
 *    cache around it when it is on), and the purge of what a mutation returned;
 * 3. the answer's shape (`createAnswerShaper`): the compiled projection (decision 013), graphql-js
 *    its reference.
 */
export function createPlanningExecutor(options: PlanningExecutorOptions): PlanningExecutor {
  const supergraph = options.supergraph instanceof Supergraph ? options.supergraph : Supergraph.fromDocument(options.supergraph);
  const model = supergraph.join;
  const supergraphSchema = buildASTSchema(supergraph.document, { assumeValid: true, assumeValidSDL: true });
  const memo = createPlanMemo(model, supergraphSchema, options);
  const { shape, projector } = createAnswerShaper(options.apiSchema, options.projection ?? 'compiled', options.onProjectionMismatch);
  const deniedError = options.deniedError ?? forbiddenField;
  const sectionCache = options.sectionCache ? new SectionCache({ ...options.sectionCache, keyFieldsOf: entityKeyFields(model) }, supergraphSchema) : undefined;
  const purgeEntities = options.sectionCache?.purgeEntities;
  const executorOf = (graph: string): Executor => {
    const executor = options.executors.get(graph);
    if (!executor) throw new Error(`no executor for subgraph ${graph}`);
    return executor;
  };

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
      const variables = (args.variableValues ?? undefined) as Record<string, unknown> | undefined;
      const sections = sectionCache?.forRequest(plan, args.contextValue, variables);
      const call = subgraphFetch(executorOf, args.contextValue);
      const fetch = sections ? withSectionCache(sections)(call) : call;
      const answered = eventAnswer(root, event);
      const fetchOf = (graph: string): FetchFn => {
        executorOf(graph);
        return (request) => (request.fetch === root ? answered : fetch(request));
      };
      const run = await runPlan(plan, { fetchOf, variables, deniedError, budgetOf: () => budget });
      const result = await shape(args, run.data, variables);
      if (run.unplaced.length === 0) return result;
      return { ...result, errors: [...(result.errors ?? []), ...run.unplaced] };
    },
    async execute(plan, args) {
      if (plan.unsatisfiable !== undefined) return { errors: [requestError('QUERY_PLANNING_FAILED', `The query cannot be planned: ${plan.unsatisfiable}.`)] };
      const variables = (args.variableValues ?? undefined) as Record<string, unknown> | undefined;
      const sections = sectionCache?.forRequest(plan, args.contextValue, variables);
      const call = subgraphFetch(executorOf, args.contextValue);
      // The section cache wraps the subgraph call, for this request only (its viewer, notes and deadline).
      const fetch = sections ? withSectionCache(sections)(call) : call;
      const fetchOf = (graph: string): FetchFn => {
        executorOf(graph); // an unknown subgraph fails the run where it is asked for, as it always has
        return fetch;
      };
      const purge = sectionCache && purgeEntities && plan.fetches.some((f) => f.operation === 'mutation')
        ? async (data: Record<string, unknown>) => {
            // A mutation's answer names the entities it changed: their cached parts go, on every router.
            const entities = sectionCache.mutationEntities(args.document, args.operationName, data);
            if (entities.length > 0) await purgeEntities(entities);
          }
        : undefined;
      const state = requestStateOf(args.contextValue);
      const split = state.incremental ? splitDeferred(args.document, args.operationName, variables) : undefined;
      if (split) {
        const stream = deliverIncrementally({
          plan,
          split,
          format: state.incremental!,
          projector,
          operationName: args.operationName,
          variables,
          context: args.contextValue,
          deniedError,
          deferDeadlineMs: state.deferDeadlineMs ?? options.deferDeadlineMs ?? DEFAULT_DEFER_DEADLINE_MS,
          start: (budgetOf) => startPlan(plan, { fetchOf, variables, deniedError, budgetOf }),
          afterRun: purge,
        });
        if (stream) return stream;
      }
      const run = await runPlan(plan, { fetchOf, variables, deniedError });
      if (purge) await purge(run.data);
      const result = await shape(args, run.data, variables);
      if (run.unplaced.length === 0) return result;
      return { ...result, errors: [...(result.errors ?? []), ...run.unplaced] };
    },
  };
}

/** A plan, or why there is none (stitching runs it), per document object, operation, decision and labels. */
interface PlanMemo {
  /** The labels switched on for one request (none in a supergraph without progressive overrides): drawn per call. */
  labelsForRequest(): ReadonlySet<string>;
  lookup(document: DocumentNode, operationName: string | null | undefined, on: ReadonlySet<string>, denied?: ReadonlySet<string>): QueryPlan | PlanUnsupported;
  /** Plans without labels or denials, and keeps the plans of the document by its normalised text too (decision 009). */
  warm(document: DocumentNode, operationName: string | null | undefined): QueryPlan | PlanUnsupported;
}

type PlansByName = Map<string, QueryPlan | PlanUnsupported>;

function createPlanMemo(model: SupergraphModel, supergraphSchema: GraphQLSchema, options: PlanningExecutorOptions): PlanMemo {
  const plans = new WeakMap<DocumentNode, PlansByName>();
  /** Plans of requests whose decision denies fields, by the decision's denied set (decisions are memoised per document). */
  const plansByDecision = new WeakMap<ReadonlySet<string>, WeakMap<DocumentNode, PlansByName>>();
  const labels = [...model.overrideLabels].sort().map((label) => ({ label, percent: percentOf(label) }));
  const random = options.random ?? Math.random;
  const documentText = options.documentText ?? createDocumentText();
  /**
   * Warmed plans by the document's normalised text. Only `warm` adds to it, so it holds at most the
   * operations warmed (the registry's top N), unlike the per-object memo, which forgets a document
   * with yoga's parse cache.
   */
  const warmed = new Map<string, PlansByName>();

  function labelsForRequest(): ReadonlySet<string> {
    if (labels.length === 0) return NONE;
    const on = new Set<string>();
    for (const { label, percent } of labels) if (percent === undefined ? options.overrideLabels?.has(label) : random() * 100 < percent) on.add(label);
    return on;
  }

  /** The plans of a document object, by operation and labels (a warmed plan of the same text serves its first sight). */
  function plansOf(document: DocumentNode, denied: ReadonlySet<string> | undefined): PlansByName {
    let byDocument = plans;
    if (denied && denied.size > 0) {
      let decided = plansByDecision.get(denied);
      if (!decided) plansByDecision.set(denied, (decided = new WeakMap()));
      byDocument = decided;
    }
    let byName = byDocument.get(document);
    if (!byName) {
      byName = (byDocument === plans && warmed.size > 0 ? warmed.get(documentText(document)) : undefined) ?? new Map();
      byDocument.set(document, byName);
    }
    return byName;
  }

  /** Plans once; what the planner cannot do is told and kept as the reason (never thrown at the request). */
  function plan(document: DocumentNode, operationName: string | null | undefined, on: ReadonlySet<string>, denied: ReadonlySet<string> | undefined): QueryPlan | PlanUnsupported {
    try {
      const planned = buildPlan(model, supergraphSchema, document, operationName, on, denied);
      options.onPlanned?.('planned', undefined, operationName ?? undefined);
      return planned;
    } catch (error) {
      if (error instanceof PlanUnsatisfiable) {
        // No engine can answer it: a plan that refuses the request, never stitching.
        options.onPlanned?.('unsatisfiable', error.message, operationName ?? undefined);
        return { unsatisfiable: error.message, fetches: [], denied: [], variableDefaults: {} };
      }
      // A planner failure must not fail the request: stitching can still run it.
      const outcome: PlanOutcome = error instanceof PlanInvalid ? 'invalid' : error instanceof PlanUnsupported ? 'unsupported' : 'failed';
      const unsupported = error instanceof PlanUnsupported ? error : new PlanUnsupported(`the planner failed: ${(error as Error).message}`);
      options.onPlanned?.(outcome, unsupported.message, operationName ?? undefined);
      return unsupported;
    }
  }

  function lookup(document: DocumentNode, operationName: string | null | undefined, on: ReadonlySet<string>, denied?: ReadonlySet<string>): QueryPlan | PlanUnsupported {
    const byName = plansOf(document, denied);
    const name = operationName ?? soleOperationName(document);
    const key = on.size === 0 ? name : `${name}\u0000${[...on].join('\u0000')}`;
    let planned = byName.get(key);
    if (!planned) byName.set(key, (planned = plan(document, operationName, on, denied)));
    return planned;
  }

  return {
    labelsForRequest,
    lookup,
    warm(document, operationName) {
      const planned = lookup(document, operationName, NONE);
      const text = documentText(document);
      if (!warmed.has(text)) warmed.set(text, plans.get(document)!);
      return planned;
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

/**
 * Shapes the client's answer from the merged tree (decision 013): `compiled`, the compiled
 * projection; `graphql-js`, its reference (`execute` over resolvers that read the tree, on a copy of
 * the API schema without resolvers; abstract types resolve by `__typename`); `verify`, both, the
 * answer graphql-js's. The compiled projection hands introspection to graphql-js too.
 */
function createAnswerShaper(
  apiSchema: GraphQLSchema,
  mode: NonNullable<PlanningExecutorOptions['projection']>,
  onMismatch: PlanningExecutorOptions['onProjectionMismatch'],
): { shape: (args: ExecutionArgs, tree: Record<string, unknown>, variables: Record<string, unknown> | undefined) => Promise<ExecutionResult>; projector: AnswerProjector } {
  const projectionSchema = buildASTSchema(parse(printSchema(apiSchema), { noLocation: true }), { assumeValid: true, assumeValidSDL: true });
  const projector = createAnswerProjector(projectionSchema);
  return { projector, shape: async function shapeAnswer(args, tree, variables) {
    const projection = mode === 'graphql-js' ? undefined : projector.projectionOf(args.document, args.operationName, variables);
    if (projection && mode === 'compiled') return projection(tree);
    const result = (await execute({
      schema: projectionSchema,
      document: args.document,
      rootValue: tree,
      contextValue: args.contextValue,
      variableValues: args.variableValues,
      operationName: args.operationName,
      fieldResolver: fromResponseKey,
      typeResolver: interfaceObjectTypeResolver,
    })) as ExecutionResult;
    if (projection) verifyProjection(projection, tree, result, args.operationName ?? undefined, onMismatch);
    return result;
  } };
}

/** Compares the compiled projection's answer with graphql-js's: data, then each error's message, path, locations, extensions and kind. */
function verifyProjection(projection: Projection, tree: Record<string, unknown>, reference: ExecutionResult, operationName: string | undefined, onMismatch: PlanningExecutorOptions['onProjectionMismatch']): void {
  let compiled: ExecutionResult;
  try {
    compiled = projection(tree);
  } catch (error) {
    onMismatch?.(operationName, `the compiled projection threw: ${(error as Error).message}`);
    return;
  }
  const text = (result: ExecutionResult) =>
    JSON.stringify({ data: result.data, errors: result.errors?.map((error) => ({ ...error.toJSON(), kind: error.originalError?.constructor.name })) });
  const [a, b] = [text(compiled), text(reference)];
  if (a !== b) onMismatch?.(operationName, `compiled ${a} vs graphql-js ${b}`);
}

/**
 * The plan key's operation name: a request may name the only operation of its document or not, and
 * both must find the same plan (a warmed plan is made with the name the registry recorded).
 */
function soleOperationName(document: DocumentNode): string {
  const analysis = analyseOperation(document);
  return analysis.operationCount === 1 ? (analysis.operation?.name?.value ?? '') : '';
}

/** N of a `percent(N)` label; undefined for a named label. */
function percentOf(label: string): number | undefined {
  const match = /^percent\((\d+(?:\.\d+)?)\)$/.exec(label);
  return match ? Number(match[1]) : undefined;
}
