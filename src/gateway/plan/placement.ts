// One operation's placing of fields as the files of rules 2 to 12 of build-plan.ts see it (place-fields.ts makes it): what it reads, the records it keeps, each its own class, and the two entry points of the recursion.
import type { FieldNode, GraphQLCompositeType, GraphQLInterfaceType, GraphQLObjectType, SelectionSetNode } from 'graphql';
import type { FieldGroups, OperationAnalysis } from '../../request/operation-analysis.js';
import type { WayContext } from './entity-paths.js';
import type { FieldConditions } from './field-conditions.js';
import type { PlanSteps } from './plan-steps.js';
import type { PlanStep, Position } from './plan-types.js';
import type { ResponseKeys } from './response-keys.js';

/**
 * What the parts of the planner share while one operation is planned: the facts they read (the
 * supergraph, the API schema, the operation's analysis, the labels), the steps and frames (3, 4,
 * 12), the response keys (10) and the conditions (11), and the placing of selections and fields,
 * which the ways (follow-way.ts) and interface objects (interface-objects.ts) call back into.
 */
export interface Placement extends WayContext {
  /** The client operation's analysis: its fragments and memoised CollectFields. */
  readonly analysis: OperationAnalysis;
  readonly steps: PlanSteps;
  readonly keys: ResponseKeys;
  readonly conditions: FieldConditions;
  /** Plans selections at one position (an object, interface or union) inside `where`'s step; adds every step it puts fields in to `touched`; `skip`: response keys another step serves there (8). */
  planSelections(parentType: GraphQLCompositeType, selectionSets: readonly (SelectionSetNode | undefined)[], where: Position, touched: Set<PlanStep>, skip?: ReadonlySet<string>): void;
  /** Plans fields of objects of one type at a position; its scope gives its fields' scopes (fieldScope). */
  planObjectFields(type: GraphQLObjectType | GraphQLInterfaceType, fields: FieldGroups, where: Position, touched: Set<PlanStep>): void;
}

/** A client's field of objects of `type`: its response key and the nodes merged under it. */
export interface ClientField {
  readonly type: GraphQLObjectType | GraphQLInterfaceType;
  readonly key: string;
  readonly nodes: readonly FieldNode[];
}
