// One analysis per operation of a document: the operation, its fragments and variables, and CollectFields memoised per runtime type and selection sets.
import {
  Kind,
  getNamedType,
  print,
  isAbstractType,
  isCompositeType,
  isUnionType,
  valueFromASTUntyped,
  type DirectiveNode,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLInterfaceType,
  type GraphQLObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionNode,
  type SelectionSetNode,
  type VariableDefinitionNode,
} from 'graphql';
import { requestStateOf } from './request-state.js';

/** Whether a selection's `@skip`/`@include` let it execute (one directive list, as written on one selection). */
export type IncludeTest = (directives: readonly DirectiveNode[]) => boolean;

/**
 * The conditions that must all pass for one selection of a field to execute: the condition lists of
 * the field itself and of each fragment around it, outermost first. Empty: it always executes.
 */
export type Guards = readonly (readonly DirectiveNode[])[];

/** The fields of a selection for one runtime type, grouped by response key (GraphQL spec 6.3.2). */
export type FieldGroups = ReadonlyMap<string, readonly FieldNode[]>;

/** One CollectFields result, before any `@skip`/`@include` is evaluated. */
export interface Collection {
  /** Every field that may execute (each condition taken as "maybe"), by response key, in document order. */
  readonly fields: FieldGroups;
  /** Some field is guarded by a condition (its own, or an enclosing fragment's): `collectFields` with a test must filter. */
  readonly conditional: boolean;
  /** What the query planner cannot model here: an unknown fragment. */
  readonly unsupported: string | undefined;
  /** Each field with the condition lists that guard it (its own and its enclosing fragments'), in document order. */
  readonly entries: readonly CollectedEntry[];
}

interface CollectedEntry {
  readonly key: string;
  readonly node: FieldNode;
  readonly guards: Guards;
}

/**
 * `@defer` on a fragment is a guard of its own (a one-directive list): the plan fetches the fields
 * either way, and the incremental delivery reads it to tell which payload waits for which fetches.
 * A condition test ignores it (`includedByConditions` reads only `@skip`/`@include`).
 */
export const DEFER = 'defer';
/** `@stream` is a hint a server may ignore (incremental delivery RFC): the list is answered whole. */
const STREAM = 'stream';

/** A node that was collected with no condition around it. */
const UNGUARDED: readonly Guards[] = Object.freeze([Object.freeze([])]);

const EMPTY: Collection = Object.freeze({ fields: new Map(), conditional: false, unsupported: undefined, entries: [] });

/** A trie of selection-set lists: one node per set, in order; the collection of a list lives at its last node. */
interface SetTrie {
  next?: WeakMap<SelectionSetNode, SetTrie>;
  collection?: Collection;
}

/**
 * What every reader of an operation needs, worked out once per document and operation name and
 * shared by the query planner, cost analysis, authorization and the plugins that label or queue by
 * operation (decision 015):
 * 1. The operation, picked as GraphQL's GetOperation() does (spec 6.1): the one named, or the only
 *    one when no name is given; undefined when none can be picked (execution refuses the request).
 * 2. The fragment definitions by name, the variables the operation declares and their defaults.
 * 3. CollectFields (spec 6.3.2) per schema, runtime object type and list of selection sets, memoised
 *    (for an interface: the fields selected on every object of it, outside any narrower type condition):
 *    the walk is done once with every `@skip`/`@include` taken as "maybe", each field remembering the
 *    conditions that guard it. A caller that knows the variables filters by them (cost); one that
 *    plans for every request keeps them all (the planner, authorization). The result is exactly the
 *    spec's for any values of the conditions: a fragment spread under no condition is visited once per
 *    collection (`visitedFragments`), one under a condition may be reached again by a later spread of
 *    the same fragment, and a field node reached twice counts once.
 * 4. The fields the operation selects, by the type they are selected on, for authorization.
 * 5. An executable directive other than `@skip`/`@include` stays on its field; one written on a
 *    fragment is carried by each field the fragment selects (a copy of the field node with the
 *    fragment's directives after its own), since plans reshape fragments per subgraph.
 * 6. The guards a field node was collected under, for readers that decide per request (guardsOf).
 * Pure and keyed by identity (the document, the schema, the selection sets are never mutated), so
 * the memo can be shared by every request and graph, and is dropped with the document.
 */
export class OperationAnalysis {
  readonly document: DocumentNode;
  /** The name the request gave (undefined: none). */
  readonly operationName: string | undefined;
  readonly operation: OperationDefinitionNode | undefined;
  readonly fragments: ReadonlyMap<string, FragmentDefinitionNode>;
  /** How many operations the document holds (a plan key names the only one whether the request named it or not). */
  readonly operationCount: number;
  readonly variableDefinitions: readonly VariableDefinitionNode[];
  /** The declared defaults of the operation's variables (as written, not coerced). */
  readonly variableDefaults: Readonly<Record<string, unknown>>;
  readonly #bySchema = new WeakMap<GraphQLSchema, Map<GraphQLObjectType | GraphQLInterfaceType, SetTrie>>();
  readonly #selected = new WeakMap<GraphQLSchema, readonly SelectedField[]>();
  readonly #guards = new Map<FieldNode, Guards[]>();

  constructor(document: DocumentNode, operationName: string | undefined) {
    this.document = document;
    this.operationName = operationName;
    const fragments = new Map<string, FragmentDefinitionNode>();
    let operation: OperationDefinitionNode | undefined;
    let count = 0;
    for (const definition of document.definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
      else if (definition.kind === Kind.OPERATION_DEFINITION) {
        count++;
        if (operationName === undefined ? count === 1 : definition.name?.value === operationName && !operation) operation = definition;
      }
    }
    this.operation = operationName === undefined && count > 1 ? undefined : operation;
    this.operationCount = count;
    this.fragments = fragments;
    this.variableDefinitions = this.operation?.variableDefinitions ?? [];
    const defaults: Record<string, unknown> = {};
    for (const definition of this.variableDefinitions) if (definition.defaultValue) defaults[definition.variable.name.value] = valueFromASTUntyped(definition.defaultValue);
    this.variableDefaults = defaults;
  }

  /**
   * The fields that execute for an object of `type` under these selection sets (undefined sets,
   * those of leaf fields, are ignored). Without `include`, every conditional field is kept;
   * with it, a field is kept when `include` passes every condition list that guards it.
   */
  collectFields(schema: GraphQLSchema, type: GraphQLObjectType, selectionSets: readonly (SelectionSetNode | undefined)[], include?: IncludeTest): FieldGroups {
    const collection = this.collection(schema, type, selectionSets);
    if (!include || !collection.conditional) return collection.fields;
    const fields = new Map<string, FieldNode[]>();
    for (const entry of collection.entries) if (entry.guards.every(include)) addNode(fields, entry.key, entry.node);
    return fields;
  }

  /** The memoised collection (3) for one runtime type (or interface) and list of selection sets. */
  collection(schema: GraphQLSchema, type: GraphQLObjectType | GraphQLInterfaceType, selectionSets: readonly (SelectionSetNode | undefined)[]): Collection {
    let byType = this.#bySchema.get(schema);
    if (!byType) this.#bySchema.set(schema, (byType = new Map()));
    let node = byType.get(type);
    if (!node) byType.set(type, (node = {}));
    let sets = 0;
    for (const set of selectionSets) {
      if (!set) continue;
      sets++;
      node.next ??= new WeakMap();
      let next: SetTrie | undefined = node.next.get(set);
      if (!next) node.next.set(set, (next = {}));
      node = next;
    }
    if (sets === 0) return EMPTY;
    if (!node.collection) {
      node.collection = collect(schema, this.fragments, type, selectionSets);
      for (const entry of node.collection.entries) this.#noteGuards(entry.node, entry.guards);
    }
    return node.collection;
  }

  /**
   * 6. The guards under which a field node was collected, one list per place it was collected at
   *    so far (every place, once the collections of every position are made). A reader deciding
   *    whether the node may execute (the plan runner, before a look-up) takes any of them passing:
   *    a node collected at several places executes at least where one of them lets it.
   */
  guardsOf(node: FieldNode): readonly Guards[] {
    return this.#guards.get(node) ?? UNGUARDED;
  }

  #noteGuards(node: FieldNode, guards: Guards): void {
    const known = this.#guards.get(node);
    if (!known) this.#guards.set(node, [guards]);
    else if (!known.some((g) => g === guards || (g.length === 0 && guards.length === 0))) known.push(guards);
  }

  /**
   * 4. Every field the operation selects, by the type it is selected on (an interface or a union
   *    too, as written), once per coordinate: what authorization decides on. Only the operation that
   *    runs and the fragments it reaches count (spec 6.1: the other operations of the document do not
   *    execute); each condition is taken as "maybe", since a decision holds for any variables.
   *    Introspection fields and what lies below them are left out. Memoised per schema.
   */
  selectedFields(schema: GraphQLSchema): readonly SelectedField[] {
    let selected = this.#selected.get(schema);
    if (selected) return selected;
    const found = new Map<string, SelectedField>();
    const visited = new Set<string>();
    const walk = (type: GraphQLCompositeType, selectionSet: SelectionSetNode): void => {
      for (const selection of selectionSet.selections) {
        if (selection.kind === Kind.FIELD) {
          const name = selection.name.value;
          if (name.startsWith('__') || isUnionType(type)) continue;
          const field = type.getFields()[name];
          if (!field) continue;
          const coordinate = `${type.name}.${name}`;
          if (!found.has(coordinate)) found.set(coordinate, { coordinate, parentType: type, field });
          const named = getNamedType(field.type);
          if (selection.selectionSet && isCompositeType(named)) walk(named, selection.selectionSet);
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          const condition = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : type;
          if (condition && isCompositeType(condition)) walk(condition, selection.selectionSet);
        } else {
          // A fragment's fields are selected on its type condition wherever it is spread: walked once.
          const name = selection.name.value;
          const fragment = this.fragments.get(name);
          if (visited.has(name) || !fragment) continue;
          visited.add(name);
          const condition = schema.getType(fragment.typeCondition.name.value);
          if (condition && isCompositeType(condition)) walk(condition, fragment.selectionSet);
        }
      }
    };
    const operation = this.operation;
    const root = operation && (operation.operation === 'query' ? schema.getQueryType() : operation.operation === 'mutation' ? schema.getMutationType() : schema.getSubscriptionType());
    if (operation && root) walk(root, operation.selectionSet);
    selected = [...found.values()];
    this.#selected.set(schema, selected);
    return selected;
  }
}

/** A field an operation selects, on the type it is selected on. */
export interface SelectedField {
  /** `Type.field`. */
  readonly coordinate: string;
  readonly parentType: GraphQLObjectType | GraphQLInterfaceType;
  readonly field: GraphQLField<unknown, unknown>;
}

/** Analyses kept per document: one per operation name asked for. */
const analyses = new WeakMap<DocumentNode, Map<string | undefined, OperationAnalysis>>();

/**
 * The analysis of a document's operation, made on first use and kept as long as the document lives.
 * A module-level memo because it is pure: the same document and name always give the same analysis,
 * whichever graph or request asks (schema-dependent parts are keyed by schema inside).
 */
export function analyseOperation(document: DocumentNode, operationName?: string | null): OperationAnalysis {
  const name = operationName ?? undefined;
  let byName = analyses.get(document);
  if (!byName) analyses.set(document, (byName = new Map()));
  let analysis = byName.get(name);
  if (!analysis) {
    analysis = new OperationAnalysis(document, name);
    // Only names the document answers to are kept: a client cycling through made-up operation names
    // (refused by execution anyway) must not grow the memo of a cached document without bound.
    if (analysis.operation) byName.set(name, analysis);
  }
  return analysis;
}

/**
 * The operation a request executes: read once by use-request-state for every plugin after it, or,
 * for a request the router did not start (a plugin used outside it), from the memoised analysis.
 */
export function executingOperation(context: unknown, document: DocumentNode, operationName?: string | null): OperationDefinitionNode | undefined {
  const state = requestStateOf(context);
  return state.started ? state.operation : analyseOperation(document, operationName).operation;
}

/** The walk of CollectFields (3), with conditions recorded instead of evaluated. */
function collect(schema: GraphQLSchema, fragments: ReadonlyMap<string, FragmentDefinitionNode>, type: GraphQLObjectType | GraphQLInterfaceType, selectionSets: readonly (SelectionSetNode | undefined)[]): Collection {
  const entries: CollectedEntry[] = [];
  const state = { unsupported: undefined as string | undefined, conditional: false };
  const visited = new Set<string>();
  const active = new Set<string>();
  /** Copies of field nodes that carry their enclosing fragments' directives, one per node and directive list. */
  const carried = new Map<FieldNode, Map<string, FieldNode>>();
  const carrying = (node: FieldNode, inherited: readonly DirectiveNode[]): FieldNode => {
    if (inherited.length === 0) return node;
    let copies = carried.get(node);
    if (!copies) carried.set(node, (copies = new Map()));
    const text = inherited.map((d) => print(d)).join(' ');
    let copy = copies.get(text);
    if (!copy) copies.set(text, (copy = { ...node, directives: [...(node.directives ?? []), ...inherited] }));
    return copy;
  };
  const walk = (selections: readonly SelectionNode[], guards: readonly (readonly DirectiveNode[])[], inherited: readonly DirectiveNode[]): void => {
    for (const selection of selections) {
      let here = guards;
      let carriedHere = inherited;
      if (selection.directives && selection.directives.length > 0) {
        let conditions: DirectiveNode[] | undefined;
        let deferred: DirectiveNode | undefined;
        for (const directive of selection.directives) {
          const name = directive.name.value;
          if (name === 'skip' || name === 'include') (conditions ??= []).push(directive);
          else if (name === DEFER && selection.kind !== Kind.FIELD) deferred = directive;
          else if (name === STREAM || name === DEFER) continue;
          // 5. Another executable directive on a fragment goes with each field the fragment selects.
          else if (selection.kind !== Kind.FIELD) carriedHere = [...carriedHere, directive];
        }
        if (conditions) here = [...here, conditions];
        if (deferred) here = [...here, [deferred]];
      }
      if (selection.kind === Kind.FIELD) {
        if (here.length > 0) state.conditional = true;
        entries.push({ key: selection.alias?.value ?? selection.name.value, node: carrying(selection, inherited), guards: here });
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        if (!selection.typeCondition || applies(schema, selection.typeCondition.name.value, type)) walk(selection.selectionSet.selections, here, carriedHere);
      } else {
        const name = selection.name.value;
        // Spec 6.3.2: a spread that surely executes marks its fragment visited; one under a condition
        // may not execute, so a later spread of the same fragment is still walked (its fields then
        // count once). `active` stops a cycle, which validation rejects anyway.
        if (visited.has(name) || active.has(name)) continue;
        const fragment = fragments.get(name);
        if (!fragment) {
          state.unsupported ??= `unknown fragment ${name}`;
          continue;
        }
        if (here.length === 0) visited.add(name);
        if (!applies(schema, fragment.typeCondition.name.value, type)) continue;
        active.add(name);
        walk(fragment.selectionSet.selections, here, carriedHere);
        active.delete(name);
      }
    }
  };
  for (const set of selectionSets) if (set) walk(set.selections, [], []);
  const fields = new Map<string, FieldNode[]>();
  for (const entry of entries) addNode(fields, entry.key, entry.node);
  return Object.freeze({ fields, conditional: state.conditional, unsupported: state.unsupported, entries });
}

function addNode(fields: Map<string, FieldNode[]>, key: string, node: FieldNode): void {
  const list = fields.get(key);
  if (!list) fields.set(key, [node]);
  else if (!list.includes(node)) list.push(node);
}

/**
 * Whether a type condition applies to objects of `type` (GraphQL spec 6.3.2, DoesFragmentTypeApply);
 * for an interface, whether it applies to every object of it (the interface itself, or one it implements).
 */
function applies(schema: GraphQLSchema, condition: string, type: GraphQLObjectType | GraphQLInterfaceType): boolean {
  if (condition === type.name) return true;
  const conditionType = schema.getType(condition);
  return conditionType !== undefined && conditionType !== null && isAbstractType(conditionType) && schema.isSubType(conditionType, type);
}
