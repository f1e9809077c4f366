// Emitting documents: each fetch's subgraph document (a query, mutation or subscription), printed from its steps' selection trees and validated against the subgraph's own schema (5, 7).
import {
  Kind,
  print,
  validate,
  type DirectiveNode,
  type DocumentNode,
  type FieldNode,
  type OperationDefinitionNode,
  type SelectionNode,
  type SelectionSetNode,
  type ValueNode,
  type VariableDefinitionNode,
} from 'graphql';
import type { Guards } from '../../request/operation-analysis.js';
import type { Fetch, FetchOperation, FetchStep, PlanStep, SelectionTree } from './plan-types.js';
import { TYPENAME, isCondition } from './selection-tree.js';
import { PlanInvalid, PlanUnsupported, type SupergraphModel } from './supergraph-model.js';

/**
 * 5. The fetch of a group of steps: its subgraph document, the client variables it declares, and
 *    its steps as the runner reads them, each with the alias of its `_entities` field and the
 *    variable of its representations fixed here, in the one place that names them in the document.
 *    `built` holds the steps of the fetches emitted before (a group only waits for those); each
 *    step of this one is added to it.
 */
export function emitFetch(fetch: FetchDraft, emission: Emission): Fetch {
  const { id, steps, operation, dependsOn } = fetch;
  const { definitions, built, operationDirectives = [] } = emission;
  const used = new Set<string>();
  const renamed = { any: false };
  const selections: SelectionNode[] = [];
  const ownVariables: VariableDefinitionNode[] = [];
  const batched = steps.length > 1;
  const fetchSteps = steps.map((step, index): FetchStep => {
    const selectionSet = toSelectionSet(step.selection, used, renamed, NONE);
    if (step.entityType === undefined) {
      selections.push(...selectionSet.selections);
      return finalStep(step, undefined, undefined, built);
    }
    const alias = batched ? `_${index}` : undefined;
    // A name no client variable has: the client's variables are declared beside it (5).
    const representationsVariable = unclaimed(batched ? `_${index}_representations` : 'representations', definitions);
    const variable = { kind: Kind.VARIABLE, name: { kind: Kind.NAME, value: representationsVariable } } as const;
    ownVariables.push({
      kind: Kind.VARIABLE_DEFINITION,
      variable,
      type: {
        kind: Kind.NON_NULL_TYPE,
        type: { kind: Kind.LIST_TYPE, type: { kind: Kind.NON_NULL_TYPE, type: { kind: Kind.NAMED_TYPE, name: { kind: Kind.NAME, value: '_Any' } } } },
      },
    });
    selections.push({
      kind: Kind.FIELD,
      alias: alias ? { kind: Kind.NAME, value: alias } : undefined,
      name: { kind: Kind.NAME, value: '_entities' },
      arguments: [{ kind: Kind.ARGUMENT, name: { kind: Kind.NAME, value: 'representations' }, value: variable }],
      selectionSet: {
        kind: Kind.SELECTION_SET,
        selections: [{ kind: Kind.INLINE_FRAGMENT, typeCondition: { kind: Kind.NAMED_TYPE, name: { kind: Kind.NAME, value: step.lookupType ?? step.entityType } }, selectionSet }],
      },
    });
    return finalStep(step, alias, representationsVariable, built);
  });
  for (const directive of operationDirectives) for (const argument of directive.arguments ?? []) collectVariables(argument.value, used);
  const variableDefinitions: VariableDefinitionNode[] = [...ownVariables];
  for (const name of used) {
    const definition = definitions.get(name);
    if (!definition) throw new PlanUnsupported(`undeclared variable $${name}`);
    variableDefinitions.push(definition);
  }
  const first = steps[0];
  return Object.freeze({
    id,
    graph: first.graph,
    subgraph: first.subgraph,
    steps: Object.freeze(fetchSteps),
    operation,
    renamed: renamed.any,
    dependsOn: Object.freeze([...dependsOn]),
    document: operationDocument(operation, variableDefinitions, { kind: Kind.SELECTION_SET, selections }, operationDirectives),
    variableNames: Object.freeze([...used]),
  });
}

/** One fetch to emit: its id (its place in the plan), its steps, operation type and the fetches it waits for. */
export interface FetchDraft {
  readonly id: number;
  readonly steps: readonly PlanStep[];
  readonly operation: FetchOperation;
  readonly dependsOn: readonly Fetch[];
}

/** What every fetch of one plan is emitted with. */
export interface Emission {
  /** The client operation's variable definitions, by name. */
  readonly definitions: ReadonlyMap<string, VariableDefinitionNode>;
  /** The steps of the fetches emitted so far (each fetch adds its own). */
  readonly built: Map<PlanStep, FetchStep>;
  /** The client operation's directives that may stand on this operation type (default none). */
  readonly operationDirectives?: readonly DirectiveNode[];
}

/** A planned step as the runner reads it: frozen, its dependencies the built steps of earlier fetches. */
function finalStep(step: PlanStep, alias: string | undefined, representationsVariable: string | undefined, built: Map<PlanStep, FetchStep>): FetchStep {
  const dependsOn = new Set<FetchStep>();
  for (const dependency of step.dependsOn) {
    const done = built.get(dependency);
    if (!done) throw new PlanUnsupported('a step emitted before a step it depends on');
    dependsOn.add(done);
  }
  const final: FetchStep = Object.freeze({
    id: step.id,
    graph: step.graph,
    subgraph: step.subgraph,
    path: step.path,
    entityType: step.entityType,
    objectTypes: step.objectTypes,
    lookupType: step.lookupType,
    resolvesType: step.resolvesType,
    selection: step.selection,
    representation: step.representation,
    keyFields: step.keyFields,
    dependsOn,
    alias,
    representationsVariable,
  });
  built.set(step, final);
  return final;
}

/** 7. The safety net: a document its subgraph must reject is never sent (validated against the subgraph's own schema). */
export function validateDocuments(model: SupergraphModel, fetches: readonly Fetch[]): void {
  for (const fetch of fetches) {
    const errors = validate(model.subgraphSchema(fetch.graph), fetch.document);
    if (errors.length > 0) throw new PlanInvalid(`the document for ${fetch.subgraph} is invalid there: ${errors[0].message}`);
  }
}

function operationDocument(operation: FetchOperation, variableDefinitions: VariableDefinitionNode[], selectionSet: SelectionSetNode, directives: readonly DirectiveNode[]): DocumentNode {
  return {
    kind: Kind.DOCUMENT,
    definitions: [{ kind: Kind.OPERATION_DEFINITION, operation: operation as OperationDefinitionNode['operation'], variableDefinitions, directives, selectionSet }],
  } as DocumentNode;
}

/** `name`, or with underscores before it until no client variable is named so. */
function unclaimed(name: string, clientVariables: ReadonlyMap<string, unknown>): string {
  let candidate = name;
  while (clientVariables.has(candidate)) candidate = `_${candidate}`;
  return candidate;
}

/** No conditions around a step's selection: its fields carry their own. */
const NONE: ReadonlySet<string> = new Set();

/** One copy of a field, sent under no condition. */
const ALWAYS_SENT: readonly (readonly DirectiveNode[])[] = [[]];

/**
 * A selection tree as a subgraph document's selection set. Each field is sent under exactly the
 * conditions that want it (its `included`: the client's `@skip`/`@include` on it and on its
 * fragments, or, for what the plan fetches for itself, those of what it serves): a subgraph never
 * resolves a field the request leaves out, nor one whose look-ups the runner does not make (it
 * makes a look-up only when one of its fields is wanted: buildPlan 11, decision 017). `enclosing`
 * holds the conditions (printed) of the fields around the tree: they hold wherever it executes,
 * so they are not repeated inside.
 */
function toSelectionSet(tree: SelectionTree, variables: Set<string>, renamed: { any: boolean }, enclosing: ReadonlySet<string>): SelectionSetNode {
  const selections: SelectionNode[] = [];
  const wrappers = new Map<string, SelectionNode[]>();
  for (const [key, field] of tree.fields) {
    for (const argument of field.arguments) collectVariables(argument.value, variables);
    for (const directive of field.directives) for (const argument of directive.arguments ?? []) collectVariables(argument.value, variables);
    if (field.subgraphKey) renamed.any = true;
    const responseKey = field.subgraphKey ?? key;
    for (const conditions of sentConditions(field.included, enclosing)) {
      for (const directive of conditions) for (const argument of directive.arguments ?? []) collectVariables(argument.value, variables);
      const inside = conditions.length === 0 ? enclosing : new Set([...enclosing, ...conditions.map((directive) => print(directive))]);
      const sub = field.selection && (field.selection.fields.size > 0 || field.selection.fragments.size > 0) ? toSelectionSet(field.selection, variables, renamed, inside) : undefined;
      const node: FieldNode = {
        kind: Kind.FIELD,
        alias: responseKey === field.name ? undefined : { kind: Kind.NAME, value: responseKey },
        name: { kind: Kind.NAME, value: field.name },
        arguments: field.arguments,
        directives: field.directives,
        // A composite field must select something: its type name at least.
        selectionSet: field.selection ? (sub ?? { kind: Kind.SELECTION_SET, selections: [{ kind: Kind.FIELD, name: { kind: Kind.NAME, value: TYPENAME } }] }) : undefined,
      };
      underConditions(node, conditions, selections, wrappers);
    }
  }
  for (const [typeName, fragment] of tree.fragments) {
    if (fragment.fields.size === 0 && fragment.fragments.size === 0) continue;
    selections.push({
      kind: Kind.INLINE_FRAGMENT,
      typeCondition: { kind: Kind.NAMED_TYPE, name: { kind: Kind.NAME, value: typeName } },
      selectionSet: toSelectionSet(fragment, variables, renamed, enclosing),
    });
  }
  return { kind: Kind.SELECTION_SET, selections };
}

/**
 * The conditions a field is sent under, one list per copy of it in the document (copies of one
 * field under one response key merge, GraphQL spec 6.3.2, so the subgraph resolves it when any
 * copy's conditions pass):
 * 1. one per alternative of its `included` (a selection of it, with every condition list around
 *    it), the `@skip`/`@include` directives of its lists flattened, each once (`@defer` is the
 *    router's: never sent);
 * 2. less those `enclosing` already holds;
 * 3. an alternative left with none wants the field always: one copy, bare;
 * 4. an alternative asking all another asks, and more, adds nothing and is dropped (of two alike,
 *    the later).
 */
function sentConditions(included: readonly Guards[] | undefined, enclosing: ReadonlySet<string>): readonly (readonly DirectiveNode[])[] {
  if (!included) return ALWAYS_SENT;
  const alternatives: { conditions: DirectiveNode[]; printed: Set<string> }[] = [];
  for (const guards of included) {
    const conditions: DirectiveNode[] = [];
    const printed = new Set<string>();
    for (const list of guards) {
      for (const directive of list) {
        if (!isCondition(directive)) continue;
        const text = print(directive);
        if (enclosing.has(text) || printed.has(text)) continue;
        printed.add(text);
        conditions.push(directive);
      }
    }
    if (conditions.length === 0) return ALWAYS_SENT;
    alternatives.push({ conditions, printed });
  }
  const covers = (a: Set<string>, b: Set<string>) => a.size <= b.size && [...a].every((text) => b.has(text));
  return alternatives
    .filter((alternative, i) => !alternatives.some((other, j) => j !== i && covers(other.printed, alternative.printed) && (other.printed.size < alternative.printed.size || j < i)))
    .map((alternative) => alternative.conditions);
}

/**
 * Adds a field under its conditions to `selections`: on the field itself while no directive name
 * repeats there (a directive that is not repeatable stands once per location, GraphQL spec 5.7.3),
 * the rest on inline fragments without a type condition around it, the outermost first:
 * `... @include(if: $a) { field @include(if: $b) @skip(if: $c) }`. Fields under the same
 * fragments share them (`wrappers`: the selections inside each chain of fragments made here, by
 * their directives printed).
 */
function underConditions(field: FieldNode, conditions: readonly DirectiveNode[], selections: SelectionNode[], wrappers: Map<string, SelectionNode[]>): void {
  // Innermost first: the field's own, then each fragment's outwards.
  const groups: DirectiveNode[][] = [[]];
  for (let i = conditions.length - 1; i >= 0; i--) {
    let group = groups[groups.length - 1];
    if (group.some((directive) => directive.name.value === conditions[i].name.value)) groups.push((group = []));
    group.unshift(conditions[i]);
  }
  const node: FieldNode = groups[0].length === 0 ? field : { ...field, directives: [...groups[0], ...(field.directives ?? [])] };
  if (groups.length === 1) {
    selections.push(node);
    return;
  }
  const chain = groups.slice(1).map((group) => group.map((directive) => print(directive)).join(' ')).join(' | ');
  const inside = wrappers.get(chain);
  if (inside) {
    inside.push(node);
    return;
  }
  const innermost: SelectionNode[] = [node];
  wrappers.set(chain, innermost);
  let selection: SelectionNode = { kind: Kind.INLINE_FRAGMENT, directives: groups[1], selectionSet: { kind: Kind.SELECTION_SET, selections: innermost } };
  for (const group of groups.slice(2)) selection = { kind: Kind.INLINE_FRAGMENT, directives: group, selectionSet: { kind: Kind.SELECTION_SET, selections: [selection] } };
  selections.push(selection);
}

function collectVariables(value: ValueNode, into: Set<string>): void {
  if (value.kind === Kind.VARIABLE) into.add(value.name.value);
  else if (value.kind === Kind.LIST) for (const item of value.values) collectVariables(item, into);
  else if (value.kind === Kind.OBJECT) for (const field of value.fields) collectVariables(field.value, into);
}
