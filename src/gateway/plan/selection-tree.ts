// The planned selection trees: adding fields and leaves at a response key, comparing arguments and conditions.
import { print, type ArgumentNode, type DirectiveNode, type FieldNode } from 'graphql';
import type { PlannedField, SelectionTree } from './plan-types.js';
import { PlanUnsupported } from './supergraph-model.js';

export const TYPENAME = '__typename';

export function emptyTree(): SelectionTree {
  return { fields: new Map(), fragments: new Map() };
}

/** Adds a field at a response key, or merges with the one already there; two different fields under one key cannot be planned. */
export function addField(at: SelectionTree, key: string, name: string, args: readonly ArgumentNode[], composite: boolean, directives: readonly DirectiveNode[] = [], subgraphKey?: string): PlannedField {
  const existing = at.fields.get(key);
  if (existing) {
    if (existing.name !== name || !sameArguments(existing.arguments, args) || existing.subgraphKey !== subgraphKey) throw new PlanUnsupported(`two different fields under the response key "${key}"`);
    // Wanted under different conditions (or also by the plan itself, for a key): always fetched.
    if (existing.directives.length > 0 && !sameDirectives(existing.directives, directives)) {
      // A new object under the same key (the map keeps its place): planned fields are never written.
      const merged: PlannedField = { ...existing, directives: [] };
      at.fields.set(key, merged);
      return merged;
    }
    return existing;
  }
  const field: PlannedField = { name, arguments: args, directives, selection: composite ? emptyTree() : undefined, subgraphKey };
  at.fields.set(key, field);
  return field;
}

export function addLeaf(at: SelectionTree, name: string, key = name): void {
  const existing = at.fields.get(key);
  if (existing && existing.name !== name) throw new PlanUnsupported(`two different fields under the response key "${key}"`);
  if (!existing) at.fields.set(key, { name, arguments: [], directives: [] });
  else if (existing.directives.length > 0) at.fields.set(key, { ...existing, directives: [] });
}

/** The `@skip`/`@include` of a response key's selections when they all carry the same ones; none otherwise. */
export function conditionsOf(nodes: readonly FieldNode[]): readonly DirectiveNode[] {
  const first = nodes[0].directives ?? [];
  if (first.length === 0) return first;
  return nodes.every((node) => sameDirectives(node.directives ?? [], first)) ? first : [];
}

export function sameDirectives(a: readonly DirectiveNode[], b: readonly DirectiveNode[]): boolean {
  return a === b || (a.length === b.length && a.every((directive, i) => print(directive) === print(b[i])));
}

export function sameArguments(a: readonly ArgumentNode[], b: readonly ArgumentNode[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  return a.every((argument, i) => argument.name.value === b[i].name.value && print(argument.value) === print(b[i].value));
}
