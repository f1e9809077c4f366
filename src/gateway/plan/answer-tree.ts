// The merged answer tree of a plan run: finding the objects a step extends, their representations, and merging answers into them.
import { GraphQLError } from 'graphql';
import type { FetchStep, RepresentationTree } from './plan-types.js';
import type { FieldSetTree } from './supergraph-model.js';

type Data = Record<string, unknown>;

/** Which objects a walk of the merged tree collects. */
export interface ObjectsAt {
  /** The response keys down to them (list items are walked through). */
  readonly path: readonly string[];
  readonly typeName: string;
  /** Other `__typename`s that count as the type (an interface's implementations, 8). */
  readonly typeNames?: ReadonlySet<string>;
  /** Whether objects without `__typename` count (at an object-typed position). */
  readonly untyped?: boolean;
}

/** Objects of the position's type found along its path, each once. */
export function collectObjects(value: unknown, at: ObjectsAt, into: Set<Data>): void {
  collectFrom(value, at, 0, into);
}

function collectFrom(value: unknown, at: ObjectsAt, depth: number, into: Set<Data>): void {
  if (value === null || value === undefined || value instanceof Error || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const item of value) collectFrom(item, at, depth, into);
    return;
  }
  const object = value as Data;
  if (depth === at.path.length) {
    const type = object.__typename;
    if (type === at.typeName || (at.untyped === true && type === undefined) || (at.typeNames !== undefined && at.typeNames.has(type as string))) into.add(object);
    return;
  }
  collectFrom(object[at.path[depth]], at, depth + 1, into);
}

/**
 * Whether the object is no entity, so nothing looks it up and the step's fields stay null without an
 * error: a field of its key is null, or missing because the step that was to find it (a hop through
 * another subgraph's key) found no entity there. A failed key field (its error object) is not this:
 * representationOf reports it. Key fields are read from where the plan fetched them, inside their
 * objects and list items.
 */
export function lacksKey(object: Data, step: FetchStep): boolean {
  return lacksFields(object, step.keyFields, step.representation);
}

function lacksFields(object: Data, tree: FieldSetTree, where: RepresentationTree | undefined): boolean {
  for (const [name, sub] of tree) {
    if (name === '__typename') continue;
    const field = where?.get(name);
    const value = object[field?.key ?? name];
    if (value === null || value === undefined) return true;
    if (sub.size === 0 || typeof value !== 'object' || value instanceof Error) continue;
    const items: unknown[] = Array.isArray(value) ? value : [value];
    for (const item of items) {
      if (item === null || item === undefined) return true;
      if (typeof item === 'object' && !(item instanceof Error) && lacksFields(item as Data, sub, field?.fields)) return true;
    }
  }
  return false;
}

/**
 * The representation of an object: `__typename` and the fields of `tree`, each under its name (read
 * from the response key the plan fetched it under). A field that failed (its error object stands in
 * the tree) makes the entity unrepresentable: that error is returned.
 */
export function representationOf(object: Data, tree: RepresentationTree, typeName: string): Data | GraphQLError {
  const representation: Data = { __typename: typeName };
  return projectFields(object, tree, representation) ?? representation;
}

/** Copies the fields of `tree` from `object` into `into`, by name; returns the error object of a failed one instead. */
function projectFields(object: Data, tree: RepresentationTree, into: Data): GraphQLError | undefined {
  for (const [name, field] of tree) {
    const value = object[field.key];
    if (value === undefined) continue;
    const projected = projectValue(value, field.fields);
    if (projected instanceof GraphQLError) return projected;
    into[name] = projected;
  }
  return undefined;
}

/** A field's value cut down to `tree` (lists item by item, at any depth), or the error object standing in it. */
function projectValue(value: unknown, tree: RepresentationTree): unknown {
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
export function mergeInto(target: Data, source: Data): void {
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
