// The merged answer tree of a plan run: finding the objects a step extends, their representations, and merging answers into them.
import { GraphQLError } from 'graphql';
import type { FieldSetTree } from './supergraph-model.js';
import type { FetchStep } from './plan-types.js';

type Data = Record<string, unknown>;

/**
 * Objects of `typeName` (or of any of `typeNames`, when given) found along `path` (list items walked
 * through), each once; `untyped` admits objects without `__typename` (at an object-typed position).
 */
export function collectObjects(value: unknown, path: readonly string[], depth: number, typeName: string, into: Set<Data>, untyped = false, typeNames?: ReadonlySet<string>): void {
  if (value === null || value === undefined || value instanceof Error || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const item of value) collectObjects(item, path, depth, typeName, into, untyped, typeNames);
    return;
  }
  const object = value as Data;
  if (depth === path.length) {
    const type = object.__typename;
    if (type === typeName || (untyped && type === undefined) || (typeNames !== undefined && typeNames.has(type as string))) into.add(object);
    return;
  }
  collectObjects(object[path[depth]], path, depth + 1, typeName, into, untyped, typeNames);
}

export function hasNullKey(object: Data, step: FetchStep): boolean {
  for (const field of step.keyFields) if (object[step.responseKeys?.get(field) ?? field] === null) return true;
  return false;
}

/**
 * The representation of an object: `__typename` and the fields of `tree`. A field that failed
 * (its error object stands in the tree) makes the entity unrepresentable: that error is returned.
 */
export function representationOf(object: Data, tree: FieldSetTree, typeName: string, responseKeys: ReadonlyMap<string, string> | undefined): Data | GraphQLError {
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
