// The planned selection trees: adding fields and leaves at a response key, comparing arguments and conditions.
import { print, type ArgumentNode, type DirectiveNode, type FieldNode } from 'graphql';
import type { PlannedField, SelectionTree } from './plan-types.js';
import type { Guards } from '../../request/operation-analysis.js';
import { PlanUnsupported, type FieldSetTree } from './supergraph-model.js';

export const TYPENAME = '__typename';

export function emptyTree(): SelectionTree {
  return { fields: new Map(), fragments: new Map() };
}

/** A field to add to a selection tree. */
export interface FieldToAdd {
  /** The response key it goes under. */
  readonly key: string;
  readonly name: string;
  readonly args: readonly ArgumentNode[];
  /** Whether it has a selection of its own (an object, interface or union value). */
  readonly composite: boolean;
  /** Its directives (default none). */
  readonly directives?: readonly DirectiveNode[];
  /** The alias it is fetched under when its subgraph's type differs (PlannedField.subgraphKey). */
  readonly subgraphKey?: string;
  /** When the client's conditions want it (11); absent: always. */
  readonly included?: readonly Guards[];
}

/** Adds a field at a response key, or merges with the one already there; two different fields under one key cannot be planned. */
export function addField(at: SelectionTree, add: FieldToAdd): PlannedField {
  const { key, name, args, composite, directives = [], subgraphKey, included } = add;
  const existing = at.fields.get(key);
  if (existing) {
    if (existing.name !== name || !sameArguments(existing.arguments, args) || existing.subgraphKey !== subgraphKey) throw new PlanUnsupported(`two different fields under the response key "${key}"`);
    let field = existing;
    // Wanted wherever any of its selections is (always, once one is always wanted).
    const wanted = existing.included && included ? [...existing.included, ...included.filter((g) => !existing.included!.includes(g))] : undefined;
    if (wanted?.length !== existing.included?.length) field = { ...field, included: wanted };
    // Wanted under different conditions (or also by the plan itself, for a key): always fetched,
    // with every other directive either selection carries.
    if (!sameDirectives(existing.directives, directives)) {
      const kept = sameDirectives(conditions(existing.directives), conditions(directives)) ? conditions(existing.directives) : [];
      const merged = [...kept, ...unionOf(others(existing.directives), others(directives))];
      if (!sameDirectives(merged, existing.directives)) field = { ...field, directives: merged };
    }
    // A new object under the same key (the map keeps its place): planned fields are never written.
    if (field !== existing) at.fields.set(key, field);
    return field;
  }
  const field: PlannedField = { name, arguments: args, directives, included, selection: composite ? emptyTree() : undefined, subgraphKey };
  at.fields.set(key, field);
  return field;
}

export function addLeaf(at: SelectionTree, name: string, key = name): void {
  const existing = at.fields.get(key);
  if (existing && existing.name !== name) throw new PlanUnsupported(`two different fields under the response key "${key}"`);
  if (!existing) at.fields.set(key, { name, arguments: [], directives: [] });
  else if (conditions(existing.directives).length > 0 || existing.included) at.fields.set(key, { ...existing, directives: others(existing.directives), included: undefined });
}

/**
 * The directives a response key's field is sent with: its `@skip`/`@include` when every selection of
 * the key carries the same ones (the subgraph evaluates them), and every other executable directive
 * any of them carries, once each (the subgraph that resolves the field implements it).
 */
export function conditionsOf(nodes: readonly FieldNode[]): readonly DirectiveNode[] {
  const first = sent(nodes[0]);
  if (nodes.length === 1 || first.length === 0 && nodes.every((node) => sent(node).length === 0)) return first;
  const shared = conditions(first);
  const kept = nodes.every((node) => sameDirectives(conditions(sent(node)), shared)) ? shared : [];
  let rest: readonly DirectiveNode[] = [];
  for (const node of nodes) rest = unionOf(rest, others(sent(node)));
  return [...kept, ...rest];
}

/** When either is wanted: every alternative of both, each once; always (undefined) when either is. */
export function anyOf(a: readonly Guards[] | undefined, b: readonly Guards[] | undefined): readonly Guards[] | undefined {
  if (!a || !b) return undefined;
  const added = b.filter((guards) => !a.some((known) => sameGuards(known, guards)));
  return added.length === 0 ? a : [...a, ...added];
}

/**
 * When both are wanted: an alternative of each, their condition lists one after the other, for
 * every pair (`(a or b) and c` is `(a and c) or (b and c)`); one of them when the other is always.
 */
export function allOf(a: readonly Guards[] | undefined, b: readonly Guards[] | undefined): readonly Guards[] | undefined {
  if (!a) return b;
  if (!b) return a;
  const pairs: Guards[] = [];
  for (const first of a) {
    for (const second of b) {
      const guards = [...first, ...second];
      if (!pairs.some((known) => sameGuards(known, guards))) pairs.push(guards);
    }
  }
  return pairs;
}

function sameGuards(a: Guards, b: Guards): boolean {
  return a === b || (a.length === b.length && a.every((list, i) => sameDirectives(list, b[i])));
}

/**
 * A field node's directives a subgraph may see: not `@stream`, a delivery hint the router answers
 * (the list comes whole), nor `@defer` (the router plans it: subgraphs never see it).
 */
function sent(node: FieldNode): readonly DirectiveNode[] {
  const directives = node.directives ?? [];
  return directives.some(isIncremental) ? directives.filter((d) => !isIncremental(d)) : directives;
}

function isIncremental(directive: DirectiveNode): boolean {
  return directive.name.value === 'stream' || directive.name.value === 'defer';
}

/** Whether a directive is `@skip` or `@include`. */
export function isCondition(directive: DirectiveNode): boolean {
  return directive.name.value === 'skip' || directive.name.value === 'include';
}

function conditions(directives: readonly DirectiveNode[]): readonly DirectiveNode[] {
  return directives.some((d) => !isCondition(d)) ? directives.filter(isCondition) : directives;
}

function others(directives: readonly DirectiveNode[]): readonly DirectiveNode[] {
  return directives.some(isCondition) ? directives.filter((d) => !isCondition(d)) : directives;
}

/** The directives of both lists, each printed form once, in order of first appearance. */
function unionOf(a: readonly DirectiveNode[], b: readonly DirectiveNode[]): readonly DirectiveNode[] {
  if (b.length === 0) return a;
  const seen = new Set(a.map((d) => print(d)));
  const added = b.filter((d) => !seen.has(print(d)) && seen.add(print(d)));
  return added.length === 0 ? a : [...a, ...added];
}

export function sameDirectives(a: readonly DirectiveNode[], b: readonly DirectiveNode[]): boolean {
  return a === b || (a.length === b.length && a.every((directive, i) => print(directive) === print(b[i])));
}

export function sameArguments(a: readonly ArgumentNode[], b: readonly ArgumentNode[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  return a.every((argument, i) => argument.name.value === b[i].name.value && print(argument.value) === print(b[i].value));
}

export function mergeTree(into: FieldSetTree, from: FieldSetTree): void {
  for (const [name, sub] of from) {
    const existing = into.get(name);
    if (existing) mergeTree(existing, sub);
    else into.set(name, new Map(sub));
  }
}
