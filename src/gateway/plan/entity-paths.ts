// Where an entity look-up can go: which subgraph serves a field at a position, and by which key the current subgraph can reach it (3, 8).
import {
  getNamedType,
  isAbstractType,
  isCompositeType,
  isInterfaceType,
  isObjectType,
  isUnionType,
  type GraphQLCompositeType,
  type GraphQLInterfaceType,
  type GraphQLObjectType,
  type GraphQLSchema,
} from 'graphql';
import { PROVIDED_ON, PlanUnsatisfiable, PlanUnsupported, type FieldSetTree, type SupergraphModel } from './supergraph-model.js';
import { mergeTree } from './selection-tree.js';
import { TYPENAME } from './selection-tree.js';

/** What choosing a subgraph reads: the supergraph, the API schema and the progressive-override labels switched on. */
export interface PlanContext {
  readonly model: SupergraphModel;
  readonly schema: GraphQLSchema;
  readonly labels: ReadonlySet<string>;
}

/** Where an entity look-up goes: the subgraph, the key, and the interface it is looked up as (8). */
export interface Target {
  graph: string;
  key: string;
  lookupType?: string;
}

/** How deep a key may be reached through other subgraphs' keys (3 is more hops than real graphs use). */
const MAX_KEY_HOPS = 3;

/**
 * The subgraphs that could answer the objects at a position, and, below a union field, the members
 * every one of them has there (undefined: no narrowing). The root's scope is every subgraph.
 */
export interface Scope {
  readonly graphs: ReadonlySet<string>;
  readonly members?: ReadonlySet<string>;
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
 * A subgraph that resolves the field, by a key the current subgraph can return (preferring a
 * step already made there); else one whose key the current subgraph can obtain through other
 * subgraphs' keys (3).
 */
export function chooseTarget(
  ctx: PlanContext,
  type: GraphQLObjectType | GraphQLInterfaceType,
  fieldName: string,
  graph: string,
  provided: FieldSetTree | undefined,
  /** Whether `graph` already has an entity step at this position: such a subgraph is preferred (fewer calls). */
  hasEntityStep: (graph: string) => boolean,
  /** How many fields below the field `graph` would leave to further look-ups (see `preference`). */
  missingBelow: (graph: string) => number = () => 0,
): Target {
  // A field with @requires in the current subgraph is resolved there too, but by a look-up that carries what it requires.
  const candidates = ctx.model.resolversOf(type.name, fieldName, ctx.labels).filter((g) => g !== graph || ctx.model.requiresOf(type.name, fieldName, g) !== undefined);
  const rank = new Map(candidates.map((g) => [g, candidates.length > 1 ? preference(missingBelow(g), hasEntityStep(g)) : 0]));
  candidates.sort((a, b) => rank.get(a)! - rank.get(b)!);
  for (const candidate of candidates) {
    for (const key of ctx.model.keysIn(type.name, candidate)) {
      if (canReturn(ctx, type, ctx.model.fieldSet(key), graph, provided)) return { graph: candidate, key };
    }
  }
  for (const candidate of candidates) {
    for (const key of ctx.model.keysIn(type.name, candidate)) {
      if (canObtain(ctx, type, ctx.model.fieldSet(key), graph, provided, MAX_KEY_HOPS)) return { graph: candidate, key };
    }
  }
  // 8. A field an `@interfaceObject` adds to an interface: looked up as the interface there.
  if (isObjectType(type)) {
    for (const iface of type.getInterfaces()) {
      if (!iface.getFields()[fieldName]) continue;
      for (const candidate of ctx.model.graphsOf(iface.name)) {
        if (candidate === graph || !ctx.model.isInterfaceObject(iface.name, candidate) || !ctx.model.canResolve(iface.name, fieldName, candidate, ctx.labels)) continue;
        for (const key of ctx.model.keysIn(iface.name, candidate)) {
          if (canReturn(ctx, type, ctx.model.fieldSet(key), graph, provided)) return { graph: candidate, key, lookupType: iface.name };
        }
      }
    }
  }
  // canObtain reaches a key's top-level fields through other subgraphs, not the fields inside a
  // nested key (`products { id pid }`), which other look-ups of the nested objects could bring:
  // with such a key the search is not complete, and the field not shown to have no source.
  const nested = candidates.some((c) => ctx.model.keysIn(type.name, c).some((key) => [...ctx.model.fieldSet(key).values()].some((sub) => sub.size > 0)));
  if (nested) throw new PlanUnsupported(`no entity path found from ${graph} to ${type.name}.${fieldName} (a nested key)`);
  throw new PlanUnsatisfiable(`no entity path from ${graph} to ${type.name}.${fieldName}`);
}

/** Whether chooseTarget finds an entity look-up from `graph` to a subgraph that resolves the field. */
export function hasTarget(ctx: PlanContext, type: GraphQLObjectType | GraphQLInterfaceType, fieldName: string, graph: string, provided: FieldSetTree | undefined): boolean {
  try {
    chooseTarget(ctx, type, fieldName, graph, provided, () => false);
    return true;
  } catch (error) {
    if (error instanceof PlanUnsupported) return false;
    throw error;
  }
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

/**
 * How a subgraph that resolves a field ranks among others that do (lower first), from how many
 * fields of the client's selection below the field it leaves to look-ups after it, and whether it
 * is `preferred` (already asked there, so no further call): one that leaves none saves a sequential
 * step, so it comes first; then a preferred one saves a call; then fewer fields left over.
 */
export function preference(missing: number, preferred: boolean): number {
  return (missing > 0 ? 2 : 0) * 1e6 + (preferred ? 0 : 1e6) + Math.min(missing, 1e6 - 1);
}

/** Whether `graph` can return every field of the set on objects of `type` by itself. */
export function canReturn(ctx: PlanContext, type: GraphQLObjectType | GraphQLInterfaceType, fields: FieldSetTree, graph: string, provided: FieldSetTree | undefined): boolean {
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
export function canObtain(ctx: PlanContext, type: GraphQLObjectType | GraphQLInterfaceType, fields: FieldSetTree, graph: string, provided: FieldSetTree | undefined, hops: number): boolean {
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
