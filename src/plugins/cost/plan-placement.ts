// Where a query plan fetches each client field: the subgraph of the fetch step that selects it, by response path.
import { isAbstractType, type GraphQLObjectType, type GraphQLSchema } from 'graphql';
import type { QueryPlan, SelectionTree } from '../../gateway/plan/plan-types.js';

/** One step's selection of a response key at a position: for objects of `typeName` (undefined: any type there). */
interface Placed {
  readonly typeName: string | undefined;
  readonly subgraph: string;
}

/**
 * The subgraph each field of an operation is fetched from, read off its plan: a root step's
 * selection, and an entity step's (`_entities` look-up) at the step's path for objects of its
 * entity type, every nested field under its response key. Built once per plan (plans are made once
 * per document and authorization decision); a look-up costs one map read.
 *
 * 1. Positions are response paths with list items walked through, as the plan's step paths are.
 * 2. Where several steps select the same key at a position (a key field the plan adds for
 *    representations to a step, a field the client asked for in another), the first step in plan
 *    order wins: fetches come after those they depend on, so that is the one that found the objects.
 * 3. A field in a type condition (`... on Book`) counts for objects of that type; one at an
 *    abstract position outside any (`__typename`) for all.
 */
export class PlanPlacement {
  readonly #placed = new Map<string, Placed[]>();

  constructor(plan: QueryPlan) {
    for (const fetch of plan.fetches) {
      for (const step of fetch.steps) this.#add(step.selection, positionOf(step.path), step.entityType, step.subgraph);
    }
  }

  #add(tree: SelectionTree, position: string, typeName: string | undefined, subgraph: string): void {
    for (const [key, field] of tree.fields) {
      const at = `${position}\u0001${key}`;
      const list = this.#placed.get(at);
      if (!list) this.#placed.set(at, [{ typeName, subgraph }]);
      else if (!list.some((placed) => placed.typeName === typeName)) list.push({ typeName, subgraph });
      if (field.selection) this.#add(field.selection, childPosition(position, key), undefined, subgraph);
    }
    for (const [condition, fragment] of tree.fragments) this.#add(fragment, position, condition, subgraph);
  }

  /**
   * The subgraph whose fetch selects `key` at `position` for an object of `parentType`; undefined when
   * no fetch does (a field the authorization decision denies, or one below it).
   */
  subgraphOf(schema: GraphQLSchema, position: string, key: string, parentType: GraphQLObjectType): string | undefined {
    const list = this.#placed.get(`${position}\u0001${key}`);
    if (!list) return undefined;
    for (const placed of list) {
      if (placed.typeName === undefined || placed.typeName === parentType.name) return placed.subgraph;
      const condition = schema.getType(placed.typeName);
      if (condition && isAbstractType(condition) && schema.isSubType(condition, parentType)) return placed.subgraph;
    }
    return undefined;
  }
}

/** The position of a response path: the root is the empty string. */
export function positionOf(path: readonly string[]): string {
  let position = '';
  for (const key of path) position = childPosition(position, key);
  return position;
}

/** The position of the objects a field at `position` under `key` returns. */
export function childPosition(position: string, key: string): string {
  return `${position}\u0000${key}`;
}
