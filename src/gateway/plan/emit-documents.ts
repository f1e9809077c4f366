// Emitting documents: each fetch's subgraph document (a query, mutation or subscription), printed from its steps' selection trees and validated against the subgraph's own schema (5, 7).
import {
  Kind,
  validate,
  type DirectiveNode,
  type DocumentNode,
  type OperationDefinitionNode,
  type SelectionNode,
  type SelectionSetNode,
  type ValueNode,
  type VariableDefinitionNode,
} from 'graphql';
import type { Fetch, FetchOperation, FetchStep, PlanStep, SelectionTree } from './plan-types.js';
import { TYPENAME } from './selection-tree.js';
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
    const selectionSet = toSelectionSet(step.selection, used, renamed);
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

function toSelectionSet(tree: SelectionTree, variables: Set<string>, renamed: { any: boolean }): SelectionSetNode {
  const selections: SelectionNode[] = [];
  for (const [key, field] of tree.fields) {
    for (const argument of field.arguments) collectVariables(argument.value, variables);
    for (const directive of field.directives) for (const argument of directive.arguments ?? []) collectVariables(argument.value, variables);
    const sub = field.selection && (field.selection.fields.size > 0 || field.selection.fragments.size > 0) ? toSelectionSet(field.selection, variables, renamed) : undefined;
    if (field.subgraphKey) renamed.any = true;
    const responseKey = field.subgraphKey ?? key;
    selections.push({
      kind: Kind.FIELD,
      alias: responseKey === field.name ? undefined : { kind: Kind.NAME, value: responseKey },
      name: { kind: Kind.NAME, value: field.name },
      arguments: field.arguments,
      directives: field.directives,
      // A composite field must select something: its type name at least.
      selectionSet: field.selection ? (sub ?? { kind: Kind.SELECTION_SET, selections: [{ kind: Kind.FIELD, name: { kind: Kind.NAME, value: TYPENAME } }] }) : undefined,
    });
  }
  for (const [typeName, fragment] of tree.fragments) {
    if (fragment.fields.size === 0 && fragment.fragments.size === 0) continue;
    selections.push({
      kind: Kind.INLINE_FRAGMENT,
      typeCondition: { kind: Kind.NAMED_TYPE, name: { kind: Kind.NAME, value: typeName } },
      selectionSet: toSelectionSet(fragment, variables, renamed),
    });
  }
  return { kind: Kind.SELECTION_SET, selections };
}

function collectVariables(value: ValueNode, into: Set<string>): void {
  if (value.kind === Kind.VARIABLE) into.add(value.name.value);
  else if (value.kind === Kind.LIST) for (const item of value.values) collectVariables(item, into);
  else if (value.kind === Kind.OBJECT) for (const field of value.fields) collectVariables(field.value, into);
}
