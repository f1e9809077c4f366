// Reading the client's selections: GraphQL's CollectFields for one concrete type, and the field sets of keys and @requires.
import {
  Kind,
  isAbstractType,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLObjectType,
  type GraphQLSchema,
  type SelectionNode,
  type SelectionSetNode,
} from 'graphql';
import { PlanUnsupported } from './supergraph-model.js';

/**
 * GraphQL's CollectFields (spec 6.3.2) for one concrete type, with every `@skip`/`@include` taken
 * as "maybe": what they exclude is decided per request, by the subgraph for a field's own
 * conditions and by the projection for everything (a fragment's condition is not sent, its fields
 * are fetched). Any other directive cannot be planned.
 */
export function collectFields(schema: GraphQLSchema, fragments: ReadonlyMap<string, FragmentDefinitionNode>, type: GraphQLObjectType, selections: readonly SelectionNode[], into = new Map<string, FieldNode[]>(), seen = new Set<string>()): Map<string, FieldNode[]> {
  for (const selection of selections) {
    for (const directive of selection.directives ?? []) {
      if (directive.name.value !== 'skip' && directive.name.value !== 'include') throw new PlanUnsupported(`the @${directive.name.value} directive`);
    }
    if (selection.kind === Kind.FIELD) {
      const key = selection.alias?.value ?? selection.name.value;
      const list = into.get(key);
      if (list) list.push(selection);
      else into.set(key, [selection]);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      if (!selection.typeCondition || applies(schema, selection.typeCondition.name.value, type)) collectFields(schema, fragments, type, selection.selectionSet.selections, into, seen);
    } else {
      const name = selection.name.value;
      const fragment = fragments.get(name);
      if (!fragment) throw new PlanUnsupported(`unknown fragment ${name}`);
      if (seen.has(name) || !applies(schema, fragment.typeCondition.name.value, type)) continue;
      seen.add(name);
      collectFields(schema, fragments, type, fragment.selectionSet.selections, into, seen);
      seen.delete(name);
    }
  }
  return into;
}

/** Whether a type condition applies to objects of `type` (GraphQL spec 6.3.2, DoesFragmentTypeApply). */
function applies(schema: GraphQLSchema, condition: string, type: GraphQLObjectType): boolean {
  if (condition === type.name) return true;
  const conditionType = schema.getType(condition);
  return conditionType !== undefined && isAbstractType(conditionType) && schema.isSubType(conditionType, type);
}

/** The fields of a field set, by name, as CollectFields would give them. */
export function fieldSetFields(selectionSet: SelectionSetNode): Map<string, FieldNode[]> {
  const fields = new Map<string, FieldNode[]>();
  for (const selection of selectionSet.selections) if (selection.kind === Kind.FIELD) fields.set(selection.name.value, [selection]);
  return fields;
}

/** The fields without the response keys another step serves (8). */
export function without(fields: Map<string, FieldNode[]>, skip: ReadonlySet<string> | undefined): Map<string, FieldNode[]> {
  if (!skip || skip.size === 0) return fields;
  for (const key of skip) fields.delete(key);
  return fields;
}

/** The selections under every node of one response key, together. */
export function subSelections(nodes: readonly FieldNode[]): SelectionNode[] {
  return nodes.flatMap((node) => node.selectionSet?.selections ?? []);
}
