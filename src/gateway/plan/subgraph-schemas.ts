// Each subgraph's own schema, read back from the supergraph's join directives: what a document sent to it must be valid against.
import {
  Kind,
  buildASTSchema,
  DirectiveLocation,
  parse,
  parseType,
  type ConstDirectiveNode,
  type DefinitionNode,
  type DirectiveDefinitionNode,
  type DocumentNode,
  type EnumValueDefinitionNode,
  type FieldDefinitionNode,
  type GraphQLSchema,
  type InputValueDefinitionNode,
  type NamedTypeNode,
  type TypeDefinitionNode,
  type TypeNode,
} from 'graphql';
import { readLinkNames, type LinkNames } from '../supergraph/link-names.js';
import { booleanArgument, enumArgument, stringArgument } from './join-directives.js';

/** The federation fields every subgraph with entities serves (Apollo Federation subgraph specification). */
const ENTITIES_SDL = /* GraphQL */ `
  scalar _Any
`;

/** Types of the join and link machinery, which no subgraph serves. */
function isMachinery(name: string, names: LinkNames): boolean {
  return names.machineryPrefixes.some((prefix) => name.startsWith(prefix));
}

function directivesNamed(node: { directives?: readonly ConstDirectiveNode[] }, name: string): ConstDirectiveNode[] {
  return node.directives?.filter((d) => d.name.value === name) ?? [];
}

/**
 * Rebuilds every subgraph's schema from the supergraph (join spec v0.3+), reading the join directives
 * under the names its `@link`s give them (`names`, decision 014; `join__type` and friends by default):
 * 1. a type belongs to the graphs its `@join__type`s name (every graph when it has none);
 *    an `@interfaceObject` interface is an object type in the graph that declares it so;
 * 2. a field belongs to the graphs its `@join__field`s name (every graph of its type when it has
 *    none), with the type that graph gave it (`type:`, which differs in nullability for shareable
 *    fields); an external field stays (it is part of the graph's schema), an overridden-away one too;
 * 3. interfaces, union members and enum values by `@join__implements`, `@join__unionMember` and
 *    `@join__enumValue` (all of them when a type carries none);
 * 4. `_entities(representations: [_Any!]!): [_Entity]!` over the graph's entity types.
 * 5. the supergraph's executable directives (composition keeps those every subgraph defines), which
 *    plans pass on with the client's fields; type-system directives other than `@deprecated` and
 *    `@specifiedBy` are left out.
 */
export function extractSubgraphSchemas(supergraph: DocumentNode, names: LinkNames = readLinkNames(supergraph)): Map<string, GraphQLSchema> {
  const graphs: string[] = [];
  const types: TypeDefinitionNode[] = [];
  const executable: DirectiveDefinitionNode[] = [];
  let queryName = 'Query';
  let mutationName: string | undefined;
  let subscriptionName: string | undefined;
  for (const definition of supergraph.definitions) {
    if (definition.kind === Kind.ENUM_TYPE_DEFINITION && definition.name.value === names.joinGraphEnum) {
      for (const value of definition.values ?? []) graphs.push(value.name.value);
    } else if (definition.kind === Kind.SCHEMA_DEFINITION) {
      for (const operation of definition.operationTypes) {
        if (operation.operation === 'query') queryName = operation.type.name.value;
        else if (operation.operation === 'mutation') mutationName = operation.type.name.value;
        else subscriptionName = operation.type.name.value;
      }
    } else if (isTypeDefinition(definition) && !isMachinery(definition.name.value, names)) {
      types.push(definition);
    } else if (definition.kind === Kind.DIRECTIVE_DEFINITION && definition.locations.every((l) => EXECUTABLE_LOCATIONS.has(l.value))) {
      executable.push(definition);
    }
  }
  if (!mutationName && types.some((t) => t.name.value === 'Mutation')) mutationName = 'Mutation';
  if (!subscriptionName && types.some((t) => t.name.value === 'Subscription')) subscriptionName = 'Subscription';
  const schemas = new Map<string, GraphQLSchema>();
  for (const graph of graphs) schemas.set(graph, buildGraphSchema(graph, names, types, executable, { query: queryName, mutation: mutationName, subscription: subscriptionName }));
  return schemas;
}

function isTypeDefinition(definition: DefinitionNode): definition is TypeDefinitionNode {
  return (
    definition.kind === Kind.OBJECT_TYPE_DEFINITION ||
    definition.kind === Kind.INTERFACE_TYPE_DEFINITION ||
    definition.kind === Kind.UNION_TYPE_DEFINITION ||
    definition.kind === Kind.ENUM_TYPE_DEFINITION ||
    definition.kind === Kind.INPUT_OBJECT_TYPE_DEFINITION ||
    definition.kind === Kind.SCALAR_TYPE_DEFINITION
  );
}

function inGraph(node: TypeDefinitionNode, graph: string, names: LinkNames): boolean {
  const joins = directivesNamed(node, names.joinType);
  return joins.length === 0 || joins.some((d) => enumArgument(d, 'graph') === graph);
}

function namedTypeOf(type: TypeNode): string {
  return type.kind === Kind.NAMED_TYPE ? type.name.value : namedTypeOf(type.type);
}

const KEPT_DIRECTIVES = new Set(['deprecated', 'specifiedBy']);

/** Where an executable directive may stand (GraphQL spec 3.13, ExecutableDirectiveLocation). */
const EXECUTABLE_LOCATIONS = new Set<string>([
  DirectiveLocation.QUERY,
  DirectiveLocation.MUTATION,
  DirectiveLocation.SUBSCRIPTION,
  DirectiveLocation.FIELD,
  DirectiveLocation.FRAGMENT_DEFINITION,
  DirectiveLocation.FRAGMENT_SPREAD,
  DirectiveLocation.INLINE_FRAGMENT,
  DirectiveLocation.VARIABLE_DEFINITION,
]);

function buildGraphSchema(graph: string, names: LinkNames, all: readonly TypeDefinitionNode[], executable: readonly DirectiveDefinitionNode[], roots: { query: string; mutation?: string; subscription?: string }): GraphQLSchema {
  const present = new Map<string, TypeDefinitionNode>();
  for (const type of all) if (inGraph(type, graph, names)) present.set(type.name.value, type);
  const has = (name: string) => present.has(name) || ['String', 'Int', 'Float', 'Boolean', 'ID'].includes(name);
  const entities: string[] = [];
  const definitions: DefinitionNode[] = [];

  const field = (node: FieldDefinitionNode, typeHasJoins: boolean): FieldDefinitionNode | undefined => {
    const joins = directivesNamed(node, names.joinField);
    let type: TypeNode = node.type;
    if (joins.length > 0 || !typeHasJoins) {
      const own = joins.filter((d) => enumArgument(d, 'graph') === graph);
      if (joins.length > 0 && own.length === 0) return undefined;
      const declared = own.map((d) => stringArgument(d, 'type')).find((t) => t !== undefined);
      if (declared) type = parseType(declared, { noLocation: true });
    }
    if (!has(namedTypeOf(type))) return undefined;
    const args = (node.arguments ?? []).filter((a) => has(namedTypeOf(a.type))).map(cleanInputValue);
    return { ...node, type, arguments: args, directives: keptDirectives(node) };
  };

  for (const [name, node] of present) {
    if (node.kind === Kind.SCALAR_TYPE_DEFINITION) {
      definitions.push({ ...node, directives: keptDirectives(node) });
    } else if (node.kind === Kind.ENUM_TYPE_DEFINITION) {
      const values = node.values ?? [];
      const joined = values.some((v) => directivesNamed(v, names.joinEnumValue).length > 0);
      const own = joined ? values.filter((v) => directivesNamed(v, names.joinEnumValue).some((d) => enumArgument(d, 'graph') === graph)) : values;
      definitions.push({ ...node, values: own.map((v): EnumValueDefinitionNode => ({ ...v, directives: keptDirectives(v) })), directives: [] });
    } else if (node.kind === Kind.INPUT_OBJECT_TYPE_DEFINITION) {
      const fields = (node.fields ?? []).filter((f) => {
        const joins = directivesNamed(f, names.joinField);
        return (joins.length === 0 || joins.some((d) => enumArgument(d, 'graph') === graph)) && has(namedTypeOf(f.type));
      });
      definitions.push({ ...node, fields: fields.map(cleanInputValue), directives: [] });
    } else if (node.kind === Kind.UNION_TYPE_DEFINITION) {
      const members = directivesNamed(node, names.joinUnionMember);
      const own = members.length > 0 ? members.filter((d) => enumArgument(d, 'graph') === graph).map((d) => stringArgument(d, 'member')!) : (node.types ?? []).map((t) => t.name.value);
      const types = own.filter((member) => present.get(member)?.kind === Kind.OBJECT_TYPE_DEFINITION || isInterfaceObjectIn(present.get(member), graph, names));
      if (types.length > 0) definitions.push({ ...node, types: types.map(named), directives: [] });
      else present.delete(name);
    } else {
      const joinType = directivesNamed(node, names.joinType).find((d) => enumArgument(d, 'graph') === graph);
      if (joinType && stringArgument(joinType, 'key') !== undefined && node.kind === Kind.OBJECT_TYPE_DEFINITION) entities.push(name);
      const interfaceObject = joinType !== undefined && booleanArgument(joinType, 'isInterfaceObject') === true;
      if (interfaceObject && joinType && stringArgument(joinType, 'key') !== undefined) entities.push(name);
      const typeHasJoins = directivesNamed(node, names.joinType).length > 0;
      const fields = (node.fields ?? []).map((f) => field(f, typeHasJoins)).filter((f): f is FieldDefinitionNode => f !== undefined);
      const implementsJoins = directivesNamed(node, names.joinImplements);
      const interfaces = interfaceObject
        ? []
        : (implementsJoins.length > 0 ? implementsJoins.filter((d) => enumArgument(d, 'graph') === graph).map((d) => stringArgument(d, 'interface')!) : (node.interfaces ?? []).map((i) => i.name.value)).filter(
            (i) => present.get(i)?.kind === Kind.INTERFACE_TYPE_DEFINITION && !isInterfaceObjectIn(present.get(i), graph, names),
          );
      if (fields.length === 0) continue;
      definitions.push({
        kind: interfaceObject ? Kind.OBJECT_TYPE_DEFINITION : node.kind,
        name: node.name,
        description: node.description,
        interfaces: interfaces.map(named),
        fields,
        directives: [],
      } as TypeDefinitionNode);
    }
  }
  for (const directive of executable) if ((directive.arguments ?? []).every((a) => has(namedTypeOf(a.type)))) definitions.push(directive);
  const federation = parse(ENTITIES_SDL, { noLocation: true }).definitions;
  definitions.push(...federation);
  const query = definitions.find((d) => d.kind === Kind.OBJECT_TYPE_DEFINITION && d.name.value === roots.query);
  const entitiesField = parse(`type Q { _entities(representations: [_Any!]!): [_Entity]! }`, { noLocation: true }).definitions[0];
  if (entities.length > 0 && entitiesField.kind === Kind.OBJECT_TYPE_DEFINITION) {
    definitions.push({ kind: Kind.UNION_TYPE_DEFINITION, name: { kind: Kind.NAME, value: '_Entity' }, types: entities.map(named) });
    if (query && query.kind === Kind.OBJECT_TYPE_DEFINITION) {
      definitions[definitions.indexOf(query)] = { ...query, fields: [...(query.fields ?? []), ...(entitiesField.fields ?? [])] };
    } else {
      definitions.push({ ...entitiesField, name: { kind: Kind.NAME, value: roots.query } });
    }
  }
  const hasDefinition = (name: string | undefined) => name !== undefined && definitions.some((d) => d.kind === Kind.OBJECT_TYPE_DEFINITION && d.name.value === name);
  const operationTypes = (['query', 'mutation', 'subscription'] as const)
    .filter((operation) => hasDefinition(roots[operation]))
    .map((operation) => ({ kind: Kind.OPERATION_TYPE_DEFINITION, operation, type: named(roots[operation]!) }));
  definitions.push({ kind: Kind.SCHEMA_DEFINITION, operationTypes } as DefinitionNode);
  return buildASTSchema({ kind: Kind.DOCUMENT, definitions } as DocumentNode, { assumeValid: true, assumeValidSDL: true });
}

function isInterfaceObjectIn(node: TypeDefinitionNode | undefined, graph: string, names: LinkNames): boolean {
  return node !== undefined && directivesNamed(node, names.joinType).some((d) => enumArgument(d, 'graph') === graph && booleanArgument(d, 'isInterfaceObject') === true);
}

function named(name: string): NamedTypeNode {
  return { kind: Kind.NAMED_TYPE, name: { kind: Kind.NAME, value: name } };
}

function keptDirectives<T extends { directives?: readonly ConstDirectiveNode[] }>(node: T): ConstDirectiveNode[] {
  return node.directives?.filter((d) => KEPT_DIRECTIVES.has(d.name.value)) ?? [];
}

function cleanInputValue(node: InputValueDefinitionNode): InputValueDefinitionNode {
  return { ...node, directives: keptDirectives(node) };
}
