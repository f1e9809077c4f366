// Runs a query plan: each step's subgraph call once its dependencies answered, every answer merged into one tree.
import { GraphQLError, Kind, valueFromASTUntyped, type ValueNode } from 'graphql';
import { clientError } from '../../errors/client-error.js';
import { includedByConditions } from '../../request/included-by-conditions.js';
import type { Fetch, FetchStep, PlannedField, QueryPlan } from './build-plan.js';
import type { RepresentationTree } from './plan-types.js';
import { collectObjects, lacksKey, mergeInto, representationOf } from './answer-tree.js';
import type { FetchAnswer, FetchFn } from './subgraph-fetch.js';
import type { CallBudget } from '../../request/call-budget.js';

type Data = Record<string, unknown>;

/**
 * What one request's run of a plan is given: the request-scoped things every fetch reads. The
 * client's signal and deadline travel in the GraphQL context (its request state), which the fetch
 * functions carry to every subgraph call.
 */
export interface RunRequest {
  /**
   * The fetch of each subgraph, by `join__Graph` value (subgraph-fetch.ts): the subgraph call, with
   * the section cache around it when the request may use it (cached-fetch.ts).
   */
  readonly fetchOf: (graph: string) => FetchFn;
  /** The request's variables (undefined: none given). */
  readonly variables: Data | undefined;
  /** The error a denied field is answered with. */
  readonly deniedError: (coordinate: string) => Error;
  /** A fetch's own budget, when the payload it belongs to has one (a deferred part); absent: the request's. */
  readonly budgetOf?: (fetch: Fetch) => CallBudget | undefined;
}

/** A run in progress: the request, the plan's variable defaults, and what the fetches merge into. */
interface PlanRunContext extends RunRequest {
  /** The operation's declared variable defaults (for `@skip`/`@include` of a look-up's fields). */
  readonly defaults: Readonly<Data>;
  /** The merged answers so far. */
  readonly data: Data;
  /** Errors no field stands for. */
  readonly unplaced: GraphQLError[];
}

export interface PlanRun {
  /** The merged answers: response keys as the client asked them, plus the keys and type names the plan added. */
  data: Data;
  /** Subgraph errors that no field of the answer stands for (a subgraph reported an error beside its data). */
  unplaced: GraphQLError[];
}

/**
 * 1. A fetch starts as soon as every fetch it depends on has merged its answer: independent fetches
 *    run in parallel, and an entity fetch waits only for the fetches that find its objects or provide
 *    its `@requires` fields (not for a whole stage, stages.ts).
 * 2. An entity step walks the merged tree along its path (through list items), keeps the objects of
 *    its type, and sends one representation per distinct entity (keys and required fields). An
 *    object whose key is null or missing (a hop found no entity for it) is no entity: not sent.
 * 3. Answers are merged into the objects they extend. A failed field gets its error object in place
 *    of a value: the projection over the tree (the compiled projection, or graphql-js, its
 *    reference) then reports it at the field's own client path, and nulls propagate by the schema's
 *    nullability (GraphQL spec 6.4.4).
 * 4. A field the authorization decision denies gets the FORBIDDEN error the same way.
 * 5. A fetch is a function (`RunRequest.fetchOf`): the runner sends every representation it collected
 *    and merges the answer by index. What the section cache does (fresh copies not sent, answers
 *    stored, stale copies for a subgraph that could not answer) happens inside it (cached-fetch.ts);
 *    an answer it gives from memory is a value, merged without a turn of the event loop.
 */
export async function runPlan(plan: QueryPlan, request: RunRequest): Promise<PlanRun> {
  const run = startPlan(plan, request);
  await run.done;
  placeDenials(plan, run.data, request.deniedError);
  return { data: run.data, unplaced: run.unplaced };
}

/** A plan run under way (decision 026, 2): the tree its fetches merge into, and when each fetch is done. */
export interface RunningPlan extends PlanRun {
  /** Settles when the fetch of that id has merged its answer (or was not needed); rejects only on a runner bug. */
  readonly fetchDone: readonly Promise<void>[];
  /** Every fetch done. */
  readonly done: Promise<void>;
}

/**
 * Starts every fetch of the plan (1), each once those it depends on have merged, and returns at
 * once: a delivery waits for the fetches of each payload (`fetchDone`), and places the denied
 * fields (`placeDenials`) before it reads the tree. `runPlan` waits for all of them.
 */
export function startPlan(plan: QueryPlan, request: RunRequest): RunningPlan {
  const run: PlanRunContext = { ...request, defaults: plan.variableDefaults, data: {}, unplaced: [] };
  const running: Promise<void>[] = [];
  for (const fetch of plan.fetches) {
    const start = () => (fetch.steps[0].entityType === undefined ? runRootFetch(fetch, run) : runEntityFetch(fetch, run));
    running[fetch.id] = fetch.dependsOn.length === 0 ? start() : Promise.all(fetch.dependsOn.map((d) => running[d.id])).then(start);
  }
  return { data: run.data, unplaced: run.unplaced, fetchDone: running, done: Promise.all(running).then(() => undefined) };
}

/**
 * 4. Denied fields: each gets the FORBIDDEN error at its key. Last, since the plan may have fetched
 * one it needed itself (a key), which the caller still may not read. Returns what it replaced, so
 * a delivery that reads the tree while fetches still run can put the plan's own values back.
 */
export function placeDenials(plan: QueryPlan, data: Data, deniedError: (coordinate: string) => Error): (() => void) | undefined {
  if (plan.denied.length === 0) return undefined;
  const replaced: [Data, string, unknown, boolean][] = [];
  for (const denial of plan.denied) {
    const objects = new Set<Data>();
    collectObjects(data, { path: denial.path, typeName: denial.typeName, typeNames: denial.objectTypes, untyped: true }, objects);
    const error = deniedError(denial.coordinate);
    for (const object of objects) {
      replaced.push([object, denial.key, object[denial.key], denial.key in object]);
      object[denial.key] = error;
    }
  }
  return () => {
    for (let i = replaced.length - 1; i >= 0; i--) {
      const [object, key, value, had] = replaced[i];
      if (had) object[key] = value;
      else delete object[key];
    }
  };
}

function fetchVariables(fetch: Fetch, variables: Data | undefined, into: Data): Data {
  if (variables) for (const name of fetch.variableNames) if (name in variables) into[name] = variables[name];
  return into;
}

async function runRootFetch(fetch: Fetch, run: PlanRunContext): Promise<void> {
  const { data, unplaced } = run;
  const fetchFn = run.fetchOf(fetch.graph);
  const step = fetch.steps[0];
  const answered = fetchFn({ fetch, variables: fetchVariables(fetch, run.variables, {}), budget: run.budgetOf?.(fetch) });
  // 5. An answer the cache gave from memory is a value: merged without a turn of the event loop.
  const result = answered instanceof Promise ? await answered : answered;
  const errors = result.errors ?? [];
  const answer = result.data as Data | null | undefined;
  // A root field several subgraphs resolve may come from several root fetches: their answers merge.
  if (answer) mergeInto(data, answer);
  if (errors.length === 0 && !answer) markFields(data, step, wholeFailure(fetch));
  for (const error of errors) {
    const marker = markerOf(error as GraphQLError);
    const placed = error.path && error.path.length > 0 ? placeAt(data, error.path, step, marker) : markFields(data, step, marker);
    if (!placed) unplaced.push(marker);
  }
}

/** What one entity step of a fetch looks up: the objects standing for each representation. */
interface Lookup {
  step: FetchStep;
  targets: Data[];
  representations: Data[];
  byRepresentation: Data[][];
}

async function runEntityFetch(fetch: Fetch, run: PlanRunContext): Promise<void> {
  const { data, variables, defaults } = run;
  const fetchFn = run.fetchOf(fetch.graph);
  const lookups: Lookup[] = [];
  for (const step of fetch.steps) {
    // A look-up whose every field the client's @skip/@include leaves out is not made at all.
    if (!anyIncluded(step, variables, defaults)) continue;
    const found = new Set<Data>();
    collectObjects(data, { path: step.path, typeName: step.entityType!, typeNames: step.objectTypes }, found);
    // 2. One representation per distinct entity; every object standing for it gets its answer.
    const representations: Data[] = [];
    const byRepresentation: Data[][] = [];
    const indexOf = new Map<unknown, number>();
    const targets: Data[] = [];
    const identity = identityOf(step.representation);
    for (const target of found) {
      // An object whose key is null or missing is no entity (nothing to look up): its fields stay null.
      if (lacksKey(target, step)) continue;
      const representation = representationOf(target, step.representation, step.lookupType ?? step.entityType!);
      if (representation instanceof GraphQLError) {
        markFields(target, step, representation);
        continue;
      }
      targets.push(target);
      const key = identity(representation);
      let index = indexOf.get(key);
      if (index === undefined) {
        index = representations.length;
        indexOf.set(key, index);
        representations.push(representation);
        byRepresentation.push([]);
      }
      byRepresentation[index].push(target);
    }
    lookups.push({ step, targets, representations, byRepresentation });
  }
  if (lookups.every((l) => l.targets.length === 0)) return;
  const answered = fetchFn({ fetch, variables: fetchVariables(fetch, variables, {}), lookups, budget: run.budgetOf?.(fetch) });
  mergeEntities(fetch, lookups, answered instanceof Promise ? await answered : answered, run.unplaced);
}

/**
 * Merges an entity call's answer (index for index with the look-ups' representations) into the
 * objects standing for each representation. What the call settled without the subgraph (`settled`)
 * is merged first, and neither an error without an entity index nor an answer without data
 * concerns it.
 */
function mergeEntities(fetch: Fetch, lookups: readonly Lookup[], result: FetchAnswer, unplaced: GraphQLError[]): void {
  const answer = result.data as Data | null | undefined;
  const errors = result.errors ?? [];
  for (const { step, representations, byRepresentation } of lookups) {
    const entities = answer?.[step.alias ?? '_entities'];
    const settled = result.settled?.get(step);
    if (settled) for (const [index, entity] of settled) mergeEntity(step, byRepresentation[index], entity);
    if (Array.isArray(entities)) {
      for (let index = 0; index < representations.length; index++) mergeEntity(step, byRepresentation[index], entities[index]);
    } else if (errors.length === 0) {
      const failure = wholeFailure(fetch);
      byRepresentation.forEach((objects, index) => {
        if (!settled?.has(index)) for (const object of objects) markFields(object, step, failure);
      });
    }
  }
  // 3. An entity error's path starts with the step's field and the index of the representation.
  for (const error of errors) {
    const marker = markerOf(error);
    const path = error.path;
    const lookup = path ? lookups.find((l) => (l.step.alias ?? '_entities') === path[0]) : undefined;
    let placed = false;
    if (lookup && typeof path![1] === 'number') {
      const objects = lookup.byRepresentation[path![1]] as Data[] | undefined;
      if (objects === undefined) continue;
      // An entity answered null failed whole (a non-null field of it failed in the subgraph): every field
      // of the step it lacks stands for the failure, whichever field the error names.
      const entity = (answer?.[lookup.step.alias ?? '_entities'] as unknown[] | undefined)?.[path![1]];
      for (const object of objects) placed = (entity === null ? markFields(object, lookup.step, marker) : placeAt(object, path!.slice(2), lookup.step, marker)) || placed;
    } else {
      let concerned = false;
      for (const l of lookup ? [lookup] : lookups) {
        const settled = result.settled?.get(l.step);
        l.byRepresentation.forEach((objects, index) => {
          if (settled?.has(index)) return;
          concerned = true;
          for (const object of objects) placed = markFields(object, l.step, marker) || placed;
        });
      }
      if (!concerned) continue;
    }
    if (!placed) unplaced.push(marker);
  }
}

/** Merges one entity's answer into the objects standing for it; null (no entity) and anything not an object are not merged. */
function mergeEntity(step: FetchStep, objects: readonly Data[], entity: unknown): void {
  if (entity === null || typeof entity !== 'object') return;
  for (const object of objects) {
    // An object from an @interfaceObject learns its concrete type here.
    if (step.resolvesType && typeof (entity as Data).__typename === 'string') object.__typename = (entity as Data).__typename;
    mergeInto(object, entity as Data);
  }
}

/**
 * What tells a step's representations apart (its type name is the step's own): the value itself for
 * a one-leaf representation (`@key(fields: "id")`), the leaves' values length-prefixed for a flat one
 * (keys plus `@requires` leaves), the JSON text otherwise. Made per step: a heavy answer has
 * hundreds of representations, and their JSON text was a tenth of the plan runner's time.
 */
function identityOf(tree: RepresentationTree): (representation: Data) => unknown {
  const names: string[] = [];
  for (const [name, field] of tree) {
    if (field.fields.size > 0) return (representation) => JSON.stringify(representation);
    names.push(name);
  }
  if (names.length === 1) {
    const [name] = names;
    return (representation) => representation[name];
  }
  return (representation) => {
    let identity = '';
    for (const name of names) {
      const value = representation[name];
      identity += typeof value === 'string' ? `s${value.length}:${value}` : typeof value === 'object' && value !== null ? `o${JSON.stringify(value)}\u0000` : `${typeof value}${String(value)}\u0000`;
    }
    return identity;
  };
}

/** Whether the client's conditions want at least one of the step's own fields (GraphQL spec 3.13.2, 3.13.3). */
function anyIncluded(step: FetchStep, variables: Data | undefined, defaults: Readonly<Data>): boolean {
  for (const field of step.selection.fields.values()) if (isIncluded(field, variables, defaults)) return true;
  return false;
}

/** Whether one of the field's guards passes: each of its condition lists (the field's own, its fragments') lets it execute. */
function isIncluded(field: PlannedField, variables: Data | undefined, defaults: Readonly<Data>): boolean {
  if (!field.included) return true;
  const valueOf = (value: ValueNode): unknown => {
    if (value.kind !== Kind.VARIABLE) return valueFromASTUntyped(value);
    const name = value.name.value;
    return variables && name in variables ? variables[name] : defaults[name];
  };
  return field.included.some((guards) => guards.every((conditions) => includedByConditions(conditions, valueOf)));
}

function wholeFailure(fetch: Fetch): GraphQLError {
  return clientError('SUBGRAPH_ERROR', `subgraph "${fetch.subgraph}" answered without data`, { subgraph: fetch.subgraph });
}

/** The error without its subgraph path: the projection gives it the client's path and locations. */
function markerOf(error: GraphQLError): GraphQLError {
  return new GraphQLError(error.message, { extensions: error.extensions, originalError: error.originalError ?? undefined });
}

/** Sets the error on every field of the step that the object has no value for. */
function markFields(object: Data, step: FetchStep, marker: GraphQLError): boolean {
  let placed = false;
  for (const key of step.selection.fields.keys()) {
    if (object[key] === undefined || object[key] === null) {
      object[key] = marker;
      placed = true;
    }
  }
  return placed;
}

/** Walks `path` from `object`; the error goes at its end, or at the first null on the way (the null the failure bubbled to). */
function placeAt(object: Data, path: readonly (string | number)[], step: FetchStep, marker: GraphQLError): boolean {
  if (path.length === 0) return markFields(object, step, marker);
  let current: Record<string | number, unknown> = object;
  for (let i = 0; i < path.length; i++) {
    const segment = path[i];
    const next = current[segment];
    if (next === undefined || next === null) {
      current[segment] = marker;
      return true;
    }
    if (next instanceof Error || typeof next !== 'object') return false;
    current = next as Record<string | number, unknown>;
  }
  return false;
}
