// The planned selection trees: adding fields and leaves at a response key, comparing arguments, and combining the client's conditions.
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
  /** Its executable directives other than `@skip`/`@include` (default none). */
  readonly directives?: readonly DirectiveNode[];
  /** The alias it is fetched under when its subgraph's type differs (PlannedField.subgraphKey). */
  readonly subgraphKey?: string;
  /** When the client's conditions want it (11), which is also when it is sent (5); absent: always. */
  readonly included?: readonly Guards[];
}

/** Adds a field at a response key, or merges with the one already there; two different fields under one key cannot be planned. */
export function addField(at: SelectionTree, add: FieldToAdd): PlannedField {
  const { key, name, args, composite, directives = [], subgraphKey, included } = add;
  const existing = at.fields.get(key);
  if (existing) {
    if (existing.name !== name || !sameArguments(existing.arguments, args) || existing.subgraphKey !== subgraphKey) throw new PlanUnsupported(`two different fields under the response key "${key}"`);
    // Wanted (and sent) wherever any of its selections is: always, once one is always wanted; with
    // every other directive either selection carries.
    const wanted = anyOf(existing.included, included);
    const merged = unionOf(existing.directives, directives);
    if (wanted === existing.included && merged === existing.directives) return existing;
    // A new object under the same key (the map keeps its place): planned fields are never written.
    const field: PlannedField = { ...existing, directives: merged, included: wanted };
    at.fields.set(key, field);
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
  else if (existing.included) at.fields.set(key, { ...existing, included: undefined });
}

/**
 * The directives a response key's field is sent with besides its conditions: every executable
 * directive other than `@skip`/`@include` any selection of the key carries, once each (the subgraph
 * that resolves the field implements it). Its conditions, its own and its fragments', are its
 * `included` (11), which the document prints (5).
 */
export function directivesOf(nodes: readonly FieldNode[]): readonly DirectiveNode[] {
  let directives = others(sent(nodes[0]));
  for (let i = 1; i < nodes.length; i++) directives = unionOf(directives, others(sent(nodes[i])));
  return directives;
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
