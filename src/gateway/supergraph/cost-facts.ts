// The cost facts of a supergraph: @cost weights, @listSize settings and the subgraphs owning each field.
import {
  Kind,
  type ConstDirectiveNode,
  type ConstValueNode,
  type DefinitionNode,
  type DocumentNode,
  type FieldDefinitionNode,
  type InputValueDefinitionNode,
  type TypeNode,
} from 'graphql';
import { argumentValue } from '../plan/join-directives.js';
import type { SupergraphModel } from '../plan/supergraph-model.js';
import type { LinkNames } from './link-names.js';

/** `@listSize` on one field (IBM GraphQL Cost Directives, "The List Size Directive"). */
export interface ListSizeSettings {
  /** The size to assume when no slicing argument gives one; undefined: the estimator's default list size. */
  readonly assumedSize: number | undefined;
  /** Arguments whose value is the size of the returned list (`first`, `last`, `limit`). */
  readonly slicingArguments: readonly string[];
  /** Child fields the size applies to instead of this field (cursor connections: `edges`, `nodes`). */
  readonly sizedFields: readonly string[];
  /** Whether a query must give exactly one slicing argument. Default true, as in the spec. */
  readonly requireOneSlicingArgument: boolean;
}

/** The cost facts of one field, input field or enum value set, keyed by name for the hot path. */
export interface FieldCostInfo {
  /** `@cost(weight:)` on the field (or, for an object field, inherited from the interface field it implements). */
  readonly weight: number | undefined;
  readonly listSize: ListSizeSettings | undefined;
  /** `@cost(weight:)` of each argument that has one. */
  readonly argumentWeights: ReadonlyMap<string, number>;
  /** Registered names of the subgraphs that resolve the field, in supergraph order; empty for input fields. */
  readonly owners: readonly string[];
}

export interface TypeCostInfo {
  /** `@cost(weight:)` on the type (objects, scalars and enums may carry one). */
  readonly weight: number | undefined;
  /** Registered names of the subgraphs that define the type (`@join__type`), in supergraph order. */
  readonly owners: readonly string[];
  readonly fields: ReadonlyMap<string, FieldCostInfo>;
  /**
   * For input object types: whether a value of this type can cost anything (a weighted input field, or a
   * field of a weighted scalar or enum, here or in a nested input type). Lets the estimator skip argument
   * values that cannot add to the cost without walking them.
   */
  readonly inputCarriesCost: boolean;
}

export interface CostMetadata {
  /** Every `@cost` weight by schema coordinate: `Type`, `Type.field`, `Type.field(arg:)`, `Input.field`. */
  readonly weights: ReadonlyMap<string, number>;
  /** Every `@listSize` by field coordinate `Type.field`. */
  readonly listSizes: ReadonlyMap<string, ListSizeSettings>;
  /** Subgraphs (registered names) resolving each field `Type.field` and defining each type `Type`. */
  readonly owners: ReadonlyMap<string, readonly string[]>;
  /** The same facts grouped by type, then field: what the estimator reads, without building strings. */
  readonly types: ReadonlyMap<string, TypeCostInfo>;
  /** Registered names of all subgraphs of the supergraph, in `join__Graph` order. */
  readonly subgraphs: readonly string[];
}

interface MutableField {
  weight: number | undefined;
  listSize: ListSizeSettings | undefined;
  argumentWeights: Map<string, number>;
  owners: string[];
  /** The named type of the field, for the input-cost closure. */
  typeName: string;
}

interface MutableType {
  kind: 'object' | 'interface' | 'input' | 'other';
  weight: number | undefined;
  owners: string[];
  fields: Map<string, MutableField>;
  interfaces: string[];
}

/** The names the readers below compare with (see link-names.ts). */
type DirectiveNames = Pick<LinkNames, 'cost' | 'listSize'>;

/** Where owners come from: the supergraph's join facts, with graphs under their registered names. */
interface Owners {
  join: SupergraphModel;
  names: ReadonlyMap<string, string>;
}

/**
 * Reads the supergraph's cost metadata (through `Supergraph.cost`, once per served graph: it walks the
 * whole SDL); every lookup afterwards is a Map get.
 *
 * 1. Directive names come from the supergraph's `@link`s, resolved once for every reader
 *    (link-names.ts): the cost spec's root directive is `@cost` unless the link renames the namespace,
 *    `@listSize` is `@cost__listSize` unless imported; without a cost link, the plain names `@cost`
 *    and `@listSize` are read.
 * 2. Owners come from the join facts (the planner's `SupergraphModel`, the one reader of the join
 *    directives): a field's `@join__field(graph:)` list, skipping `external: true` and
 *    `usedOverridden: true` (those graphs do not resolve it); a field without any takes its type's
 *    `@join__type` list. Graph enum values are mapped to the names the subgraphs were registered with
 *    (`@join__graph(name:)`).
 * 3. An object field without its own `@cost`/`@listSize` inherits those of the interface field it
 *    implements, since execution resolves the concrete type's field.
 */
export function readCostFacts(document: DocumentNode, names: DirectiveNames, join: SupergraphModel): CostMetadata {
  const owners: Owners = { join, names: join.subgraphName };
  const types = new Map<string, MutableType>();
  for (const definition of document.definitions) readTypeDefinition(definition, types, names, owners);
  inheritFromInterfaces(types);
  return freeze(types, join.subgraphName);
}

function readTypeDefinition(definition: DefinitionNode, types: Map<string, MutableType>, names: DirectiveNames, owners: Owners): void {
  let kind: MutableType['kind'];
  switch (definition.kind) {
    case Kind.OBJECT_TYPE_DEFINITION:
    case Kind.OBJECT_TYPE_EXTENSION:
      kind = 'object';
      break;
    case Kind.INTERFACE_TYPE_DEFINITION:
    case Kind.INTERFACE_TYPE_EXTENSION:
      kind = 'interface';
      break;
    case Kind.INPUT_OBJECT_TYPE_DEFINITION:
    case Kind.INPUT_OBJECT_TYPE_EXTENSION:
      kind = 'input';
      break;
    case Kind.ENUM_TYPE_DEFINITION:
    case Kind.ENUM_TYPE_EXTENSION:
    case Kind.SCALAR_TYPE_DEFINITION:
    case Kind.SCALAR_TYPE_EXTENSION:
    case Kind.UNION_TYPE_DEFINITION:
    case Kind.UNION_TYPE_EXTENSION:
      kind = 'other';
      break;
    default:
      return;
  }
  const name = definition.name.value;
  let type = types.get(name);
  if (!type) types.set(name, (type = { kind, weight: undefined, owners: registeredNames(owners.join.typeGraphs(name), owners), fields: new Map(), interfaces: [] }));
  for (const directive of definition.directives ?? []) {
    if (directive.name.value === names.cost) type.weight = costWeight(directive) ?? type.weight;
  }
  if ('interfaces' in definition) for (const iface of definition.interfaces ?? []) type.interfaces.push(iface.name.value);
  if ('fields' in definition) {
    for (const field of definition.fields ?? []) type.fields.set(field.name.value, readField(name, field, names, owners));
  }
}

function readField(typeName: string, field: FieldDefinitionNode | InputValueDefinitionNode, names: DirectiveNames, owners: Owners): MutableField {
  const info: MutableField = { weight: undefined, listSize: undefined, argumentWeights: new Map(), owners: [], typeName: namedTypeName(field.type) };
  for (const directive of field.directives ?? []) {
    const directiveName = directive.name.value;
    if (directiveName === names.cost) info.weight = costWeight(directive);
    else if (directiveName === names.listSize) info.listSize = listSizeSettings(directive);
  }
  if (field.kind === Kind.FIELD_DEFINITION) info.owners = registeredNames(owners.join.fieldGraphs(typeName, field.name.value), owners);
  if (field.kind === Kind.FIELD_DEFINITION) {
    for (const argument of field.arguments ?? []) {
      const cost = argument.directives?.find((d) => d.name.value === names.cost);
      const weight = cost && costWeight(cost);
      if (weight !== undefined) info.argumentWeights.set(argument.name.value, weight);
    }
  }
  return info;
}

/** `join__Graph` values (PRODUCT) as registered names (product). */
function registeredNames(graphs: readonly string[], owners: Owners): string[] {
  return graphs.map((graph) => owners.names.get(graph) ?? graph);
}

function inheritFromInterfaces(types: Map<string, MutableType>): void {
  for (const type of types.values()) {
    if (type.kind !== 'object' && type.kind !== 'interface') continue;
    for (const interfaceName of type.interfaces) {
      const iface = types.get(interfaceName);
      if (!iface) continue;
      for (const [fieldName, field] of type.fields) {
        const inherited = iface.fields.get(fieldName);
        if (!inherited) continue;
        field.weight ??= inherited.weight;
        field.listSize ??= inherited.listSize;
        for (const [argument, weight] of inherited.argumentWeights) if (!field.argumentWeights.has(argument)) field.argumentWeights.set(argument, weight);
      }
    }
  }
}

function freeze(types: Map<string, MutableType>, graphNames: ReadonlyMap<string, string>): CostMetadata {
  const weights = new Map<string, number>();
  const listSizes = new Map<string, ListSizeSettings>();
  const owners = new Map<string, readonly string[]>();
  const frozen = new Map<string, TypeCostInfo>();
  const carriesCost = inputTypesCarryingCost(types);

  for (const [typeName, type] of types) {
    if (type.weight !== undefined) weights.set(typeName, type.weight);
    if (type.owners.length > 0) owners.set(typeName, type.owners);
    const fields = new Map<string, FieldCostInfo>();
    for (const [fieldName, field] of type.fields) {
      const coordinate = `${typeName}.${fieldName}`;
      // A field without @join__field is resolved by every subgraph that defines its type.
      const fieldOwners = type.kind === 'input' ? [] : field.owners.length > 0 ? field.owners : type.owners;
      if (field.weight !== undefined) weights.set(coordinate, field.weight);
      if (field.listSize) listSizes.set(coordinate, field.listSize);
      if (fieldOwners.length > 0) owners.set(coordinate, fieldOwners);
      for (const [argument, weight] of field.argumentWeights) weights.set(`${coordinate}(${argument}:)`, weight);
      fields.set(fieldName, { weight: field.weight, listSize: field.listSize, argumentWeights: field.argumentWeights, owners: fieldOwners });
    }
    frozen.set(typeName, { weight: type.weight, owners: type.owners, fields, inputCarriesCost: carriesCost.has(typeName) });
  }
  return { weights, listSizes, owners, types: frozen, subgraphs: [...graphNames.values()] };
}

/** Input types whose values can cost something, closed over nesting (fixpoint: input types may be recursive). */
function inputTypesCarryingCost(types: Map<string, MutableType>): Set<string> {
  const carrying = new Set<string>();
  for (let changed = true; changed; ) {
    changed = false;
    for (const [typeName, type] of types) {
      if (type.kind !== 'input' || carrying.has(typeName)) continue;
      for (const field of type.fields.values()) {
        if (field.weight !== undefined || types.get(field.typeName)?.weight !== undefined || carrying.has(field.typeName)) {
          carrying.add(typeName);
          changed = true;
          break;
        }
      }
    }
  }
  return carrying;
}

function costWeight(directive: ConstDirectiveNode): number | undefined {
  return numberValue(argumentValue(directive, 'weight'));
}

function listSizeSettings(directive: ConstDirectiveNode): ListSizeSettings {
  const required = argumentValue(directive, 'requireOneSlicingArgument');
  return {
    assumedSize: numberValue(argumentValue(directive, 'assumedSize')),
    slicingArguments: stringList(argumentValue(directive, 'slicingArguments')),
    sizedFields: stringList(argumentValue(directive, 'sizedFields')),
    // The directive definition defaults requireOneSlicingArgument to true.
    requireOneSlicingArgument: required?.kind === Kind.BOOLEAN ? required.value : true,
  };
}

/** Int as composed; Float and the IBM draft's stringified weights ("2.0") are read too. */
function numberValue(value: ConstValueNode | undefined): number | undefined {
  if (!value) return undefined;
  if (value.kind === Kind.INT || value.kind === Kind.FLOAT || value.kind === Kind.STRING) {
    const number = Number(value.value);
    return Number.isFinite(number) ? number : undefined;
  }
  return undefined;
}

function stringList(value: ConstValueNode | undefined): string[] {
  if (!value) return [];
  if (value.kind === Kind.STRING) return [value.value];
  if (value.kind !== Kind.LIST) return [];
  return value.values.flatMap((item) => (item.kind === Kind.STRING ? [item.value] : []));
}

function namedTypeName(type: TypeNode): string {
  return type.kind === Kind.NAMED_TYPE ? type.name.value : namedTypeName(type.type);
}
