// Placing fields (rules 2 and 9 of build-plan.ts, with 5's type conditions): each field of the client's operation stays in its parent's step while that subgraph resolves it; the rest go the way chooseWay finds (follow-way.ts), interface objects their own way (interface-objects.ts), root fields by plan-roots.ts.
import {
  isAbstractType,
  isInterfaceType,
  isObjectType,
  type FieldNode,
  type GraphQLCompositeType,
  type GraphQLInterfaceType,
  type GraphQLObjectType,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';
import type { FieldGroups, OperationAnalysis } from '../../request/operation-analysis.js';
import { collectFields, subSelections, without } from './collect-fields.js';
import { chooseWay } from './entity-paths.js';
import { FieldConditions } from './field-conditions.js';
import { compositeTypeOf, coverage, fieldScope, positionType, providedFor, subgraphKey, type Coverage } from './field-sources.js';
import { follow } from './follow-way.js';
import { planInterfaceObject } from './interface-objects.js';
import type { Placement } from './placement.js';
import { PlanSteps, objectTypesOf } from './plan-steps.js';
import type { Above, Frame, Need, PlanStep, PlannedDenial, Position } from './plan-types.js';
import { below, inFragment, withProvided } from './positions.js';
import { ResponseKeys } from './response-keys.js';
import { TYPENAME, addField, addLeaf, directivesOf, emptyTree } from './selection-tree.js';
import { PlanUnsupported, type SupergraphModel } from './supergraph-model.js';

/** What one planning reads: the supergraph and API schema, the operation, the labels and denials, and how ways are chosen. */
export interface PlacingFacts {
  readonly model: SupergraphModel;
  readonly schema: GraphQLSchema;
  /** The client operation's analysis: its fragments and memoised CollectFields. */
  readonly analysis: OperationAnalysis;
  /** The progressive-override labels switched on for the requests this plan serves. */
  readonly labels: ReadonlySet<string>;
  /** Coordinates (`Type.field`) the authorization decision denies: 9. */
  readonly denied: ReadonlySet<string>;
  /** The last stage (stages.ts) within which ways are chosen by fewest requests (12, see buildPlan); none: by fewest steps first. */
  readonly stageBudget?: number;
  /** Whether root fields may be selected again in another subgraph (a query's, never a mutation's or a subscription's: 12, 13). */
  readonly rootLookups: boolean;
}

/**
 * One operation's placing of fields (one per buildPlan pass, and one per trial of a root field's
 * subgraph, plan-roots.ts): the steps and frames (plan-steps.ts), the response keys (10,
 * response-keys.ts), the conditions (11, field-conditions.ts) and the denials (9), and the
 * recursion over the client's selections that fills them.
 */
export class FieldPlacer implements Placement {
  readonly model: SupergraphModel;
  readonly schema: GraphQLSchema;
  readonly analysis: OperationAnalysis;
  readonly labels: ReadonlySet<string>;
  readonly denied: ReadonlySet<string>;
  readonly stageBudget?: number;
  readonly rootLookups: boolean;
  readonly keys: ResponseKeys;
  readonly conditions: FieldConditions;
  readonly steps: PlanSteps;
  /** 9. The client's fields the decision denies, for the runner to answer FORBIDDEN at their paths. */
  readonly denials: PlannedDenial[] = [];
  /** How many ways were chosen for fewer steps one after another over fewer requests (see buildPlan). */
  tradeOffs = 0;

  constructor(readonly facts: PlacingFacts) {
    this.model = facts.model;
    this.schema = facts.schema;
    this.analysis = facts.analysis;
    this.labels = facts.labels;
    this.denied = facts.denied;
    this.stageBudget = facts.stageBudget;
    this.rootLookups = facts.rootLookups;
    this.keys = new ResponseKeys(this.model, this.schema, this.analysis);
    this.conditions = new FieldConditions(this.analysis);
    this.steps = new PlanSteps(this.model, this.schema, this.keys);
  }

  framesAt(position: string): readonly Frame[] {
    return this.steps.framesAt(position);
  }

  entitySteps(graph: string): readonly PlanStep[] {
    return this.steps.entitySteps(graph);
  }

  /** Plans selections at one position (an object, interface or union) inside `step`; adds every step it puts fields in to `touched`. */
  planSelections(
    parentType: GraphQLCompositeType,
    selectionSets: readonly (SelectionSetNode | undefined)[],
    /** Where: its scope holds the subgraphs that could answer here, and the union members they all have (see fieldScope). */
    where: Position,
    touched: Set<PlanStep>,
    /** Response keys another step serves at this position (8). */
    skip?: ReadonlySet<string>,
  ): void {
    const { graph, step, at, provided, scope } = where;
    if (isObjectType(parentType)) {
      // A subgraph whose field has this one member, where another that could answer has not: only the type name.
      if (scope.members && !scope.members.has(parentType.name)) {
        touched.add(step);
        return;
      }
      this.planObjectFields(parentType, without(collectFields(this.schema, this.analysis, parentType, selectionSets), skip), withProvided(where, providedFor(provided, parentType, this.schema)), touched);
      return;
    }
    // An abstract position: the subgraph says which type each object is; plan each type it can
    // return there, as its own schema has them (5).
    if (this.model.isInterfaceObject(parentType.name, graph)) {
      planInterfaceObject(this, parentType as GraphQLInterfaceType, selectionSets, where, touched);
      return;
    }
    addLeaf(at, TYPENAME);
    touched.add(step);
    const local = this.model.subgraphSchema(graph).getType(parentType.name);
    if (!local || !isAbstractType(local)) throw new PlanUnsupported(`${parentType.name} is not abstract in ${graph}`);
    const possibleTypes = this.model.subgraphSchema(graph).getPossibleTypes(local);
    if (possibleTypes.length === 0 && isInterfaceType(parentType)) {
      // No object this subgraph returns here has a type of its own, yet every field asked of the
      // interface needs a source: planned on the interface itself (unsatisfiable without one).
      this.planObjectFields(parentType, without(collectFields(this.schema, this.analysis, parentType, selectionSets), skip), withProvided(where, providedFor(provided, parentType, this.schema)), touched);
      return;
    }
    for (const possibleInGraph of possibleTypes) {
      const possible = this.schema.getType(possibleInGraph.name);
      if (!possible || !isObjectType(possible) || (scope.members && !scope.members.has(possible.name))) continue;
      const fields = without(collectFields(this.schema, this.analysis, possible, selectionSets), skip);
      if (fields.size === 0) continue;
      let fragment = at.fragments.get(possible.name);
      if (!fragment) at.fragments.set(possible.name, (fragment = emptyTree()));
      // A `@provides` of abstract type provides per type condition, as the providing subgraph's schema has them.
      this.planObjectFields(possible, fields, inFragment(where, fragment, providedFor(provided, possible, this.schema)), touched);
    }
  }

  /** Plans fields of objects of one type at a position; its scope gives its fields' scopes (fieldScope). */
  planObjectFields(type: GraphQLObjectType | GraphQLInterfaceType, fields: FieldGroups, where: Position, touched: Set<PlanStep>): void {
    const { graph, step, at, path, provided, scope, need } = where;
    const frame = this.steps.frame(type, where);
    const remote: [string, readonly FieldNode[]][] = [];
    for (const [key, nodes] of fields) {
      const node = nodes[0];
      const name = node.name.value;
      if (name === TYPENAME) {
        addLeaf(at, TYPENAME, key);
        touched.add(step);
        continue;
      }
      if (name.startsWith('__')) throw new PlanUnsupported(`the meta field ${name} below the root`);
      // 9. A field the caller may not read is never fetched; the runner answers it FORBIDDEN.
      if (this.deny(type, name, key, path, need)) continue;
      if (!(provided?.has(name) || (this.model.canResolve(type.name, name, graph, this.labels) && !this.model.requiresOf(type.name, name, graph)))) {
        remote.push([key, nodes]);
        continue;
      }
      touched.add(step);
      const returnType = compositeTypeOf(type, name);
      const responseKey = this.keys.responseKey(where, key, name, node.arguments ?? []);
      const directives = directivesOf(nodes);
      const included = this.conditions.includedOf(nodes, need);
      const planned = addField(at, { key: responseKey, name, args: node.arguments ?? [], composite: returnType !== undefined, directives, subgraphKey: subgraphKey(this.model, type, name, graph, responseKey), included });
      this.conditions.notePlanned(at, responseKey, need, included, returnType !== undefined);
      if (returnType) {
        const own = this.model.providesOf(type.name, name, graph);
        const childProvided = provided?.get(name) ?? (own ? this.model.providedSet(own) : undefined);
        const childScope = fieldScope(this, type, name, graph, scope, provided);
        const above: Above = { frame, key: responseKey, name, arguments: node.arguments ?? [], directives, included };
        this.planSelections(positionType(this, type, name, graph, returnType, planned), subSelections(nodes), below(where, planned, above, { provided: childProvided, scope: childScope }), touched);
      }
    }
    for (const [key, nodes] of remote) {
      const name = nodes[0].name.value;
      const coverages = new Map<string, Coverage>();
      const coverageIn = (g: string): Coverage => {
        let known = coverages.get(g);
        if (!known) coverages.set(g, (known = coverage(this, type, name, nodes, g)));
        return known;
      };
      const way = chooseWay(this, frame, name, coverageIn);
      if (way.tradeOff) this.tradeOffs++;
      follow(this, way, frame, { type, key, nodes }, touched, need);
    }
  }

  /**
   * 9. Whether the caller may not read the client's field: then it is recorded for the runner to
   *    answer FORBIDDEN. What the plan needs itself (`need`) is never denied.
   */
  deny(type: GraphQLObjectType | GraphQLInterfaceType, name: string, key: string, path: readonly string[], need?: Need): boolean {
    if (need || this.denied.size === 0) return false;
    const coordinate = `${type.name}.${name}`;
    if (!this.denied.has(coordinate)) return false;
    this.denials.push({ path, typeName: type.name, objectTypes: objectTypesOf(this.schema, type.name), key, coordinate });
    return true;
  }
}
