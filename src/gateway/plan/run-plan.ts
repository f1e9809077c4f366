// Runs a query plan: each step's subgraph call once its dependencies answered, every answer merged into one tree.
import { GraphQLError, Kind, OperationTypeNode, valueFromASTUntyped, type ExecutionResult } from 'graphql';
import type { ExecutionRequest, Executor } from '@graphql-tools/utils';
import type { FieldSetTree } from './supergraph-model.js';
import { clientError } from '../../errors/client-error.js';
import { includedByConditions } from '../../plugins/cost/cost-rules.js';
import type { Fetch, FetchStep, PlannedField, QueryPlan, SelectionTree } from './build-plan.js';

type Data = Record<string, unknown>;

export interface PlanRun {
  /** The merged answers: response keys as the client asked them, plus the keys and type names the plan added. */
  data: Data;
  /** Subgraph errors that no field of the answer stands for (a subgraph reported an error beside its data). */
  unplaced: GraphQLError[];
}

/**
 * 1. A step starts as soon as every step it depends on has merged its answer: independent steps run
 *    in parallel, and an entity step waits only for the steps that find its objects or provide its
 *    `@requires` fields.
 * 2. An entity step walks the merged tree along its path (through list items), keeps the objects of
 *    its type, and sends one representation per distinct entity (keys and required fields).
 * 3. Answers are merged into the objects they extend. A failed field gets its error object in place
 *    of a value: the projection over the tree (graphql-js execution) then reports it at the field's
 *    own client path, and nulls propagate by the schema's nullability (GraphQL spec 6.4.4).
 * 4. A field the authorization decision denies gets the FORBIDDEN error the same way.
 */
export async function runPlan(plan: QueryPlan, executorOf: (graph: string) => Executor, variables: Data | undefined, context: unknown, deniedError: (coordinate: string) => Error): Promise<PlanRun> {
  const data: Data = {};
  const unplaced: GraphQLError[] = [];
  const running: Promise<void>[] = [];
  for (const fetch of plan.fetches) {
    const run = () => (fetch.steps[0].entityType === undefined ? runRootFetch(fetch, executorOf(fetch.graph), data, variables, context, unplaced) : runEntityFetch(fetch, executorOf(fetch.graph), data, variables, plan.variableDefaults, context, unplaced));
    running[fetch.id] = fetch.dependsOn.length === 0 ? run() : Promise.all(fetch.dependsOn.map((d) => running[d.id])).then(run);
  }
  await Promise.all(running);
  // 4. Denied fields last: the plan may have fetched one it needed itself (a key), which the caller still may not read.
  for (const denial of plan.denied) {
    const objects = new Set<Data>();
    collectObjects(data, denial.path, 0, denial.typeName, objects, true);
    const error = deniedError(denial.coordinate);
    for (const object of objects) object[denial.key] = error;
  }
  return { data, unplaced };
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

async function runRootFetch(fetch: Fetch, executor: Executor, data: Data, variables: Data | undefined, context: unknown, unplaced: GraphQLError[]): Promise<void> {
  const step = fetch.steps[0];
  const result = await call(executor, fetch, fetchVariables(fetch, variables, {}), context);
  const answer = result.data as Data | null | undefined;
  if (answer) for (const key of Object.keys(answer)) data[key] = answer[key];
  const errors = result.errors ?? [];
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
  byRepresentation: Data[][];
}

async function runEntityFetch(fetch: Fetch, executor: Executor, data: Data, variables: Data | undefined, defaults: Readonly<Data>, context: unknown, unplaced: GraphQLError[]): Promise<void> {
  const lookups: Lookup[] = [];
  const requestVariables = fetchVariables(fetch, variables, {});
  for (const step of fetch.steps) {
    // A look-up whose every field the client's @skip/@include leaves out is not made at all.
    if (!anyIncluded(step, variables, defaults)) continue;
    const found = new Set<Data>();
    collectObjects(data, step.path, 0, step.entityType!, found);
    // 2. One representation per distinct entity; every object standing for it gets its answer.
    const representations: Data[] = [];
    const byRepresentation: Data[][] = [];
    const indexOf = new Map<string, number>();
    const targets: Data[] = [];
    for (const target of found) {
      // An object whose key is null is no entity (nothing to look up): its fields stay null.
      if (hasNullKey(target, step)) continue;
      const representation = representationOf(target, step.representation, step.lookupType ?? step.entityType!, step.responseKeys);
      if (representation instanceof GraphQLError) {
        markFields(target, step, representation);
        continue;
      }
      targets.push(target);
      const key = JSON.stringify(representation);
      let index = indexOf.get(key);
      if (index === undefined) {
        index = representations.length;
        indexOf.set(key, index);
        representations.push(representation);
        byRepresentation.push([]);
      }
      byRepresentation[index].push(target);
    }
    requestVariables[step.representationsVariable!] = representations;
    lookups.push({ step, targets, byRepresentation });
  }
  if (lookups.every((l) => l.targets.length === 0)) return;
  for (const step of fetch.steps) if (!(step.representationsVariable! in requestVariables)) requestVariables[step.representationsVariable!] = [];
  const result = await call(executor, fetch, requestVariables, context);
  const answer = result.data as Data | null | undefined;
  for (const { step, targets, byRepresentation } of lookups) {
    const entities = answer?.[step.alias ?? '_entities'];
    if (Array.isArray(entities)) {
      byRepresentation.forEach((objects, index) => {
        const entity = entities[index] as Data | null;
        if (entity === null || typeof entity !== 'object') return;
        for (const object of objects) {
          // An object from an @interfaceObject learns its concrete type here.
          if (step.resolvesType && typeof entity.__typename === 'string') object.__typename = entity.__typename;
          mergeInto(object, entity);
        }
      });
    } else if (!result.errors?.length) {
      const failure = wholeFailure(fetch);
      for (const object of targets) markFields(object, step, failure);
    }
  }
  // 3. An entity error's path starts with the step's field and the representation's index.
  for (const error of result.errors ?? []) {
    const marker = markerOf(error as GraphQLError);
    const path = error.path;
    const lookup = path ? lookups.find((l) => (l.step.alias ?? '_entities') === path[0]) : undefined;
    let placed = false;
    if (lookup && typeof path![1] === 'number') {
      for (const object of lookup.byRepresentation[path![1]] ?? []) placed = placeAt(object, path!.slice(2), lookup.step, marker) || placed;
    } else {
      for (const l of lookup ? [lookup] : lookups) for (const object of l.targets) placed = markFields(object, l.step, marker) || placed;
    }
    if (!placed) unplaced.push(marker);
  }
}

/** Whether the client's conditions keep at least one of the step's own fields (GraphQL spec 3.13.2, 3.13.3). */
function anyIncluded(step: FetchStep, variables: Data | undefined, defaults: Readonly<Data>): boolean {
  for (const field of step.selection.fields.values()) if (isIncluded(field, variables, defaults)) return true;
  return false;
}

function isIncluded(field: PlannedField, variables: Data | undefined, defaults: Readonly<Data>): boolean {
  return includedByConditions(field.directives, (value) => {
    if (value.kind !== Kind.VARIABLE) return valueFromASTUntyped(value);
    const name = value.name.value;
    return variables && name in variables ? variables[name] : defaults[name];
  });
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

/** Objects of `typeName` found along `path` (list items walked through), each once; `untyped` admits objects without `__typename` (at an object-typed position). */
function collectObjects(value: unknown, path: readonly string[], depth: number, typeName: string, into: Set<Data>, untyped = false): void {
  if (value === null || value === undefined || value instanceof Error || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const item of value) collectObjects(item, path, depth, typeName, into, untyped);
    return;
  }
  const object = value as Data;
  if (depth === path.length) {
    if (object.__typename === typeName || (untyped && object.__typename === undefined)) into.add(object);
    return;
  }
  collectObjects(object[path[depth]], path, depth + 1, typeName, into, untyped);
}

function hasNullKey(object: Data, step: FetchStep): boolean {
  for (const field of step.keyFields) if (object[step.responseKeys?.get(field) ?? field] === null) return true;
  return false;
}

/**
 * The representation of an object: `__typename` and the fields of `tree`. A field that failed
 * (its error object stands in the tree) makes the entity unrepresentable: that error is returned.
 */
function representationOf(object: Data, tree: FieldSetTree, typeName: string, responseKeys: ReadonlyMap<string, string> | undefined): Data | GraphQLError {
  const representation: Data = { __typename: typeName };
  return projectFields(object, tree, representation, responseKeys) ?? representation;
}

/** Copies the fields of `tree` from `object` into `into` (read under `responseKeys` where the plan put them elsewhere); returns the error object of a failed one instead. */
function projectFields(object: Data, tree: FieldSetTree, into: Data, responseKeys?: ReadonlyMap<string, string>): GraphQLError | undefined {
  for (const [name, sub] of tree) {
    const key = responseKeys?.get(name) ?? name;
    if (object[key] === undefined) continue;
    const value = projectValue(object[key], sub);
    if (value instanceof GraphQLError) return value;
    into[name] = value;
  }
  return undefined;
}

/** A field's value cut down to `tree` (lists item by item, at any depth), or the error object standing in it. */
function projectValue(value: unknown, tree: FieldSetTree): unknown {
  if (value instanceof GraphQLError || value === null || typeof value !== 'object' || tree.size === 0) return value;
  if (Array.isArray(value)) {
    const items: unknown[] = [];
    for (const item of value) {
      const projected = projectValue(item, tree);
      if (projected instanceof GraphQLError) return projected;
      items.push(projected);
    }
    return items;
  }
  const projected: Data = {};
  return projectFields(value as Data, tree, projected) ?? projected;
}

/** Merges an entity's answer into the object it extends: new fields are added, nested objects and lists merged item by item. */
function mergeInto(target: Data, source: Data): void {
  for (const key of Object.keys(source)) {
    const value = source[key];
    const existing = target[key];
    if (existing === undefined) target[key] = value;
    else if (existing !== null && value !== null && typeof existing === 'object' && typeof value === 'object' && !(existing instanceof Error)) {
      if (Array.isArray(existing) && Array.isArray(value)) {
        const length = Math.min(existing.length, value.length);
        for (let i = 0; i < length; i++) {
          const a = existing[i];
          const b = value[i];
          if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object' && !(a instanceof Error)) mergeInto(a as Data, b as Data);
        }
      } else if (!Array.isArray(existing) && !Array.isArray(value)) mergeInto(existing as Data, value as Data);
    }
  }
}
