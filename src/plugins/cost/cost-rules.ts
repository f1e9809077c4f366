// The rules estimated and actual cost share: operation and variables, field collection, weights, arguments, owners.
import {
  Kind,
  getNamedType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  valueFromASTUntyped,
  type DocumentNode,
  type FieldNode,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';
import { includedByConditions } from '../../request/included-by-conditions.js';
import { analyseOperation, type FieldGroups, type IncludeTest, type OperationAnalysis } from '../../request/operation-analysis.js';
import type { CostMetadata, FieldCostInfo } from './cost-metadata.js';
import type { PlanPlacement } from './plan-placement.js';

/** Default weights and sizes; each can be overridden per call. */
export interface CostDefaults {
  /** List size assumed for a list field without `@listSize` or whose `@listSize` gives no size. Default 10 (items). */
  listSize?: number;
  /** Own weight of an object, interface or union field without `@cost` on it or its type. Default 1. */
  compositeFieldCost?: number;
  /** Own weight of a scalar or enum field without `@cost` on it or its type. Default 0. */
  leafFieldCost?: number;
  /** Own weight of each root field of a mutation without `@cost` on the field. Default 10. */
  mutationFieldCost?: number;
}

export interface CostOptions {
  /** The operation to cost when the document has several (as in the request). */
  operationName?: string;
  /** The request's variables; a variable not given takes its default from the operation. */
  variables?: Record<string, unknown>;
  defaults?: CostDefaults;
  /** Filled with the name of every variable the costing read: a memo keyed by those values alone is exact. */
  variablesRead?: Set<string>;
  /**
   * Where the operation's query plan fetches each field: each field is then charged to the subgraph
   * whose fetch selects it (a field served through `@provides` to the providing subgraph), and one no
   * fetch selects (denied) to none. Absent (no plan: stitching, planner off): the owner rule.
   */
  placement?: PlanPlacement;
}

import type { CostEstimate } from '../../request/cost-estimate.js';

export type { CostEstimate };

const DEFAULT_COST_DEFAULTS: Readonly<Required<CostDefaults>> = Object.freeze({
  listSize: 10,
  compositeFieldCost: 1,
  leafFieldCost: 0,
  mutationFieldCost: 10,
});

/** Everything one costing call reads; built per call, dropped after it (no module-level state). */
export interface CostContext {
  schema: GraphQLSchema;
  metadata: CostMetadata;
  defaults: Readonly<Required<CostDefaults>>;
  /** The operation's analysis: fragments, declared variables, memoised CollectFields. */
  analysis: OperationAnalysis;
  variables: Record<string, unknown>;
  notes: Set<string>;
  /** `@skip`/`@include` read with these variables. */
  include: IncludeTest;
}

export interface SelectedOperation {
  context: CostContext;
  operation: OperationDefinitionNode;
  rootType: GraphQLObjectType;
}

/** A cost being summed: the total and each subgraph's part of it. */
export interface Tally {
  total: number;
  bySubgraph: Map<string, number>;
}

export function emptyTally(): Tally {
  return { total: 0, bySubgraph: new Map() };
}

/** Adds `amount` for `subgraph`; the entry is created even for 0 so the breakdown lists every subgraph involved. */
export function charge(tally: Tally, subgraph: string | undefined, amount: number): void {
  if (subgraph === undefined) {
    tally.total += amount;
  } else if (amount !== 0) {
    tally.total += amount;
    tally.bySubgraph.set(subgraph, (tally.bySubgraph.get(subgraph) ?? 0) + amount);
  } else if (!tally.bySubgraph.has(subgraph)) {
    tally.bySubgraph.set(subgraph, 0);
  }
}

/** Adds `factor` × `source`. 0 × anything is 0, so an overflowed Infinity never turns into NaN. */
export function addScaled(target: Tally, source: Tally, factor: number): void {
  target.total += times(source.total, factor);
  for (const [subgraph, amount] of source.bySubgraph) target.bySubgraph.set(subgraph, (target.bySubgraph.get(subgraph) ?? 0) + times(amount, factor));
}

export function times(a: number, b: number): number {
  return a === 0 || b === 0 ? 0 : a * b;
}

export function toCostEstimate(tally: Tally, notes: Iterable<string>): CostEstimate {
  const bySubgraph: Record<string, number> = {};
  for (const name of [...tally.bySubgraph.keys()].sort()) bySubgraph[name] = tally.bySubgraph.get(name)!;
  return { total: tally.total, bySubgraph, notes: [...notes] };
}

/**
 * Picks the operation as execution would (GraphQL spec, "GetOperation()") and resolves the variables:
 * the request's value, else the variable's default (GraphQL spec, "Coercing Variable Values"). Values are
 * read as given, not coerced: the document was validated, and only numbers and booleans matter here.
 * Undefined when no operation can be selected; execution will refuse such a request anyway.
 */
export function selectOperation(schema: GraphQLSchema, metadata: CostMetadata, document: DocumentNode, options: CostOptions, notes: Set<string>): SelectedOperation | undefined {
  const analysis = analyseOperation(document, options.operationName);
  const operation = analysis.operation;
  if (!operation) {
    notes.add(options.operationName === undefined ? 'no operation selected: the document has several and no operationName was given' : `no operation named "${options.operationName}"`);
    return undefined;
  }
  const rootType = operation.operation === 'query' ? schema.getQueryType() : operation.operation === 'mutation' ? schema.getMutationType() : schema.getSubscriptionType();
  if (!rootType) {
    notes.add(`the schema has no ${operation.operation} type`);
    return undefined;
  }
  const given = options.variables ?? {};
  const variables: Record<string, unknown> = {};
  for (const definition of analysis.variableDefinitions) {
    const name = definition.variable.name.value;
    if (Object.prototype.hasOwnProperty.call(given, name)) variables[name] = given[name];
    else if (Object.prototype.hasOwnProperty.call(analysis.variableDefaults, name)) variables[name] = analysis.variableDefaults[name];
  }
  const defaults = { ...DEFAULT_COST_DEFAULTS, ...withoutUndefined(options.defaults) };
  const read = options.variablesRead;
  const seen = read ? new Proxy(variables, { get: (target, name) => (typeof name === 'string' && read.add(name), Reflect.get(target, name)) }) : variables;
  const context: CostContext = { schema, metadata, defaults, analysis, variables: seen, notes, include: (directives) => includedByConditions(directives, (value) => resolveValue(context, value)) };
  return { context, operation, rootType };
}

function withoutUndefined(defaults: CostDefaults | undefined): CostDefaults {
  const result: CostDefaults = {};
  for (const [key, value] of Object.entries(defaults ?? {})) if (value !== undefined) result[key as keyof CostDefaults] = value;
  return result;
}

/**
 * GraphQL spec, "CollectFields()": the fields that execute for an object of type `objectType`, grouped
 * by response key, from the operation's analysis (memoised per document and type). `@skip`/`@include`
 * are evaluated with the request's variables; an unknown variable (absent, no default) keeps the
 * selection: an estimate should err on the side of counting.
 */
export function collectFields(context: CostContext, objectType: GraphQLObjectType, selectionSets: readonly (SelectionSetNode | undefined)[]): FieldGroups {
  return context.analysis.collectFields(context.schema, objectType, selectionSets, context.include);
}

/** A literal's value, or a variable's (the request's value, else its default), nested variables included. */
export function resolveValue(context: CostContext, value: ValueNode): unknown {
  return value.kind === Kind.VARIABLE ? context.variables[value.name.value] : valueFromASTUntyped(value, context.variables);
}

/** Introspection (`__typename`, `__schema`, `__type`) costs nothing: the router answers it without a subgraph. */
export function isIntrospectionField(node: FieldNode): boolean {
  return node.name.value.startsWith('__');
}

export function fieldCostInfo(context: CostContext, parentType: GraphQLObjectType, fieldName: string): FieldCostInfo | undefined {
  return context.metadata.types.get(parentType.name)?.fields.get(fieldName);
}

/**
 * The subgraph a field is charged to: its only owner; or, for a field several subgraphs resolve
 * (shareable, or a key field), the subgraph of the parent field when it is one of them (the planner
 * stays in the subgraph it is already fetching from), else the first owner. A field the metadata does
 * not know is charged to its parent's subgraph.
 */
export function chargedSubgraph(context: CostContext, parentType: GraphQLObjectType, info: FieldCostInfo | undefined, parentSubgraph: string | undefined): string | undefined {
  const owners = info?.owners.length ? info.owners : (context.metadata.types.get(parentType.name)?.owners ?? []);
  if (owners.length === 0) return parentSubgraph;
  if (owners.length === 1 || parentSubgraph === undefined) return owners[0];
  return owners.includes(parentSubgraph) ? parentSubgraph : owners[0];
}

/**
 * A field's own weight for one object or value it returns (IBM spec, "The Cost Directive": a field's
 * @cost wins over its type's): `@cost` on the field; else, for a mutation's root field, the mutation
 * default; else `@cost` on the returned (concrete) type; else the composite or leaf default.
 */
export function ownWeight(context: CostContext, info: FieldCostInfo | undefined, returnedType: GraphQLNamedType, mutationRoot: boolean): number {
  if (info?.weight !== undefined) return info.weight;
  if (mutationRoot) return context.defaults.mutationFieldCost;
  const typeWeight = context.metadata.types.get(returnedType.name)?.weight;
  if (typeWeight !== undefined) return typeWeight;
  return isLeafType(returnedType) ? context.defaults.leafFieldCost : context.defaults.compositeFieldCost;
}

/**
 * What the arguments given to one field call add (IBM spec, "The Cost Directive" on ARGUMENT_DEFINITION
 * and INPUT_FIELD_DEFINITION): each argument given a non-null value adds its `@cost`, or for a scalar or
 * enum argument without one the `@cost` of its type; an input object value adds, recursively, the same
 * for each of its fields that is set (per element of a list of input objects).
 */
export function argumentsCost(context: CostContext, node: FieldNode, field: GraphQLField<unknown, unknown>, info: FieldCostInfo | undefined): number {
  if (!node.arguments || node.arguments.length === 0) return 0;
  let cost = 0;
  for (const argumentNode of node.arguments) {
    const name = argumentNode.name.value;
    const weight = info?.argumentWeights.get(name);
    const definition = field.args.find((arg) => arg.name === name);
    if (!definition || (weight === undefined && !mayCarryCost(context, getNamedType(definition.type)))) continue;
    cost += inputValueCost(context, resolveValue(context, argumentNode.value), definition.type, weight);
  }
  return cost;
}

function mayCarryCost(context: CostContext, type: GraphQLNamedType): boolean {
  const info = context.metadata.types.get(type.name);
  return info !== undefined && (info.weight !== undefined || info.inputCarriesCost);
}

function inputValueCost(context: CostContext, value: unknown, type: GraphQLInputType, weight: number | undefined): number {
  if (value === null || value === undefined) return 0;
  const named = getNamedType(type);
  if (!isInputObjectType(named)) return weight ?? context.metadata.types.get(named.name)?.weight ?? 0;
  let cost = weight ?? 0;
  const info = context.metadata.types.get(named.name);
  if (!info?.inputCarriesCost) return cost;
  const fields = named.getFields();
  for (const item of Array.isArray(value) ? value.flat(Infinity) : [value]) {
    if (typeof item !== 'object' || item === null) continue;
    for (const [fieldName, fieldValue] of Object.entries(item as Record<string, unknown>)) {
      const field = fields[fieldName];
      if (field) cost += inputValueCost(context, fieldValue, field.type, info.fields.get(fieldName)?.weight);
    }
  }
  return cost;
}

/** Whether a field's type is a list at its outer level (`[T]`, `[T]!`); nested lists count as one list. */
export function isListField(field: GraphQLField<unknown, unknown>): boolean {
  return isListType(isNonNullType(field.type) ? field.type.ofType : field.type);
}
