// Reading the client's selections for planning: CollectFields from the operation's analysis, and the field sets of keys and @requires.
import { Kind, type FieldNode, type GraphQLInterfaceType, type GraphQLObjectType, type GraphQLSchema, type SelectionSetNode } from 'graphql';
import type { FieldGroups, OperationAnalysis } from '../../request/operation-analysis.js';
import { PlanUnsupported } from './supergraph-model.js';

/**
 * GraphQL's CollectFields (spec 6.3.2) for one concrete type, from the operation's analysis (memoised
 * per document), with every `@skip`/`@include` taken as "maybe": what they exclude is decided per
 * request, by the subgraph for the conditions each field is sent under (its own and its fragments',
 * buildPlan 5 and 11), by the runner for the look-ups to make, and by the projection for everything.
 * For an interface: the fields every object of it gets, whatever its concrete type.
 */
export function collectFields(schema: GraphQLSchema, analysis: OperationAnalysis, type: GraphQLObjectType | GraphQLInterfaceType, selectionSets: readonly (SelectionSetNode | undefined)[]): FieldGroups {
  const collection = analysis.collection(schema, type, selectionSets);
  if (collection.unsupported) throw new PlanUnsupported(collection.unsupported);
  return collection.fields;
}

/** The fields of a field set, by name, as CollectFields would give them. */
export function fieldSetFields(selectionSet: SelectionSetNode): Map<string, FieldNode[]> {
  const fields = new Map<string, FieldNode[]>();
  for (const selection of selectionSet.selections) if (selection.kind === Kind.FIELD) fields.set(selection.name.value, [selection]);
  return fields;
}

/** The fields without the response keys another step serves (8); a copy, since collections are shared. */
export function without(fields: FieldGroups, skip: ReadonlySet<string> | undefined): FieldGroups {
  if (!skip || skip.size === 0) return fields;
  const kept = new Map(fields);
  for (const key of skip) kept.delete(key);
  return kept;
}

/** The selection sets under every node of one response key (CollectSubfields' input). */
export function subSelections(nodes: readonly FieldNode[]): (SelectionSetNode | undefined)[] {
  return nodes.map((node) => node.selectionSet);
}
