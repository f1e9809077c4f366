// Runs a query plan: each step's subgraph call once its dependencies answered, every answer merged into one tree.
import { GraphQLError, Kind, OperationTypeNode, valueFromASTUntyped, type ExecutionResult, type ValueNode } from 'graphql';
import type { ExecutionRequest, Executor } from '@graphql-tools/utils';
import { clientError } from '../../errors/client-error.js';
import { includedByConditions } from '../../request/included-by-conditions.js';
import type { Fetch, FetchStep, PlannedField, QueryPlan, SelectionTree } from './build-plan.js';
import type { RepresentationTree } from './plan-types.js';
import { parsePart, UNREADABLE, type RequestSections, type SectionRead, type UsablePart } from './section-cache.js';
import { collectObjects, lacksKey, mergeInto, representationOf } from './answer-tree.js';
import { isUnanswered, type GraphQLFormattedErrorLike } from '../../errors/unanswered.js';

type Data = Record<string, unknown>;

/**
 * What one request's run of a plan is given: the request-scoped things every fetch reads. The
 * client's signal and deadline travel in the GraphQL context (its request state), which every
 * subgraph call receives.
 */
export interface RunRequest {
  /** The executor of each subgraph, by `join__Graph` value. */
  readonly executorOf: (graph: string) => Executor;
  /** The request's variables (undefined: none given). */
  readonly variables: Data | undefined;
  /** The request's GraphQL context: the request state (signal, deadline, skipped subgraphs) for the subgraph calls. */
  readonly context: unknown;
  /** The error a denied field is answered with. */
  readonly deniedError: (coordinate: string) => Error;
  /** The section cache as this request may use it (absent: every part is fetched). */
  readonly sections: RequestSections | undefined;
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
 * 5. With the section cache (section-cache.ts), a part it holds fresh does not go out: a root fetch
 *    whole, an entity look-up per entity (only the misses are sent). Answers without errors are stored.
 * 6. A fetch that failed because its subgraph could not answer is answered from stale copies where
 *    the cache keeps one (noted in the request scope: the answer is labelled STALE, never cached).
 */
export async function runPlan(plan: QueryPlan, request: RunRequest): Promise<PlanRun> {
  const run: PlanRunContext = { ...request, defaults: plan.variableDefaults, data: {}, unplaced: [] };
  const running: Promise<void>[] = [];
  for (const fetch of plan.fetches) {
    const start = () => (fetch.steps[0].entityType === undefined ? runRootFetch(fetch, run) : runEntityFetch(fetch, run));
    running[fetch.id] = fetch.dependsOn.length === 0 ? start() : Promise.all(fetch.dependsOn.map((d) => running[d.id])).then(start);
  }
  await Promise.all(running);
  // 4. Denied fields last: the plan may have fetched one it needed itself (a key), which the caller still may not read.
  for (const denial of plan.denied) {
    const objects = new Set<Data>();
    collectObjects(run.data, { path: denial.path, typeName: denial.typeName, typeNames: denial.objectTypes, untyped: true }, objects);
    const error = request.deniedError(denial.coordinate);
    for (const object of objects) object[denial.key] = error;
  }
  return { data: run.data, unplaced: run.unplaced };
}

function fetchVariables(fetch: Fetch, variables: Data | undefined, into: Data): Data {
  if (variables) for (const name of fetch.variableNames) if (name in variables) into[name] = variables[name];
  return into;
}

/**
 * One subgraph call. The executors turn every failure of a call into an answer with errors; should
 * one throw all the same, its error stands for the fetch's fields like any other, so a plan never
 * fails as a whole (and a mutation is never run a second time by anything).
 */
async function call(executor: Executor, fetch: Fetch, variables: Data, context: unknown): Promise<ExecutionResult> {
  const request: ExecutionRequest = { document: fetch.document, variables, context, operationType: fetch.operation === 'mutation' ? OperationTypeNode.MUTATION : OperationTypeNode.QUERY };
  let result: ExecutionResult;
  try {
    result = (await executor(request)) as ExecutionResult;
  } catch (error) {
    const failure = error instanceof GraphQLError ? error : clientError('SUBGRAPH_ERROR', `subgraph "${fetch.subgraph}" failed`, { subgraph: fetch.subgraph });
    return { errors: [failure] };
  }
  if (fetch.renamed && result.data) restoreKeys(result.data, fetch);
  return result;
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

async function runRootFetch(fetch: Fetch, run: PlanRunContext): Promise<void> {
  const { data, variables, context, unplaced, sections } = run;
  const executor = run.executorOf(fetch.graph);
  const step = fetch.steps[0];
  // 5. A root fetch is one part: answered from the cache whole, or fetched whole.
  const part = sections?.usable(fetch, step, 1);
  let key: string | undefined;
  let read: SectionRead | undefined;
  if (part) {
    key = sections!.keyOf(fetch, part);
    const reads = sections!.read(fetch, step, part, [key]);
    [read] = reads instanceof Promise ? await reads : reads;
    if (read.fresh !== undefined) {
      mergeInto(data, read.fresh as Data);
      return;
    }
  }
  const result = await call(executor, fetch, fetchVariables(fetch, variables, {}), context);
  const errors = result.errors ?? [];
  if (part && read?.stale && sections!.staleAllowed(fetch) && failedUnanswered(errors)) {
    const value = parsePart(read.stale.json);
    if (value !== UNREADABLE) {
      mergeInto(data, value as Data);
      sections!.noteStale(fetch, step, 1, read.stale.ageMs, String(errors[0].extensions?.code));
      return;
    }
  }
  const answer = result.data as Data | null | undefined;
  if (part && answer && errors.length === 0) {
    sections!.write(part, [[key!, answer]]);
    sections!.noteFetched(part);
  }
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
  /** Indices of the representations sent (those the cache did not answer), in the order sent. */
  sent: number[];
  /** The step's cacheable part for this request, with each representation's key and what the cache held. */
  part?: UsablePart;
  keys?: string[];
  reads?: SectionRead[];
  /** Indices of sent representations that a stale copy answered after the subgraph failed. */
  served?: Set<number>;
}

async function runEntityFetch(fetch: Fetch, run: PlanRunContext): Promise<void> {
  const { data, variables, defaults, context, unplaced, sections } = run;
  const executor = run.executorOf(fetch.graph);
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
    lookups.push({ step, targets, representations, byRepresentation, sent: representations.map((_, index) => index) });
  }
  if (lookups.every((l) => l.targets.length === 0)) return;
  // 5. Entities the cache holds fresh are answered from it; only the others are sent.
  if (sections) {
    const reading = readFromCache(fetch, lookups, sections);
    if (reading) await reading;
  }
  if (lookups.every((l) => l.sent.length === 0)) return;
  const requestVariables = fetchVariables(fetch, variables, {});
  for (const { step, representations, sent } of lookups) requestVariables[step.representationsVariable!] = sent.map((index) => representations[index]);
  for (const step of fetch.steps) if (!(step.representationsVariable! in requestVariables)) requestVariables[step.representationsVariable!] = [];
  const result = await call(executor, fetch, requestVariables, context);
  const answer = result.data as Data | null | undefined;
  const errors = result.errors ?? [];
  const unanswered = failedUnanswered(errors);
  for (const lookup of lookups) {
    const { step, byRepresentation, sent } = lookup;
    const entities = answer?.[step.alias ?? '_entities'];
    // 6. A subgraph that could not answer: stale copies stand in for the entities that have one.
    if (unanswered && lookup.reads && sections!.staleAllowed(fetch)) serveStale(fetch, lookup, sections!, String(errors[0].extensions?.code));
    if (Array.isArray(entities)) {
      if (lookup.part && errors.length === 0) storeAnswers(lookup, entities, sections!);
      sent.forEach((original, index) => {
        const entity = entities[index] as Data | null;
        if (entity === null || typeof entity !== 'object') return;
        for (const object of byRepresentation[original]) {
          // An object from an @interfaceObject learns its concrete type here.
          if (step.resolvesType && typeof entity.__typename === 'string') object.__typename = entity.__typename;
          mergeInto(object, entity);
        }
      });
    } else if (errors.length === 0) {
      const failure = wholeFailure(fetch);
      for (const original of sent) for (const object of byRepresentation[original]) markFields(object, step, failure);
    }
  }
  // 3. An entity error's path starts with the step's field and the index of the representation sent.
  for (const error of errors) {
    const marker = markerOf(error as GraphQLError);
    const path = error.path;
    const lookup = path ? lookups.find((l) => (l.step.alias ?? '_entities') === path[0]) : undefined;
    let placed = false;
    if (lookup && typeof path![1] === 'number') {
      const original = lookup.sent[path![1]];
      // An entity a stale copy stood in for is answered: its failure is not reported.
      if (original === undefined || lookup.served?.has(original)) continue;
      for (const object of lookup.byRepresentation[original]) placed = placeAt(object, path!.slice(2), lookup.step, marker) || placed;
    } else {
      const concerned = (lookup ? [lookup] : lookups).filter((l) => l.sent.some((original) => !l.served?.has(original)));
      if (concerned.length === 0) continue;
      for (const l of concerned) for (const original of l.sent) if (!l.served?.has(original)) for (const object of l.byRepresentation[original]) placed = markFields(object, l.step, marker) || placed;
    }
    if (!placed) unplaced.push(marker);
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

/**
 * Looks up every step's representations at once; fresh copies are merged, the rest stay to be sent.
 * A promise only when the store must ask Redis: from memory alone the look-up takes no turn of the event loop.
 */
function readFromCache(fetch: Fetch, lookups: Lookup[], sections: RequestSections): Promise<void> | undefined {
  let reading: Promise<void>[] | undefined;
  for (const lookup of lookups) {
    if (lookup.representations.length === 0) continue;
    const part = sections.usable(fetch, lookup.step, lookup.representations.length);
    if (!part) continue;
    lookup.part = part;
    lookup.keys = lookup.representations.map((representation) => sections.keyOf(fetch, part, representation));
    const reads = sections.read(fetch, lookup.step, part, lookup.keys, lookup.representations);
    if (reads instanceof Promise) (reading ??= []).push(reads.then((answered) => useReads(lookup, part, answered, sections)));
    else useReads(lookup, part, reads, sections);
  }
  return reading && Promise.all(reading).then(() => undefined);
}

function useReads(lookup: Lookup, part: UsablePart, reads: SectionRead[], sections: RequestSections): void {
  lookup.reads = reads;
  const sent: number[] = [];
  reads.forEach((read, index) => {
    if (read.fresh === undefined) {
      sent.push(index);
      return;
    }
    for (const object of lookup.byRepresentation[index]) {
      if (lookup.step.resolvesType && typeof (read.fresh as Data).__typename === 'string') object.__typename = (read.fresh as Data).__typename;
      if (read.fresh !== null) mergeInto(object, read.fresh as Data);
    }
  });
  lookup.sent = sent;
  if (sent.length > 0) sections.noteFetched(part);
}

/** Stores each answered entity under its key; none when the answer has any error (a pathless one may concern any). */
function storeAnswers(lookup: Lookup, entities: unknown[], sections: RequestSections): void {
  const entries: [string, unknown][] = [];
  lookup.sent.forEach((original, index) => {
    const entity = entities[index];
    if (entity !== undefined) entries.push([lookup.keys![original], entity]);
  });
  sections.write(lookup.part!, entries);
}

/** Merges stale copies into the objects of the sent entities that have one; those are then answered. */
function serveStale(fetch: Fetch, lookup: Lookup, sections: RequestSections, failureCode: string): void {
  let oldest = 0;
  const served = new Set<number>();
  for (const original of lookup.sent) {
    const stale = lookup.reads![original]?.stale;
    if (!stale) continue;
    const value = parsePart(stale.json);
    if (value === UNREADABLE) continue;
    served.add(original);
    oldest = Math.max(oldest, stale.ageMs);
    for (const object of lookup.byRepresentation[original]) if (value !== null) mergeInto(object, value as Data);
  }
  if (served.size === 0) return;
  lookup.served = served;
  sections.noteStale(fetch, lookup.step, served.size, oldest, failureCode);
}

/** Whether a call failed because its subgraph could not answer (every error says so): the case stale copies are kept for. */
function failedUnanswered(errors: readonly GraphQLFormattedErrorLike[]): boolean {
  return errors.length > 0 && errors.every((error) => isUnanswered(error));
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
