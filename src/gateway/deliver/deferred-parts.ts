// A document's deferred fragments as parts of their own: the document without them (a marker in each one's place), and each one's selections.
import { Kind, valueFromASTUntyped, type DirectiveNode, type DocumentNode, type FieldNode, type FragmentDefinitionNode, type InlineFragmentNode, type NamedTypeNode, type SelectionNode, type SelectionSetNode } from 'graphql';
import { DEFER } from '../../request/operation-analysis.js';
import { analyseOperation } from '../../request/operation-analysis.js';

type Data = Record<string, unknown>;

/** One `@defer` of the document (incremental delivery RFC): delivered in a payload of its own once its fetches are done. */
export interface DeferredPart {
  /** Its index in `DeferSplit.parts`, and the number in its marker's response key. */
  readonly id: number;
  readonly label: string | undefined;
  /** The `@defer` directive: the query plan's guard of its fields (operation-analysis.ts) is this node. */
  readonly directive: DirectiveNode;
  /** The fragment's type condition (a spread's: its fragment's); undefined: the type where it stands. */
  readonly typeCondition: string | undefined;
  /** What the part selects, its own deferred parts replaced by markers. */
  readonly selectionSet: SelectionSetNode;
}

/** A document split for incremental delivery, for one set of `@defer(if:)` values. */
export interface DeferSplit {
  /**
   * The operation and its fragments with every active deferred fragment replaced by a marker: an
   * inline fragment with the same type condition and `@skip`/`@include`, selecting `__typename`
   * under `MARKER_PREFIX + id`. Projected like any document, it answers the initial payload, and a
   * marker in the answer says where a deferred part applies (its parent answered, its conditions
   * passed, its type matched): `takeMarkers` reads and removes them.
   */
  readonly document: DocumentNode;
  readonly parts: readonly DeferredPart[];
  /** Some part selects introspection, which only graphql-js answers: the query is answered in one payload. */
  readonly introspective: boolean;
}

/** The response key prefix of a marker: names starting with `__` are the spec's own (2.1.9), never a client's alias in practice. */
export const MARKER_PREFIX = '__sy_defer_';

/** Splits per document and operation, by the values of the `@defer(if:)` conditions. */
const splits = new WeakMap<DocumentNode, Map<string, DeferSplit | null>>();

/**
 * The split of a document's operation for these variables, or undefined when no `@defer` is active
 * (none written, or each one's `if` false): the answer is then one payload. Memoised per document,
 * operation and the values of the `if` arguments, so a request pays a look-up.
 * 1. A `@defer` on an inline fragment or a fragment spread is active unless its `if` is false
 *    (a literal, or a variable's value or default; absent: true).
 * 2. The parts are made in document order, the fragment definitions' after the operation's; a
 *    deferred fragment inside a named fragment is one part wherever the fragment is spread (each
 *    place it applies gets a delivery of its own, `takeMarkers`).
 * 3. A deferred part inside another is a marker in the outer part's selections: it is found when
 *    the outer part is delivered, never before.
 */
export function splitDeferred(document: DocumentNode, operationName: string | null | undefined, variables: Readonly<Data> | undefined): DeferSplit | undefined {
  const analysis = analyseOperation(document, operationName);
  const operation = analysis.operation;
  if (!operation || operation.operation === 'subscription') return undefined;
  const directives = deferDirectivesOf(document);
  if (directives.length === 0) return undefined;
  const defaults = analysis.variableDefaults;
  const active = directives.map((directive) => isActive(directive, variables, defaults));
  if (!active.includes(true)) return undefined;
  let byKey = splits.get(document);
  if (!byKey) splits.set(document, (byKey = new Map()));
  const key = `${operationName ?? ''}\u0000${active.map((on) => (on ? 1 : 0)).join('')}`;
  let split = byKey.get(key);
  if (split === undefined) {
    const on = new Set(directives.filter((_, index) => active[index]));
    split = makeSplit(document, operation, analysis.fragments, on);
    byKey.set(key, split);
  }
  return split ?? undefined;
}

/** Every `@defer` on a fragment of the document, in document order (memoised). */
const deferDirectives = new WeakMap<DocumentNode, DirectiveNode[]>();

function deferDirectivesOf(document: DocumentNode): DirectiveNode[] {
  let found = deferDirectives.get(document);
  if (found) return found;
  found = [];
  const walk = (set: SelectionSetNode): void => {
    for (const selection of set.selections) {
      if (selection.kind !== Kind.FIELD) {
        const directive = selection.directives?.find((d) => d.name.value === DEFER);
        if (directive) found!.push(directive);
      }
      if (selection.kind !== Kind.FRAGMENT_SPREAD && selection.selectionSet) walk(selection.selectionSet);
    }
  };
  for (const definition of document.definitions) {
    if (definition.kind === Kind.OPERATION_DEFINITION || definition.kind === Kind.FRAGMENT_DEFINITION) walk(definition.selectionSet);
  }
  deferDirectives.set(document, found);
  return found;
}

/** 1. Whether a `@defer` defers: its `if` is not false. */
export function isActive(directive: DirectiveNode, variables: Readonly<Data> | undefined, defaults: Readonly<Data>): boolean {
  const condition = directive.arguments?.find((argument) => argument.name.value === 'if')?.value;
  if (!condition) return true;
  if (condition.kind !== Kind.VARIABLE) return valueFromASTUntyped(condition) !== false;
  const name = condition.name.value;
  const value = variables && name in variables ? variables[name] : defaults[name];
  return value !== false;
}

function makeSplit(document: DocumentNode, operation: NonNullable<ReturnType<typeof analyseOperation>['operation']>, fragments: ReadonlyMap<string, FragmentDefinitionNode>, on: ReadonlySet<DirectiveNode>): DeferSplit | null {
  const parts: DeferredPart[] = [];
  const partOf = new Map<DirectiveNode, DeferredPart>();

  const transform = (set: SelectionSetNode): SelectionSetNode => {
    let changed = false;
    const selections = set.selections.map((selection): SelectionNode => {
      const next = transformSelection(selection);
      if (next !== selection) changed = true;
      return next;
    });
    return changed ? { ...set, selections } : set;
  };

  const transformSelection = (selection: SelectionNode): SelectionNode => {
    if (selection.kind === Kind.FIELD) {
      if (!selection.selectionSet) return selection;
      const below = transform(selection.selectionSet);
      return below === selection.selectionSet ? selection : { ...selection, selectionSet: below };
    }
    const directive = selection.directives?.find((d) => d.name.value === DEFER && on.has(d));
    if (!directive) {
      if (selection.kind === Kind.FRAGMENT_SPREAD) return selection;
      const below = transform(selection.selectionSet);
      return below === selection.selectionSet ? selection : { ...selection, selectionSet: below };
    }
    const others = (selection.directives ?? []).filter((d) => d !== directive);
    let part = partOf.get(directive);
    if (!part) {
      // 2. Numbered before the parts inside it, so parts go in document order.
      const id = parts.length;
      parts.push(undefined as unknown as DeferredPart);
      const selectionSet: SelectionSetNode =
        selection.kind === Kind.INLINE_FRAGMENT ? transform(selection.selectionSet) : { kind: Kind.SELECTION_SET, selections: [{ ...selection, directives: [] }] };
      const typeCondition = selection.kind === Kind.INLINE_FRAGMENT ? selection.typeCondition?.name.value : fragments.get(selection.name.value)?.typeCondition.name.value;
      const label = directive.arguments?.find((argument) => argument.name.value === 'label')?.value;
      part = { id, label: label?.kind === Kind.STRING ? label.value : undefined, directive, typeCondition, selectionSet };
      partOf.set(directive, part);
      parts[id] = part;
    }
    return markerFragmentOf(part, others);
  };

  // The parts' selections stay in the document under `@skip(if: true)`: never collected for the
  // first payload, but seen by whatever reads the document's variables (the projection's
  // `@skip`/`@include` variables, which a part's own conditions use).
  const kept = (set: SelectionSetNode): SelectionSetNode => {
    const before = parts.length;
    const transformed = transform(set);
    if (parts.length === before) return transformed;
    const carried: InlineFragmentNode[] = [];
    for (let id = before; id < parts.length; id++) carried.push({ kind: Kind.INLINE_FRAGMENT, directives: [ALWAYS_SKIPPED], selectionSet: parts[id].selectionSet });
    return { ...transformed, selections: [...transformed.selections, ...carried] };
  };

  const definitions = [
    { ...operation, selectionSet: kept(operation.selectionSet) },
    ...[...fragments.values()].map((fragment) => {
      const selectionSet = kept(fragment.selectionSet);
      return selectionSet === fragment.selectionSet ? fragment : { ...fragment, selectionSet };
    }),
  ];
  if (parts.length === 0) return null;
  return { document: { ...document, definitions }, parts, introspective: parts.some((part) => selectsIntrospection(part.selectionSet, fragments)) };
}

const ALWAYS_SKIPPED: DirectiveNode = {
  kind: Kind.DIRECTIVE,
  name: { kind: Kind.NAME, value: 'skip' },
  arguments: [{ kind: Kind.ARGUMENT, name: { kind: Kind.NAME, value: 'if' }, value: { kind: Kind.BOOLEAN, value: true } }],
};

/** Whether a part selects `__schema` or `__type` (through its fragments too): graphql-js answers those, in one payload. */
function selectsIntrospection(set: SelectionSetNode, fragments: ReadonlyMap<string, FragmentDefinitionNode>, seen = new Set<string>()): boolean {
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) {
      if (selection.name.value === '__schema' || selection.name.value === '__type') return true;
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      if (selectsIntrospection(selection.selectionSet, fragments, seen)) return true;
    } else if (!seen.has(selection.name.value)) {
      seen.add(selection.name.value);
      const fragment = fragments.get(selection.name.value);
      if (fragment && selectsIntrospection(fragment.selectionSet, fragments, seen)) return true;
    }
  }
  return false;
}

/** The marker standing for a part: its fragment's type condition and conditions, selecting `__typename` under the part's key. */
function markerFragmentOf(part: DeferredPart, directives: readonly DirectiveNode[]): InlineFragmentNode {
  const field: FieldNode = { kind: Kind.FIELD, alias: { kind: Kind.NAME, value: `${MARKER_PREFIX}${part.id}` }, name: { kind: Kind.NAME, value: '__typename' } };
  const typeCondition: NamedTypeNode | undefined = part.typeCondition ? { kind: Kind.NAMED_TYPE, name: { kind: Kind.NAME, value: part.typeCondition } } : undefined;
  return { kind: Kind.INLINE_FRAGMENT, typeCondition, directives, selectionSet: { kind: Kind.SELECTION_SET, selections: [field] } };
}

/** Where a deferred part applies in an answer: its response path, and the merged tree's object there (what the part is projected from). */
export interface PartPlace {
  readonly part: DeferredPart;
  readonly path: readonly (string | number)[];
  readonly source: Data;
  /** The object's type there (the marker's `__typename`): what the part's selections are collected for. */
  readonly typeName: string;
}

/**
 * Finds the markers in a projected answer (from `base`, the answer's own path), removes them, and
 * says where each part applies: the object of the merged tree at the same response keys, which
 * the part is projected from once its fetches are done. The answer and the tree hold the same keys
 * (subgraph answers carry the client's aliases), so the walk goes down both at once.
 */
export function takeMarkers(split: DeferSplit, answer: unknown, tree: unknown, base: readonly (string | number)[]): PartPlace[] {
  const places: PartPlace[] = [];
  const walk = (value: unknown, source: unknown, path: (string | number)[]): void => {
    if (value === null || typeof value !== 'object' || source === null || typeof source !== 'object') return;
    if (Array.isArray(value)) {
      if (!Array.isArray(source)) return;
      for (let index = 0; index < value.length; index++) {
        path.push(index);
        walk(value[index], source[index], path);
        path.pop();
      }
      return;
    }
    const object = value as Data;
    for (const key of Object.keys(object)) {
      if (key.startsWith(MARKER_PREFIX)) {
        const part = split.parts[Number(key.slice(MARKER_PREFIX.length))];
        const typeName = object[key];
        delete object[key];
        if (part && typeof typeName === 'string') places.push({ part, path: [...path], source: source as Data, typeName });
        continue;
      }
      path.push(key);
      walk(object[key], (source as Data)[key], path);
      path.pop();
    }
  };
  walk(answer, tree, [...base]);
  return places;
}
