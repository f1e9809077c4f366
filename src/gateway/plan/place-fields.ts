// Placing fields: which subgraph and step serves each field of the client's query, mutation or subscription (decision 007, numbers 1 to 4 and 8 to 12 of buildPlan).
import {
  Kind,
  getNamedType,
  isAbstractType,
  isCompositeType,
  isInterfaceType,
  isObjectType,
  print,
  type ArgumentNode,
  type FieldNode,
  type GraphQLCompositeType,
  type GraphQLInterfaceType,
  type GraphQLObjectType,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';
import type { FieldGroups, Guards, OperationAnalysis } from '../../request/operation-analysis.js';
import { collectFields, fieldSetFields, subSelections, without } from './collect-fields.js';
import { planCost } from './batch-fetches.js';
import { chooseWay, type Way } from './entity-paths.js';
import { compositeTypeOf, fieldScope, hasLookup, localFieldType, providedFor, subgraphKey, typedPosition, typeResolver, coverage, positionType, type Coverage } from './field-sources.js';
import type { Scope } from './plan-types.js';
import type { Above, FetchOperation, Frame, Need, NeedFor, PlanStep, PlannedDenial, PlannedField, Position, RepresentationDraft, SelectionTree } from './plan-types.js';
import { TYPENAME, addField, addLeaf, allOf, anyOf, directivesOf, emptyTree, isCondition, mergeTree } from './selection-tree.js';
import { PlanUnsatisfiable, PlanUnsupported, type FieldSetTree, type SupergraphModel } from './supergraph-model.js';

/** Fields the router answers from the API schema without a subgraph (GraphQL spec 4.1, 4.2). */
const INTROSPECTION_ROOTS = new Set(['__typename', '__schema', '__type']);

const NO_ROOTS: ReadonlyMap<string, PlanStep> = new Map();

/** The need of what is wanted whenever its objects are (a key that tells an object's type). */
const ALWAYS: Need = Object.freeze({ included: undefined });

/** One operation's planning: its steps by position, the denials, the client's and the plan's response keys (10). Lives for one buildPlan call. */
export class Planner {
  readonly steps: PlanStep[] = [];
  /** The root steps whose documents are not queries: each mutation field's, and a subscription's one. */
  readonly rootOperations = new Map<PlanStep, Exclude<FetchOperation, 'query'>>();
  readonly #byPosition = new Map<string, PlanStep[]>();
  /** The root step of each subgraph (queries: one per subgraph). */
  readonly #roots = new Map<string, PlanStep>();
  /**
   * Every frame planned, by position, and by the tree it plans and position (12). One tree may hold
   * objects of several positions: a look-up serves every object of its type at its path, whatever
   * the types above them, and each position keeps its own frame, so ways above it stay its own.
   */
  readonly #frames = new Map<string, Frame[]>();
  readonly #frameOfTree = new Map<SelectionTree, Map<string, Frame>>();
  /** Whether root fields may be selected again in another subgraph (a query's, never a mutation's or a subscription's). */
  rootLookups = true;
  /** How many ways were chosen for fewer steps one after another over fewer requests (see buildPlan). */
  tradeOffs = 0;
  readonly denials: PlannedDenial[] = [];
  /** 10. The client's fields at each path, by response key: the `fieldSignature` of each field there (of any type's objects). */
  readonly #clientKeys = new Map<string, Map<string, Set<string>>>();
  /** 10. The plan's own fields (keys, required fields) at each path: the response key of each field signature. */
  readonly #planKeys = new Map<string, Map<string, string>>();
  /** 11. What each of the plan's own fields is for, by tree and response key (settleNeeds). */
  readonly #needsFor = new Map<SelectionTree, Map<string, Set<NeedFor>>>();
  /** 11, 12. The client's fields a way down selects again, by tree and response key (settleNeeds). */
  readonly #waysDown = new Map<SelectionTree, Set<string>>();
  /** 11. When the client wants each of its fields of object, interface or union type, by tree and response key (settleNeeds). */
  readonly #clientWants = new Map<SelectionTree, Map<string, readonly Guards[] | undefined>>();

  constructor(
    readonly model: SupergraphModel,
    readonly schema: GraphQLSchema,
    /** The client operation's analysis: its fragments and memoised CollectFields. */
    readonly analysis: OperationAnalysis,
    /** The progressive-override labels switched on for the requests this plan serves. */
    readonly labels: ReadonlySet<string>,
    /** Coordinates (`Type.field`) the authorization decision denies: 9. */
    readonly denied: ReadonlySet<string>,
    /** The last stage (stages.ts) within which ways are chosen by fewest requests (12, see buildPlan); none: by fewest steps first. */
    readonly stageBudget?: number,
  ) {}

  /**
   * 10. The response key a field is fetched under. The client's fields keep theirs. The plan's own
   *     fields (keys, required fields) go under their names, unless the client (any selection at the
   *     same path, of any type's objects: they may be merged into one object) or another field of the
   *     plan puts something else there: another field (`id: name`), or the same field with other
   *     arguments (`price(currency: "EUR")` beside a required `price(currency: "USD")`). Then the
   *     field takes a private key (`__sy_price`, `__sy_price_2`, ...), one per field and arguments
   *     at that path; representations read it there and carry it under its name. (Whose field it
   *     is, the client's or the plan's, is the position's `need`.)
   */
  responseKey(where: Position, key: string, name: string, args: readonly ArgumentNode[]): string {
    if (!where.need) return key;
    const at = pathKey(where.path);
    let planned = this.#planKeys.get(at);
    if (!planned) this.#planKeys.set(at, (planned = new Map()));
    const signature = fieldSignature(name, args);
    const known = planned.get(signature);
    if (known !== undefined) return known;
    const client = this.#clientKeys.get(at);
    const free = (candidate: string): boolean => {
      const held = client?.get(candidate);
      if (held && (held.size > 1 || !held.has(signature))) return false;
      for (const taken of planned.values()) if (taken === candidate) return false;
      return true;
    };
    let chosen = name;
    for (let n = 1; !free(chosen); n++) chosen = n === 1 ? `__sy_${name}` : `__sy_${name}_${n}`;
    planned.set(signature, chosen);
    return chosen;
  }

  /**
   * 11. When the client's conditions may leave a response key out: the guards of its selections
   *     (the analysis's, any of which passing wants it); undefined when one always executes. What
   *     the plan needs for another field is wanted when that field is (and, once every field is
   *     placed, whenever what it is for is: settleNeeds).
   */
  includedOf(nodes: readonly FieldNode[], need: Need | undefined): readonly Guards[] | undefined {
    if (need) return need.included;
    const alternatives: Guards[] = [];
    for (const node of nodes) {
      for (const guards of this.analysis.guardsOf(node)) {
        if (guards.length === 0) return undefined;
        if (!alternatives.includes(guards)) alternatives.push(guards);
      }
    }
    return alternatives;
  }

  /**
   * 11. Records what the field under `key` in `at` is planned for: `need`'s look-up or field, or, for
   *     the client's field of object, interface or union type, when the client wants it there.
   */
  notePlanned(at: SelectionTree, key: string, need: Need | undefined, included: readonly Guards[] | undefined, composite: boolean): void {
    if (!need) {
      if (!composite) return;
      let wants = this.#clientWants.get(at);
      if (!wants) this.#clientWants.set(at, (wants = new Map()));
      wants.set(key, wants.has(key) ? anyOf(wants.get(key), included) : included);
      return;
    }
    if (!need.for) return;
    let byKey = this.#needsFor.get(at);
    if (!byKey) this.#needsFor.set(at, (byKey = new Map()));
    let fors = byKey.get(key);
    if (!fors) byKey.set(key, (fors = new Set()));
    fors.add(need.for);
  }

  /**
   * 11. Once every field is placed, each field the plan selects for itself is wanted whenever what
   *     it serves is, for any values of the variables; the conditions it was planned with may say less:
   *     a. a look-up's key fields, whenever the look-up is made: whenever one of its fields is
   *        wanted, those added to it after its key was planned included (12's `extend`);
   *     b. a field's required fields, whenever the field is;
   *     c. a field of the plan's own, or one of the client's a way down selects again (12), whenever
   *        a field placed below it is (a later field's way may end there), within the client's
   *        conditions for it where the client asks for it in that tree (the client's fields below
   *        it carry only their own);
   *     and each step holding them is made then in turn (the runner makes a look-up when one of its
   *     fields is wanted). Documents send each field under its `included` (5): so no look-up is
   *     made without its key, and no field is sent without what it requires.
   */
  settleNeeds(): void {
    const settled = new Map<SelectionTree, Map<string, readonly Guards[] | undefined>>();
    const made = new Map<PlanStep, readonly Guards[] | undefined>();
    const open = new Set<unknown>();
    // Wanted when any field of the tree is, its type conditions' included (a type name goes with them).
    const anyBelow = (tree: SelectionTree): readonly Guards[] | undefined => {
      let when: readonly Guards[] | undefined = [];
      for (const [key, field] of tree.fields) if (when && field.name !== TYPENAME) when = anyOf(when, wantedWhen(tree, key));
      for (const fragment of tree.fragments.values()) if (when) when = anyOf(when, anyBelow(fragment));
      return when;
    };
    // a. A step is made when one of its fields is wanted (the runner's rule); a root step always.
    const madeWhen = (step: PlanStep): readonly Guards[] | undefined => {
      if (step.entityType === undefined) return undefined;
      if (made.has(step)) return made.get(step);
      if (open.has(step)) throw new PlanUnsupported('a look-up needed for itself');
      open.add(step);
      let when: readonly Guards[] | undefined = [];
      for (const key of step.selection.fields.keys()) if (when) when = anyOf(when, wantedWhen(step.selection, key));
      open.delete(step);
      made.set(step, when);
      return when;
    };
    const wantedWhen = (at: SelectionTree, key: string): readonly Guards[] | undefined => {
      const field = at.fields.get(key)!;
      const fors = this.#needsFor.get(at)?.get(key);
      if (!fors && !this.#waysDown.get(at)?.has(key)) return field.included;
      let byKey = settled.get(at);
      if (!byKey) settled.set(at, (byKey = new Map()));
      if (byKey.has(key)) return byKey.get(key);
      if (open.has(field)) throw new PlanUnsupported(`the field under ${key} needed for itself`);
      open.add(field);
      let when = field.included;
      // a, b. Not told what it is for (not planned to the end): always, which never leaves it out.
      for (const needFor of fors ?? []) if (when) when = anyOf(when, needFor.step ? madeWhen(needFor.step) : needFor.field ? wantedWhen(needFor.field.at, needFor.field.key) : undefined);
      // c.
      if (when && field.selection) when = anyOf(when, allOf(this.#clientWants.get(at)?.get(key), anyBelow(field.selection)));
      open.delete(field);
      byKey.set(key, when);
      return when;
    };
    for (const [at, byKey] of this.#needsFor) for (const key of byKey.keys()) wantedWhen(at, key);
    for (const [at, keys] of this.#waysDown) for (const key of keys) wantedWhen(at, key);
    // Planned fields are never written: a new object under the same key where it changed.
    for (const [at, byKey] of settled) {
      for (const [key, when] of byKey) {
        const field = at.fields.get(key)!;
        if (when !== field.included) at.fields.set(key, { ...field, included: when });
      }
    }
  }

  /**
   * 10. Records the response keys of the client's fields at every path before anything is planned,
   *     so the plan's own fields never take one, whichever is planned first. Level by level: at each
   *     path, the selection sets of every object type that can be there are collected once.
   */
  recordClientKeys(rootType: GraphQLObjectType, selectionSet: SelectionSetNode): void {
    let level = new Map<string, { path: readonly string[]; types: Map<GraphQLObjectType, Set<SelectionSetNode>> }>([['', { path: [], types: new Map([[rootType, new Set([selectionSet])]]) }]]);
    while (level.size > 0) {
      const next: typeof level = new Map();
      for (const [at, { path, types }] of level) {
        let keys = this.#clientKeys.get(at);
        if (!keys) this.#clientKeys.set(at, (keys = new Map()));
        for (const [type, sets] of types) {
          for (const [key, nodes] of collectFields(this.schema, this.analysis, type, [...sets])) {
            let signatures = keys.get(key);
            if (!signatures) keys.set(key, (signatures = new Set()));
            for (const node of nodes) signatures.add(fieldSignature(node.name.value, node.arguments ?? []));
            const field = type.getFields()[nodes[0].name.value];
            const named = field && getNamedType(field.type);
            if (!named || !isCompositeType(named)) continue;
            const childPath = [...path, key];
            const childAt = pathKey(childPath);
            let child = next.get(childAt);
            if (!child) next.set(childAt, (child = { path: childPath, types: new Map() }));
            for (const possible of isAbstractType(named) ? this.schema.getPossibleTypes(named) : [named as GraphQLObjectType]) {
              let childSets = child.types.get(possible);
              if (!childSets) child.types.set(possible, (childSets = new Set()));
              for (const node of nodes) if (node.selectionSet) childSets.add(node.selectionSet);
            }
          }
        }
      }
      level = next;
    }
  }

  /**
   * 10. The representation of a field set at a path, once its fields are planned: each field under
   *     its name, read from the response key the plan fetched it under (at any depth).
   */
  representationAt(path: readonly string[], fields: string): RepresentationDraft {
    return this.#representation(this.model.fieldSetSelection(fields), path, new Map());
  }

  #representation(selectionSet: SelectionSetNode, path: readonly string[], into: RepresentationDraft): RepresentationDraft {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        // A type condition needs the object's type name beside its fields (required fields of abstract type).
        if (selection.typeCondition && !into.has(TYPENAME)) into.set(TYPENAME, { key: TYPENAME, fields: new Map() });
        this.#representation(selection.selectionSet, path, into);
        continue;
      }
      if (selection.kind !== Kind.FIELD) continue;
      const name = selection.name.value;
      const key = name === TYPENAME ? TYPENAME : this.#planKeys.get(pathKey(path))?.get(fieldSignature(name, selection.arguments ?? []));
      if (key === undefined) throw new PlanUnsupported(`the field ${name} of a representation was not planned`);
      let field = into.get(name);
      if (!field) into.set(name, (field = { key, fields: new Map() }));
      else if (field.key !== key) throw new PlanUnsupported(`a field set asks ${name} twice with different arguments`);
      if (selection.selectionSet) this.#representation(selection.selectionSet, [...path, key], field.fields);
    }
    return into;
  }

  /**
   * 9. Whether the caller may not read the client's field: then it is recorded for the runner to
   *    answer FORBIDDEN. What the plan needs itself (`need`) is never denied.
   */
  deny(type: GraphQLObjectType | GraphQLInterfaceType, name: string, key: string, path: readonly string[], need?: Need): boolean {
    if (need || this.denied.size === 0) return false;
    const coordinate = `${type.name}.${name}`;
    if (!this.denied.has(coordinate)) return false;
    this.denials.push({ path, typeName: type.name, objectTypes: this.objectTypesOf(type.name), key, coordinate });
    return true;
  }

  /**
   * The `__typename`s objects of an interface may carry at a position planned as the interface (8):
   * its own (answered by an `@interfaceObject`) and each implementation's (told by a look-up
   * meanwhile). Undefined for an object type: its objects carry its name.
   */
  objectTypesOf(typeName: string): ReadonlySet<string> | undefined {
    const type = this.schema.getType(typeName);
    if (!type || !isInterfaceType(type)) return undefined;
    return new Set([type.name, ...this.schema.getPossibleTypes(type).map((possible) => possible.name)]);
  }


  /**
   * 1. Plans the operation's root fields: a query's grouped by subgraph, a mutation's one after
   *    another, a subscription's one field in the one root fetch its events come from (13).
   */
  planRoot(rootType: GraphQLObjectType, selectionSet: SelectionSetNode, operation: FetchOperation): void {
    this.recordClientKeys(rootType, selectionSet);
    const serial = operation === 'mutation';
    this.rootLookups = operation === 'query';
    const fields = collectFields(this.schema, this.analysis, rootType, [selectionSet]);
    if (operation === 'subscription') this.checkSubscriptionRoot(fields);
    // Every subgraph starts at the root.
    const scope: Scope = { graphs: new Set(this.model.subgraphName.keys()) };
    const planned: { key: string; nodes: readonly FieldNode[]; graphs: string[] }[] = [];
    for (const [key, nodes] of fields) {
      const name = nodes[0].name.value;
      if (INTROSPECTION_ROOTS.has(name)) continue;
      if (name.startsWith('__')) throw new PlanUnsupported(`the meta field ${name}`);
      // 9. A denied root field makes no fetch at all (an empty one would be no document).
      if (this.deny(rootType, name, key, [])) continue;
      const graphs = this.model.resolversOf(rootType.name, name, this.labels);
      if (graphs.length === 0) throw new PlanUnsupported(`no subgraph resolves ${rootType.name}.${name}`);
      planned.push({ key, nodes, graphs });
    }
    const choices = new Map(planned.map((field) => [field, this.rootChoices(rootType, selectionSet, field, scope, operation)]));
    if (operation === 'subscription') {
      // 13. The one root field (checkSubscriptionRoot; none when it is denied, 9) in the one root
      // fetch, of the subgraph chosen as for a query; everything else of the selection hangs off it.
      for (const field of planned) {
        const step = this.rootStep(cheapest(choices.get(field)!, NO_ROOTS).graph);
        this.rootOperations.set(step, 'subscription');
        this.planObjectFields(rootType, new Map([[field.key, field.nodes]]), rootPosition(step, scope), new Set());
      }
      return;
    }
    if (serial) {
      let previous: PlanStep[] = [];
      for (const field of planned) {
        const first = this.steps.length;
        const step = this.newStep(cheapest(choices.get(field)!, NO_ROOTS).graph, [], undefined);
        this.rootOperations.set(step, 'mutation');
        for (const before of previous) step.dependsOn.add(before);
        this.planObjectFields(rootType, new Map([[field.key, field.nodes]]), rootPosition(step, scope), new Set());
        // 1. The next mutation field waits for everything this one needs, its entity steps included.
        previous = this.steps.slice(first);
      }
      return;
    }
    // 1. Fields with the fewest cheapest subgraphs are placed first: the root fetches they need are
    // then there for the fields that any of several subgraphs would serve as cheaply.
    const ties = (field: (typeof planned)[number]): number => {
      const costs = choices.get(field)!;
      return costs.filter((cost) => !costs.some((other) => cheaper(other, cost))).length;
    };
    for (const field of [...planned].sort((a, b) => ties(a) - ties(b))) {
      const graph = cheapest(choices.get(field)!, this.#roots).graph;
      this.planObjectFields(rootType, new Map([[field.key, field.nodes]]), rootPosition(this.rootStep(graph), scope), new Set());
    }
  }

  /**
   * 13. A subscription selects exactly one root field, not an introspection one (GraphQL spec
   *     5.2.3.1, Single Root Field, which graphql-js's SingleFieldSubscriptionsRule checks before
   *     planning), and which one must not depend on variables: the spec's draft (5.2.4.1,
   *     CollectSubscriptionFields) and graphql-js 17 forbid `@skip`/`@include` in its top-level
   *     selection, and graphql-js 16 throws validating one that reads a variable, as a subgraph
   *     receiving it would. What breaks this is left to stitching, whose validation reports it.
   */
  checkSubscriptionRoot(fields: FieldGroups): void {
    if (fields.size !== 1) throw new PlanUnsupported(`a subscription selects exactly one root field, not ${fields.size}`);
    const [nodes] = fields.values();
    const name = nodes[0].name.value;
    if (name.startsWith('__')) throw new PlanUnsupported(`a subscription's root field may not be the meta field ${name}`);
    const conditional = nodes.some((node) => this.analysis.guardsOf(node).some((guards) => guards.some((list) => list.some(isCondition))));
    if (conditional) throw new PlanUnsupported(`a subscription's root field ${name} may not be under @skip or @include`);
  }

  /**
   * 1. What serving a root field from each subgraph that resolves it costs: each is tried alone (its
   *    ways to what it leaves included, 12). One from which part of the selection has no source at
   *    all is never chosen; when that holds for each, the operation is unsatisfiable.
   */
  rootChoices(rootType: GraphQLObjectType, selectionSet: SelectionSetNode, field: RootField, scope: Scope, operation: FetchOperation): RootCost[] {
    const { key, nodes, graphs } = field;
    if (graphs.length === 1) return [{ graph: graphs[0], sequential: 0, calls: 0, covered: 0, lookups: 0 }];
    const costs: RootCost[] = [];
    let failure: PlanUnsupported | undefined;
    for (const graph of graphs) {
      const trial = new Planner(this.model, this.schema, this.analysis, this.labels, this.denied, this.stageBudget);
      trial.recordClientKeys(rootType, selectionSet);
      trial.rootLookups = operation === 'query';
      const step = operation === 'mutation' ? trial.newStep(graph, [], undefined) : trial.rootStep(graph);
      try {
        trial.planObjectFields(rootType, new Map([[key, nodes]]), rootPosition(step, scope), new Set());
      } catch (error) {
        if (!(error instanceof PlanUnsupported)) throw error;
        // What the planner does not model outweighs a missing source: stitching may still answer it.
        if (!failure || (failure instanceof PlanUnsatisfiable && !(error instanceof PlanUnsatisfiable))) failure = error;
        continue;
      }
      const cost = planCost(trial.steps);
      costs.push({ graph, sequential: cost.sequential, calls: cost.calls, covered: coverage(this, rootType, nodes[0].name.value, nodes, graph).covered, lookups: trial.steps.length });
    }
    if (costs.length === 0) throw failure!;
    return costs;
  }

  /** The root step of a subgraph in a query (or a subscription's one), made on first use. */
  rootStep(graph: string): PlanStep {
    let step = this.#roots.get(graph);
    if (!step) this.#roots.set(graph, (step = this.newStep(graph, [], undefined)));
    return step;
  }

  newStep(graph: string, path: readonly string[], entityType: string | undefined): PlanStep {
    const step: PlanStep = {
      id: this.steps.length,
      graph,
      subgraph: this.model.subgraphName.get(graph) ?? graph,
      path,
      entityType,
      objectTypes: entityType === undefined ? undefined : this.objectTypesOf(entityType),
      selection: emptyTree(),
      representation: new Map(),
      keyFields: new Map(),
      dependsOn: new Set(),
    };
    this.steps.push(step);
    return step;
  }

  /**
   * The entity step of `graph` at this position and type that can follow every step of `after` and
   * carry the key's and required fields in its representations: the first one made there that none
   * of them depends on and whose representations read no field of these from another response key
   * (a field required with other arguments, 10); a new one when there is none (4). Their key and
   * required fields must be planned first.
   */
  entityStep(graph: string, path: readonly string[], typeName: string, after: ReadonlySet<PlanStep>, key: string, requires?: string): PlanStep {
    const representation = this.representationAt(path, key);
    if (requires) mergeRepresentation(representation, this.representationAt(path, requires));
    const position = positionKey(graph, path, typeName);
    let list = this.#byPosition.get(position);
    if (!list) this.#byPosition.set(position, (list = []));
    const step = list.find((candidate) => ![...after].some((d) => d === candidate || dependsOn(d, candidate)) && readAlike(candidate.representation, representation)) ?? this.newStep(graph, path, typeName);
    if (!list.includes(step)) list.push(step);
    for (const d of after) step.dependsOn.add(d);
    mergeRepresentation(step.representation, representation);
    mergeTree(step.keyFields, this.model.fieldSet(key));
    return step;
  }

  framesAt(position: string): readonly Frame[] {
    return this.#frames.get(position) ?? [];
  }

  entitySteps(graph: string): readonly PlanStep[] {
    return this.steps.filter((step) => step.graph === graph && step.entityType !== undefined);
  }

  /** The frame of a tree planned for objects of a position, made (and recorded there) on first use (12). */
  frame(type: GraphQLObjectType | GraphQLInterfaceType, where: Position): Frame {
    const { graph, step, at, path, provided, scope, above } = where;
    const position = typedPosition(above?.frame.position, above?.key, type.name);
    let byPosition = this.#frameOfTree.get(at);
    if (!byPosition) this.#frameOfTree.set(at, (byPosition = new Map()));
    let frame = byPosition.get(position);
    if (!frame) {
      frame = { type, graph, step, at, path, position, provided, scope, above };
      byPosition.set(position, frame);
      const frames = this.#frames.get(position);
      if (frames) frames.push(frame);
      else this.#frames.set(position, [frame]);
    }
    return frame;
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
      this.planInterfaceObject(parentType as GraphQLInterfaceType, selectionSets, where, touched);
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

  /**
   * 8. A position whose objects come from a subgraph that knows the interface only as an
   *    `@interfaceObject` (it answers `__typename` with the interface's name):
   *    a. that subgraph serves the interface fields it owns, wherever they are selected;
   *    b. a field selected on the interface itself (outside narrower type conditions) that it does
   *       not own is looked up as the interface in a subgraph that resolves it there (another
   *       interface object, or the interface's own subgraph): the concrete type does not matter to
   *       it, and an implementation's field of the same name (a `@shareable` copy) is not the
   *       interface's;
   *    c. only when something depends on the concrete type (`__typename`, a narrower type
   *       condition, a field left over) does a look-up by key in a subgraph that has the real
   *       interface tell each object's type; it serves the fields of the concrete types it has, and
   *       the rest are entity look-ups that follow it. Without it the objects keep the interface's
   *       name, and the answer is projected on the interface.
   */
  planInterfaceObject(iface: GraphQLInterfaceType, selectionSets: readonly (SelectionSetNode | undefined)[], outer: Position, touched: Set<PlanStep>): void {
    const provided = providedFor(outer.provided, iface, this.schema);
    const where = withProvided(outer, provided);
    const { graph, step, at, path } = where;
    touched.add(step);
    addLeaf(at, TYPENAME);
    const onInterface = collectFields(this.schema, this.analysis, iface, selectionSets);
    // Every response key with its nodes from every implementation (a narrower condition's merge in).
    const all = new Map<string, FieldNode[]>();
    let needsType = false;
    const gather = (fields: FieldGroups, general: FieldGroups | undefined) => {
      for (const [key, nodes] of fields) {
        const known = all.get(key);
        if (known) known.push(...nodes.filter((n) => !known.includes(n)));
        else all.set(key, [...nodes]);
        const selected = general?.get(key);
        if (general && (!selected || nodes.some((n) => !selected.includes(n)))) needsType = true;
      }
    };
    gather(onInterface, undefined);
    for (const possible of this.schema.getPossibleTypes(iface)) gather(collectFields(this.schema, this.analysis, possible, selectionSets), onInterface);
    const served = new Map<string, FieldNode[]>();
    for (const [key, nodes] of all) {
      const name = nodes[0].name.value;
      // Not an interface field (`__typename`, an implementation's own): the concrete type is needed (c).
      const ofInterface = iface.getFields()[name] !== undefined;
      const owned = ofInterface && (provided?.has(name) || this.model.canResolve(iface.name, name, graph, this.labels));
      if (owned || (ofInterface && onInterface.has(key) && hasLookup(this, iface, name, graph, provided))) served.set(key, nodes);
      else needsType = true;
    }
    this.planObjectFields(iface, served, where, touched);
    if (!needsType) return;
    const resolver = typeResolver(this, iface, graph, provided);
    const providers = new Set<PlanStep>([step]);
    // The key of the look-up that tells each object's type: the plan's own need, always wanted
    // (within another need, whenever the look-up is made).
    const resolving: NeedFor = {};
    this.planObjectFields(iface, fieldSetFields(this.model.fieldSetSelection(resolver.key)), withNeed(where, where.need ? { included: where.need.included, for: resolving } : ALWAYS), providers);
    const resolution = this.entityStep(resolver.graph, path, iface.name, providers, resolver.key);
    resolving.step = resolution;
    resolution.lookupType = iface.name;
    resolution.resolvesType = true;
    for (const provider of providers) touched.add(provider);
    touched.add(resolution);
    this.planSelections(iface, selectionSets, inStep(where, resolution, undefined), touched, new Set(served.keys()));
  }

  /** Plans fields of objects of one type at a position; its scope gives its fields' scopes (fieldScope). */
  planObjectFields(type: GraphQLObjectType | GraphQLInterfaceType, fields: FieldGroups, where: Position, touched: Set<PlanStep>): void {
    const { graph, step, at, path, provided, scope, need } = where;
    const frame = this.frame(type, where);
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
      const responseKey = this.responseKey(where, key, name, node.arguments ?? []);
      const directives = directivesOf(nodes);
      const included = this.includedOf(nodes, need);
      const planned = addField(at, { key: responseKey, name, args: node.arguments ?? [], composite: returnType !== undefined, directives, subgraphKey: subgraphKey(this.model, type, name, graph, responseKey), included });
      this.notePlanned(at, responseKey, need, included, returnType !== undefined);
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
      this.follow(way, frame, { type, key, nodes }, touched, need);
    }
  }

  /**
   * Plans a field its frame's subgraph cannot resolve the way chooseWay found (3, 4, 8, 12): the
   * look-up's key (and required fields) in the frame it starts from, whose steps all come before
   * it; then, from the level the way starts at, the client's fields down to the field's position,
   * and the field there with its selection. All of it is wanted when the field is, the fields on
   * the way down when they are too (11).
   */
  follow(way: Way, frame: Frame, field: ClientField, touched: Set<PlanStep>, need: Need | undefined): void {
    const { type } = frame;
    const { key, nodes } = field;
    const name = nodes[0].name.value;
    const included = this.includedOf(nodes, need);
    const links: Above[] = [];
    let level = frame;
    for (let i = 0; i < way.level; i++) {
      links.unshift(level.above!);
      level = level.above!.frame;
    }
    // 11. A field on the way down is wanted when the client wants it there and the one below it is
    // wanted, down to the field the way is for; the look-up when the first of them is.
    const wanted: (readonly Guards[] | undefined)[] = [];
    let inner = included;
    for (let i = links.length - 1; i >= 0; i--) wanted[i] = inner = allOf(links[i].included, inner);
    let top: Frame;
    if (way.kind === 'extend') top = way.from!;
    else if (way.kind === 'root') {
      const root = this.rootStep(way.graph);
      top = this.frame(level.type, rootPosition(root, level.scope));
    } else {
      // 3. The key and the type name travel in the representation; 4. so do required fields,
      // wherever they come from. Every step that provides one comes before the entity step.
      const from = way.from!;
      const providers = new Set<PlanStep>([from.step]);
      addLeaf(from.at, TYPENAME);
      const requires = way.level === 0 ? this.model.requiresOf(way.lookupType ?? type.name, name, way.graph) : undefined;
      // The plan's own needs, wanted when the look-up is made (the key) and when the field is
      // sent (what it requires): 11, settleNeeds.
      const keyFor: NeedFor = {};
      const requiresFor: NeedFor = {};
      this.planSelections(from.type, [this.model.fieldSetSelection(way.key!)], withNeed(from, { included: inner, for: keyFor }), providers);
      if (requires) this.planSelections(from.type, [this.model.fieldSetSelection(requires)], withNeed(from, { included: inner, for: requiresFor }), providers);
      const child = this.entityStep(way.graph, level.path, level.type.name, providers, way.key!, requires);
      keyFor.step = child;
      if (way.lookupType) child.lookupType = way.lookupType;
      for (const provider of providers) touched.add(provider);
      touched.add(child);
      if (way.level === 0) {
        // Looked up for this field: the field is planned in the look-up whatever its subgraph requires (the representation carries it).
        requiresFor.field = this.planLookedUp(way, field, this.frame(type, inStep(frame, child, undefined)), touched, need);
        return;
      }
      top = this.frame(level.type, inStep(level, child, undefined));
    }
    // 12. Down from the level the way starts at: the client's fields again, each below the one before.
    let at = top;
    links.forEach((link, i) => {
      at = this.descend(at, link, i + 1 < links.length ? links[i + 1].frame : frame, wanted[i]);
    });
    this.planObjectFields(type, new Map([[key, nodes]]), withNeed(at, need), touched);
  }

  /** The field in the entity step that looks it up at its own position (3, 4, 8); where it went. */
  planLookedUp(way: Way, field: ClientField, frame: Frame, touched: Set<PlanStep>, need: Need | undefined): { at: SelectionTree; key: string } {
    const { type, key, nodes } = field;
    const where = withNeed(frame, need);
    const node = nodes[0];
    const name = node.name.value;
    const returnType = compositeTypeOf(type, name);
    const directives = directivesOf(nodes);
    const included = this.includedOf(nodes, need);
    const responseKey = this.responseKey(where, key, name, node.arguments ?? []);
    const planned = addField(frame.at, { key: responseKey, name, args: node.arguments ?? [], composite: returnType !== undefined, directives, subgraphKey: subgraphKey(this.model, type, name, way.graph, responseKey), included });
    this.notePlanned(frame.at, responseKey, need, included, returnType !== undefined);
    if (returnType) {
      const own = this.model.providesOf(way.lookupType ?? type.name, name, way.graph);
      const childScope = fieldScope(this, type, name, way.graph, frame.scope, undefined);
      const above: Above = { frame, key: responseKey, name, arguments: node.arguments ?? [], directives, included };
      this.planSelections(positionType(this, type, name, way.graph, returnType, planned), subSelections(nodes), below(where, planned, above, { provided: own ? this.model.providedSet(own) : undefined, scope: childScope }), touched);
    }
    return { at: frame.at, key: responseKey };
  }

  /**
   * One field of the way down (12): the client's field of the frame above, selected in this frame's
   * step (wanted when it and the fields below it on the way are, 11; settleNeeds adds any other
   * placed below it later), and the frame of the objects below it there
   * (in a fragment where that subgraph's field has an abstract type).
   */
  descend(frame: Frame, link: Above, below: Frame, included: readonly Guards[] | undefined): Frame {
    const { model } = this;
    const localType = localFieldType(model, frame.type, link.name, below.type, frame.graph);
    if (!localType) throw new PlanUnsupported(`${frame.graph} has no ${below.type.name} below ${frame.type.name}.${link.name}`);
    const planned = addField(frame.at, { key: link.key, name: link.name, args: link.arguments, composite: true, directives: link.directives, subgraphKey: subgraphKey(model, frame.type, link.name, frame.graph, link.key), included });
    let waysDown = this.#waysDown.get(frame.at);
    if (!waysDown) this.#waysDown.set(frame.at, (waysDown = new Set()));
    waysDown.add(link.key);
    this.notePlanned(frame.at, link.key, undefined, link.included, true);
    let at = planned.selection!;
    if (localType.name !== below.type.name) {
      addLeaf(at, TYPENAME);
      let fragment = at.fragments.get(below.type.name);
      if (!fragment) at.fragments.set(below.type.name, (fragment = emptyTree()));
      at = fragment;
    }
    const own = model.providesOf(frame.type.name, link.name, frame.graph);
    const provided = providedFor(frame.provided?.get(link.name) ?? (own ? model.providedSet(own) : undefined), below.type, this.schema);
    const scope = fieldScope(this, frame.type, link.name, frame.graph, frame.scope, frame.provided);
    return this.frame(below.type, position({ graph: frame.graph, step: frame.step, at, path: below.path, provided, scope, above: { ...link, frame } }));
  }

}

/** A path of objects in the answer: the response keys to it. */
/** A root field and the subgraphs that resolve it (1). */
interface RootField {
  readonly key: string;
  readonly nodes: readonly FieldNode[];
  readonly graphs: readonly string[];
}

/** A client's field of objects of `type`: its response key and the nodes merged under it. */
interface ClientField {
  readonly type: GraphQLObjectType | GraphQLInterfaceType;
  readonly key: string;
  readonly nodes: readonly FieldNode[];
}

/** A position, frozen: every field read from `where` (a Frame's own fields left behind), then `changes`. */
function moved(where: Position, changes: Partial<Position>): Position {
  return position({ graph: where.graph, step: where.step, at: where.at, path: where.path, provided: where.provided, scope: where.scope, above: where.above, need: where.need, ...changes });
}

function position(fields: Position): Position {
  return Object.freeze(fields);
}

/** The top of a root step: the client's fields, nothing provided, nothing above. */
function rootPosition(step: PlanStep, scope: Scope): Position {
  return position({ graph: step.graph, step, at: step.selection, path: [], provided: undefined, scope });
}

function withProvided(where: Position, provided: FieldSetTree | undefined): Position {
  return moved(where, { provided });
}

/** The same position, planning for `need` (undefined: the client's fields). */
function withNeed(where: Position, need: Need | undefined): Position {
  return moved(where, { need });
}

/** A type condition's fragment of the position's tree (5), with what is provided to that type. */
function inFragment(where: Position, fragment: SelectionTree, provided: FieldSetTree | undefined): Position {
  return moved(where, { at: fragment, provided });
}

/** The same objects in another step (a look-up), at the top of its selection. */
function inStep(where: Position, step: PlanStep, provided: FieldSetTree | undefined): Position {
  return moved(where, { graph: step.graph, step, at: step.selection, provided });
}

/** The objects of a planned field's value, one level down in the same step. */
function below(where: Position, planned: PlannedField, above: Above, facts: { provided: FieldSetTree | undefined; scope: Scope }): Position {
  return moved(where, { at: planned.selection!, path: [...where.path, above.key], above, provided: facts.provided, scope: facts.scope });
}

function pathKey(path: readonly string[]): string {
  return path.join('\u0000');
}

/** What serving a root field from one subgraph costs (1). */
interface RootCost {
  graph: string;
  /** Requests one after another: the last stage plus one (stages.ts). */
  sequential: number;
  /** Requests. */
  calls: number;
  /** How much of the selection below the field the subgraph resolves by itself (coverage). */
  covered: number;
  /** Steps: the root one and each entity look-up, however they are batched. */
  lookups: number;
}

function cheaper(a: RootCost, b: RootCost): boolean {
  if (a.sequential !== b.sequential) return a.sequential < b.sequential;
  if (a.calls !== b.calls) return a.calls < b.calls;
  if (a.covered !== b.covered) return a.covered > b.covered;
  return a.lookups < b.lookups;
}

/**
 * 1. The cheapest choice: the fewest requests one after another, then the fewest requests (a
 *    subgraph already serving a root field saves its root request), then the one that resolves
 *    most of the selection below the field by itself (as chooseWay ranks ways, 12), then the
 *    fewest look-ups (batched in those requests); supergraph order breaks ties.
 */
function cheapest(choices: readonly RootCost[], roots: ReadonlyMap<string, PlanStep>): RootCost {
  let best: RootCost | undefined;
  for (const choice of choices) {
    const cost = roots.has(choice.graph) ? { ...choice, calls: choice.calls - 1 } : choice;
    if (!best || cheaper(cost, best)) best = cost;
  }
  return best!;
}

/** One entity step per subgraph, position and type. */
function positionKey(graph: string, path: readonly string[], typeName: string): string {
  return `${graph}\u0000${pathKey(path)}\u0000${typeName}`;
}

/** A field with its arguments, as written (`price(currency:"USD")`): two fields can share a response key only with the same signature. */
function fieldSignature(name: string, args: readonly ArgumentNode[]): string {
  return args.length === 0 ? name : `${name}(${args.map((a) => `${a.name.value}:${print(a.value)}`).join(',')})`;
}

/** Whether two representations read every field they both carry from the same response key, at any depth. */
function readAlike(a: RepresentationDraft, b: RepresentationDraft): boolean {
  for (const [name, field] of b) {
    const existing = a.get(name);
    if (existing && (existing.key !== field.key || !readAlike(existing.fields, field.fields))) return false;
  }
  return true;
}

/** Merges a representation into another; one field read from two response keys cannot be carried. */
function mergeRepresentation(into: RepresentationDraft, from: RepresentationDraft): void {
  for (const [name, field] of from) {
    const existing = into.get(name);
    if (!existing) into.set(name, { key: field.key, fields: copyRepresentation(field.fields) });
    else if (existing.key !== field.key) throw new PlanUnsupported(`a representation needs ${name} with two different arguments`);
    else mergeRepresentation(existing.fields, field.fields);
  }
}

function copyRepresentation(tree: RepresentationDraft): RepresentationDraft {
  return new Map([...tree].map(([name, field]) => [name, { key: field.key, fields: copyRepresentation(field.fields) }]));
}

/** Whether `step` waits, directly or through others, for `on`. */
function dependsOn(step: PlanStep, on: PlanStep, seen = new Set<PlanStep>()): boolean {
  for (const dependency of step.dependsOn) {
    if (dependency === on) return true;
    if (seen.has(dependency)) continue;
    seen.add(dependency);
    if (dependsOn(dependency, on, seen)) return true;
  }
  return false;
}
