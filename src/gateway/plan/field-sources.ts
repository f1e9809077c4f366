// Which subgraphs can answer a field where it is asked, and what they hold there (rules 1, 2, 3, 5, 8 and 12 of build-plan.ts): scopes, keys they can be given, their fields' types and aliases, what `@provides` provides, how much of a selection each resolves.
import {
  getNamedType,
  isAbstractType,
  isCompositeType,
  isInterfaceType,
  isObjectType,
  isUnionType,
  type FieldNode,
  type GraphQLCompositeType,
  type GraphQLInterfaceType,
  type GraphQLObjectType,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';
import type { OperationAnalysis } from '../../request/operation-analysis.js';
import { collectFields, subSelections } from './collect-fields.js';
import type { PlannedField, Scope } from './plan-types.js';
import { PROVIDED_ON, PlanUnsatisfiable, PlanUnsupported, type FieldSetTree, type SupergraphModel } from './supergraph-model.js';
import { TYPENAME, addLeaf, mergeTree } from './selection-tree.js';

/** What choosing a subgraph reads: the supergraph, the API schema and the progressive-override labels switched on. */
export interface PlanContext {
  readonly model: SupergraphModel;
  readonly schema: GraphQLSchema;
  readonly labels: ReadonlySet<string>;
}

/** What counting coverage reads besides: the client operation's analysis (its fragments and memoised CollectFields). */
export interface CoverageContext extends PlanContext {
  readonly analysis: OperationAnalysis;
}

/** How much of a field's sub-selection a subgraph resolves by itself, against all of it (fields at every depth). */
export interface Coverage {
  readonly covered: number;
  readonly total: number;
}

/**
 * The scope of a field's objects, planned in `graph` at a position of scope `parent`.
 * 1. Besides `graph`, any subgraph that resolves the field could answer it when it reaches the
 *    parent objects: it is in the parent's scope, or the parent is an entity it resolves by a key
 *    `graph` can obtain. A value type is reached only along its own path, so below a shareable
 *    value type that one subgraph returns, that subgraph alone answers.
 * 2. At a union field answered by several, the answer must not depend on which of them the plan
 *    asks: only the members all of them have there are planned. An object of another member keeps
 *    its `__typename` and nothing else, its fields null (graphql-hive's federation audit,
 *    partial-union and partial-union-complex; Hive Router narrows partial unions the same way).
 */
export function fieldScope(ctx: PlanContext, type: GraphQLObjectType | GraphQLInterfaceType, fieldName: string, graph: string, parent: Scope, provided: FieldSetTree | undefined): Scope {
  const graphs = new Set<string>([graph]);
  for (const candidate of ctx.model.resolversOf(type.name, fieldName, ctx.labels)) {
    if (graphs.has(candidate)) continue;
    if (parent.graphs.has(candidate) || ctx.model.keysIn(type.name, candidate).some((key) => canObtain(ctx, type, ctx.model.fieldSet(key), graph, provided, MAX_KEY_HOPS))) graphs.add(candidate);
  }
  if (graphs.size === 1 || !isUnionType(getNamedType(type.getFields()[fieldName].type))) return { graphs };
  let members: Set<string> | undefined;
  for (const candidate of graphs) {
    const own = localMembers(ctx, type.name, fieldName, candidate);
    members = members ? new Set([...members].filter((member) => own.has(member))) : own;
  }
  return { graphs, members };
}

/** The object types a subgraph can return at a field, by its own schema: the field's type, or its possible types. */
function localMembers(ctx: PlanContext, typeName: string, fieldName: string, graph: string): Set<string> {
  const schema = ctx.model.subgraphSchema(graph);
  const local = schema.getType(typeName);
  const field = local && (isObjectType(local) || isInterfaceType(local)) ? local.getFields()[fieldName] : undefined;
  if (!field) return new Set();
  const named = getNamedType(field.type);
  if (isAbstractType(named)) return new Set(schema.getPossibleTypes(named).map((t) => t.name));
  return isObjectType(named) ? new Set([named.name]) : new Set();
}

/**
 * A subgraph with the real interface that resolves it by a key the interface object's subgraph can
 * return, and has implementations of it (one without any can name no concrete type: its `_entities`
 * cannot even hold the interface). None: the concrete type cannot be had.
 */
export function typeResolver(ctx: PlanContext, iface: GraphQLInterfaceType, graph: string, provided: FieldSetTree | undefined): { graph: string; key: string } {
  for (const candidate of ctx.model.graphsOf(iface.name)) {
    if (candidate === graph || ctx.model.isInterfaceObject(iface.name, candidate)) continue;
    const schema = ctx.model.subgraphSchema(candidate);
    const local = schema.getType(iface.name);
    if (!local || !isAbstractType(local) || schema.getPossibleTypes(local).length === 0) continue;
    for (const key of ctx.model.keysIn(iface.name, candidate)) if (canReturn(ctx, iface, ctx.model.fieldSet(key), graph, provided)) return { graph: candidate, key };
  }
  throw new PlanUnsatisfiable(`no subgraph tells the concrete type of ${iface.name} objects from ${graph}`);
}

/** The alias of a field whose type in `graph` differs from the supergraph's (5); undefined when it has none. */
export function subgraphKey(model: SupergraphModel, type: GraphQLObjectType | GraphQLInterfaceType, fieldName: string, graph: string, key: string): string | undefined {
  const local = model.subgraphSchema(graph).getType(type.name);
  const localField = local && (isObjectType(local) || isInterfaceType(local)) ? local.getFields()[fieldName] : undefined;
  if (!localField) return undefined;
  const localType = String(localField.type);
  if (localType === String(type.getFields()[fieldName].type)) return undefined;
  return `${key}__${localType.replace(/!/g, '_nn').replace(/\[/g, '_l').replace(/\]/g, '')}`;
}

/**
 * The named type `graph` gives the field, when objects of `child` can stand below it there: the
 * same type, or an abstract one `child` is a possible type of in that subgraph (then the step
 * selects them in a fragment); undefined when they cannot.
 */
export function localFieldType(model: SupergraphModel, parent: GraphQLObjectType | GraphQLInterfaceType, fieldName: string, child: GraphQLObjectType | GraphQLInterfaceType, graph: string): GraphQLCompositeType | undefined {
  const schema = model.subgraphSchema(graph);
  const local = schema.getType(parent.name);
  const field = local && (isObjectType(local) || isInterfaceType(local)) ? local.getFields()[fieldName] : undefined;
  const named = field && getNamedType(field.type);
  if (!named || !isCompositeType(named)) return undefined;
  if (named.name === child.name) return named;
  const localChild = schema.getType(child.name);
  return isAbstractType(named) && isObjectType(localChild) && schema.isSubType(named, localChild) ? named : undefined;
}

/** How deep a key may be reached through other look-ups (3 is more hops than real graphs use). */
export const MAX_KEY_HOPS = 3;

/**
 * Whether a subgraph that resolves the field is reached by a look-up at this position, by a key
 * `graph` can give the objects (directly or through other subgraphs' keys) (3).
 */
export function hasLookup(ctx: PlanContext, type: GraphQLObjectType | GraphQLInterfaceType, fieldName: string, graph: string, provided: FieldSetTree | undefined): boolean {
  return ctx.model
    .resolversOf(type.name, fieldName, ctx.labels)
    .some((candidate) => (candidate !== graph || ctx.model.requiresOf(type.name, fieldName, candidate) !== undefined) && ctx.model.keysIn(type.name, candidate).some((key) => canObtain(ctx, type, ctx.model.fieldSet(key), graph, provided, MAX_KEY_HOPS)));
}

/**
 * What a `@provides` provides on objects of `type` (an object type, or an interface for what holds
 * on all its objects): the fields outside any type condition, and those of each condition that
 * applies to it (the type itself, or an abstract type it belongs to), nested ones too.
 */
export function providedFor(provided: FieldSetTree | undefined, type: GraphQLObjectType | GraphQLInterfaceType, schema: GraphQLSchema): FieldSetTree | undefined {
  if (!provided) return undefined;
  let conditional = false;
  for (const key of provided.keys()) if (key.startsWith(PROVIDED_ON)) conditional = true;
  if (!conditional) return provided;
  const narrowed: FieldSetTree = new Map();
  for (const [key, sub] of provided) {
    if (!key.startsWith(PROVIDED_ON)) {
      mergeTree(narrowed, new Map([[key, sub]]));
      continue;
    }
    const conditionName = key.slice(PROVIDED_ON.length);
    const condition = schema.getType(conditionName);
    const applies = conditionName === type.name || (condition !== undefined && condition !== null && isAbstractType(condition) && schema.isSubType(condition, type));
    if (applies) mergeTree(narrowed, providedFor(sub, type, schema)!);
  }
  return narrowed;
}

/** Whether `graph` can return every field of the set on objects of `type` by itself. */
function canReturn(ctx: PlanContext, type: GraphQLObjectType | GraphQLInterfaceType, fields: FieldSetTree, graph: string, provided: FieldSetTree | undefined): boolean {
  for (const [name, sub] of fields) {
    if (name === TYPENAME) continue;
    if (!(provided?.has(name) || (ctx.model.canResolve(type.name, name, graph, ctx.labels) && !ctx.model.requiresOf(type.name, name, graph)))) return false;
    if (sub.size === 0) continue;
    const fieldType = compositeTypeOf(type, name);
    if (!fieldType || !isObjectType(fieldType)) return false;
    if (!canReturn(ctx, fieldType, sub, graph, providedFor(provided?.get(name), fieldType, ctx.schema))) return false;
  }
  return true;
}

/** Whether the fields can be had at this position from `graph`, or through at most `hops` look-ups by other subgraphs' keys. */
function canObtain(ctx: PlanContext, type: GraphQLObjectType | GraphQLInterfaceType, fields: FieldSetTree, graph: string, provided: FieldSetTree | undefined, hops: number): boolean {
  for (const [name, sub] of fields) {
    const one: FieldSetTree = new Map([[name, sub]]);
    if (canReturn(ctx, type, one, graph, provided)) continue;
    if (hops === 0) return false;
    const found = ctx.model
      .resolversOf(type.name, name, ctx.labels)
      .filter((g) => g !== graph && canReturn(ctx, type, one, g, undefined))
      .some((g) => ctx.model.keysIn(type.name, g).some((key) => canObtain(ctx, type, ctx.model.fieldSet(key), graph, provided, hops - 1)));
    if (!found) return false;
  }
  return true;
}

/** The field's named type when it is composite (object, interface, union); undefined for a leaf. */
export function compositeTypeOf(type: GraphQLObjectType | GraphQLInterfaceType, fieldName: string): GraphQLCompositeType | undefined {
  const field = type.getFields()[fieldName];
  if (!field) throw new PlanUnsupported(`${type.name}.${fieldName} is not in the supergraph`);
  const named = getNamedType(field.type);
  return isCompositeType(named) ? named : undefined;
}

/** A position with the type at each response key of its path (Frame.position). */
export function typedPosition(parent: string | undefined, key: string | undefined, typeName: string): string {
  return parent === undefined ? typeName : `${parent}\u0001${key}\u0002${typeName}`;
}

/** How deep below a field its coverage is counted (deeper fields rarely decide between subgraphs). */
const COVERAGE_DEPTH = 4;

/**
 * How much of the client's selection below a field `graph` resolves by itself, counted to
 * COVERAGE_DEPTH: a field counts where the subgraph resolves it (or a field above it
 * `@provides` it there) and every field above it. Denials and `@skip`/`@include` are not
 * weighed: this only ranks subgraphs (1, 12).
 */
export function coverage(ctx: CoverageContext, type: GraphQLObjectType | GraphQLInterfaceType, name: string, nodes: readonly FieldNode[], graph: string): Coverage {
  const { model, schema, analysis, labels } = ctx;
  const counts = { covered: 0, total: 0 };
  const count = (type: GraphQLCompositeType, selectionSets: readonly (SelectionSetNode | undefined)[], graph: string | undefined, provided: FieldSetTree | undefined, depth: number): void => {
    if (depth === 0) return;
    for (const possible of isObjectType(type) ? [type] : schema.getPossibleTypes(type)) {
      const typed = providedFor(provided, possible, schema);
      for (const [, nodes] of collectFields(schema, analysis, possible, selectionSets)) {
        const name = nodes[0].name.value;
        if (name === TYPENAME) continue;
        counts.total++;
        const here = graph !== undefined && (typed?.has(name) === true || (model.canResolve(possible.name, name, graph, labels) && !model.requiresOf(possible.name, name, graph)));
        if (here) counts.covered++;
        const returnType = compositeTypeOf(possible, name);
        if (!returnType) continue;
        const own = here ? model.providesOf(possible.name, name, graph!) : undefined;
        count(returnType, subSelections(nodes), here ? graph : undefined, typed?.get(name) ?? (own ? model.providedSet(own) : undefined), depth - 1);
      }
    }
  };
  const returnType = compositeTypeOf(type, name);
  const own = model.providesOf(type.name, name, graph);
  if (returnType) count(returnType, subSelections(nodes), graph, own ? model.providedSet(own) : undefined, COVERAGE_DEPTH);
  return counts;
}

/**
 * The type a subgraph returns at a field: a shareable field may be an object type in one
 * subgraph (Book) where the supergraph has its abstract type (Media). Then only that type's
 * fragments apply, and `__typename` is fetched for the projection to resolve the abstract type (5).
 */
export function positionType(ctx: PlanContext, type: GraphQLObjectType | GraphQLInterfaceType, fieldName: string, graph: string, returnType: GraphQLCompositeType, planned: PlannedField): GraphQLCompositeType {
  if (!isAbstractType(returnType)) return returnType;
  const local = ctx.model.subgraphSchema(graph).getType(type.name);
  const localField = local && (isObjectType(local) || isInterfaceType(local)) ? local.getFields()[fieldName] : undefined;
  const localName = localField ? getNamedType(localField.type).name : returnType.name;
  if (localName === returnType.name) return returnType;
  const narrowed = ctx.schema.getType(localName);
  if (!narrowed || !isCompositeType(narrowed)) return returnType;
  addLeaf(planned.selection!, TYPENAME);
  return narrowed;
}
