// Actual cost of an executed operation (IBM GraphQL Cost Directives, "Static Response Analysis"): its total, for the cost histogram.
import {
  getNamedType,
  isLeafType,
  isObjectType,
  type DocumentNode,
  type FieldNode,
  type GraphQLAbstractType,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLSchema,
} from 'graphql';
import type { CostMetadata, FieldCostInfo } from './cost-metadata.js';
import { argumentsCost, collectFields, fieldCostInfo, isIntrospectionField, isListField, ownWeight, selectOperation, times, type CostContext, type CostOptions } from './cost-rules.js';

/**
 * Applies the estimate's rules (see `estimateCost`) to the response `data` instead of to assumptions,
 * so ops can compare estimated and actual cost (`switchyard_operation_cost{kind}`, after every
 * request) and tune `@listSize` and limits from real traffic:
 * 1. A list costs per element it actually holds (nested lists flattened), not per assumed size; slicing
 *    arguments, `assumedSize`, `sizedFields` and the default list size play no part.
 * 2. A field absent from the data (skipped, or under a parent that failed) costs nothing. A field present
 *    costs its arguments and, unless it is a list, its own weight once (its resolver ran, even if it
 *    answered null); below a null value nothing is counted.
 * 3. An object of an abstract type costs as its `__typename` says; without `__typename` in the data,
 *    the most expensive possible type is taken, as in the estimate.
 * Only the total is measured: no per-subgraph split, which on a large answer (thousands of objects, a
 * charge per field of each) was most of the measurement's time, and which nothing reads.
 */
export function actualTotalCost(
  schema: GraphQLSchema,
  metadata: CostMetadata,
  document: DocumentNode,
  data: Record<string, unknown> | null | undefined,
  options: Pick<CostOptions, 'operationName' | 'variables' | 'defaults'> = {},
): number {
  const selected = selectOperation(schema, metadata, document, options, new Set());
  if (!selected || !data) return 0;
  const { context, operation, rootType } = selected;
  const walk: Walk = { context, plans: new Map() };
  const rootFields = collectFields(context, rootType, [operation.selectionSet]).values();
  const plans = [...rootFields].map((group) => planField(walk, group, rootType, operation.operation === 'mutation'));
  return measureObject(walk, plans, data);
}

/**
 * What a field at one position costs apart from its data, worked out once per position: a list repeats
 * the same selection for each element, so collection, look-ups and argument costs are not redone per
 * element.
 */
interface FieldPlan {
  group: readonly FieldNode[];
  responseKey: string;
  argumentsCost: number;
  list: boolean;
  info: FieldCostInfo | undefined;
  mutationRoot: boolean;
  /** The field's own weight per value for a scalar or enum field; undefined for a composite one. */
  leafWeight: number | undefined;
  type: GraphQLNamedType;
  /** The returned object type and the field's own weight for it, when the type is not abstract. */
  objectType: GraphQLObjectType | undefined;
  objectWeight: number;
}

/** State of one measurement: the plans of the fields under each (field position, concrete type). */
interface Walk {
  context: CostContext;
  plans: Map<FieldPlan, Map<string, FieldPlan[]>>;
}

function planField(walk: Walk, group: readonly FieldNode[], parentType: GraphQLObjectType, mutationRoot: boolean): FieldPlan | undefined {
  const { context } = walk;
  const node = group[0];
  if (isIntrospectionField(node)) return undefined;
  const field = parentType.getFields()[node.name.value];
  if (!field) return undefined;
  const info = fieldCostInfo(context, parentType, field.name);
  const type = getNamedType(field.type);
  return {
    group,
    responseKey: node.alias?.value ?? node.name.value,
    argumentsCost: argumentsCost(context, node, field, info),
    list: isListField(field),
    info,
    mutationRoot,
    leafWeight: isLeafType(type) ? ownWeight(context, info, type, mutationRoot) : undefined,
    type,
    objectType: isObjectType(type) ? type : undefined,
    objectWeight: isObjectType(type) ? ownWeight(context, info, type, mutationRoot) : 0,
  };
}

function childPlans(walk: Walk, plan: FieldPlan, objectType: GraphQLObjectType): FieldPlan[] {
  let byType = walk.plans.get(plan);
  if (!byType) walk.plans.set(plan, (byType = new Map()));
  let plans = byType.get(objectType.name);
  if (!plans) {
    plans = [];
    for (const group of collectFields(walk.context, objectType, plan.group.map((f) => f.selectionSet)).values()) {
      const child = planField(walk, group, objectType, false);
      if (child) plans.push(child);
    }
    byType.set(objectType.name, plans);
  }
  return plans;
}

/** The fields of one object in the response, each measured against its data. */
function measureObject(walk: Walk, plans: readonly (FieldPlan | undefined)[], item: Record<string, unknown>): number {
  let cost = 0;
  for (const plan of plans) {
    if (!plan || !Object.prototype.hasOwnProperty.call(item, plan.responseKey)) continue;
    const value = item[plan.responseKey];
    cost += plan.argumentsCost;
    if (plan.leafWeight !== undefined) {
      const count = !plan.list ? 1 : Array.isArray(value) ? countElements(value) : 0;
      cost += times(count, plan.leafWeight);
    } else if (!plan.list) {
      cost += isObject(value) ? measureReturned(walk, plan, value) : ownWeight(walk.context, plan.info, plan.type, plan.mutationRoot);
    } else if (Array.isArray(value)) {
      cost += measureElements(walk, plan, value);
    }
  }
  return cost;
}

/** Nested lists are flattened: each object in them was returned. */
function measureElements(walk: Walk, plan: FieldPlan, list: readonly unknown[]): number {
  let cost = 0;
  for (const element of list) {
    if (Array.isArray(element)) cost += measureElements(walk, plan, element);
    else if (isObject(element)) cost += measureReturned(walk, plan, element);
  }
  return cost;
}

function countElements(list: readonly unknown[]): number {
  let count = 0;
  for (const element of list) count += Array.isArray(element) ? countElements(element) : 1;
  return count;
}

/** One object a composite field returned: the field's own weight for the object's type, plus its selection. */
function measureReturned(walk: Walk, plan: FieldPlan, item: Record<string, unknown>): number {
  const objectType = plan.objectType ?? typeOf(walk.context.schema, item);
  if (objectType) return measureAs(walk, plan, objectType, item);
  let most: number | undefined;
  for (const candidate of walk.context.schema.getPossibleTypes(plan.type as GraphQLAbstractType)) {
    const cost = measureAs(walk, plan, candidate, item);
    if (most === undefined || cost > most) most = cost;
  }
  return most ?? 0;
}

function measureAs(walk: Walk, plan: FieldPlan, objectType: GraphQLObjectType, item: Record<string, unknown>): number {
  const own = objectType === plan.objectType ? plan.objectWeight : ownWeight(walk.context, plan.info, objectType, plan.mutationRoot);
  return own + measureObject(walk, childPlans(walk, plan, objectType), item);
}

/** The concrete type `__typename` names, when the client asked for it. */
function typeOf(schema: GraphQLSchema, item: Record<string, unknown>): GraphQLObjectType | undefined {
  const typename = item.__typename;
  const type = typeof typename === 'string' ? schema.getType(typename) : undefined;
  return type && isObjectType(type) ? type : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
