// Placing fields: which subgraph and step serves each field of the client's operation (decision 007, numbers 1 to 4 and 8 to 10 of buildPlan).
import {
  getNamedType,
  isAbstractType,
  isCompositeType,
  isInterfaceType,
  isObjectType,
  type ArgumentNode,
  type DirectiveNode,
  type FieldNode,
  type GraphQLCompositeType,
  type GraphQLInterfaceType,
  type GraphQLObjectType,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';
import type { FieldGroups, OperationAnalysis } from '../../request/operation-analysis.js';
import { collectFields, fieldSetFields, subSelections, without } from './collect-fields.js';
import { chooseWay, compositeTypeOf, localFieldType, subgraphKey, typedPosition, typeResolver, type Coverage, type Way } from './entity-paths.js';
import type { Above, Frame, PlanStep, PlannedDenial, PlannedField, SelectionTree } from './plan-types.js';
import { TYPENAME, addField, addLeaf, conditionsOf, emptyTree, mergeTree, sameArguments } from './selection-tree.js';
import { PlanUnsupported, type FieldSetTree, type SupergraphModel } from './supergraph-model.js';

/** Fields the router answers from the API schema without a subgraph (GraphQL spec 4.1, 4.2). */
const INTROSPECTION_ROOTS = new Set(['__typename', '__schema', '__type']);

/** How deep below a field its coverage is counted (deeper fields rarely decide between subgraphs). */
const COVERAGE_DEPTH = 4;

/** One operation's planning: its steps by position, the denials, private and client keys (10). Lives for one buildPlan call. */
export class Planner {
  readonly steps: PlanStep[] = [];
  /** The root steps of mutation fields: their documents are mutations. */
  readonly mutationRoots = new Set<PlanStep>();
  readonly #byPosition = new Map<string, PlanStep[]>();
  /** The root step of each subgraph (queries: one per subgraph). */
  readonly #roots = new Map<string, PlanStep>();
  /**
   * Every frame planned, by position, and by the tree it plans and position (11). One tree may hold
   * objects of several positions: a look-up serves every object of its type at its path, whatever
   * the types above them, and each position keeps its own frame, so ways above it stay its own.
   */
  readonly #frames = new Map<string, Frame[]>();
  readonly #frameOfTree = new Map<SelectionTree, Map<string, Frame>>();
  /** Whether root fields may be selected again in another subgraph (a query's, never a mutation's). */
  rootLookups = true;
  /** How many ways were chosen for fewer steps one after another over fewer requests (see buildPlan). */
  tradeOffs = 0;
  readonly denials: PlannedDenial[] = [];
  /** Fields the plan needs under a private key at a position (path and type), by field name (10). */
  readonly #privateKeys = new Map<string, Map<string, string>>();
  readonly #clientKeys = new Map<string, Map<string, FieldNode>>();
  /** Above 0 while planning what the plan itself needs (keys, required fields), which no denial removes. */
  #internal = 0;

  constructor(
    readonly model: SupergraphModel,
    readonly schema: GraphQLSchema,
    /** The client operation's analysis: its fragments and memoised CollectFields. */
    readonly analysis: OperationAnalysis,
    /** The progressive-override labels switched on for the requests this plan serves. */
    readonly labels: ReadonlySet<string>,
    /** Coordinates (`Type.field`) the authorization decision denies: 9. */
    readonly denied: ReadonlySet<string>,
    /** The depth within which ways are chosen by fewest requests (11, see buildPlan); none: by fewest steps first. */
    readonly depthBudget?: number,
  ) {}

  /**
   * 10. Adds a field at a response key. The plan's own fields (keys, required fields) go under their
   *     names; where the client put another field under that name (`id: name`), the plan's field
   *     takes a private key instead (`__sy_id`), whichever came first, and representations read it there.
   */
  addPlannedField(at: SelectionTree, key: string, name: string, args: readonly ArgumentNode[], composite: boolean, directives: readonly DirectiveNode[], subgraphKey: string | undefined, path: readonly string[], typeName: string): PlannedField {
    if (this.#internal > 0) {
      // The client's fields at this position are known (recorded before anything is planned there),
      // whichever step they go to: the merged object holds them all.
      const client = this.#clientKeys.get(positionOf(path, typeName))?.get(key);
      if (client && (client.name.value !== name || !sameArguments(client.arguments ?? [], args))) key = this.privateKey(path, typeName, name);
    }
    return addField(at, key, name, args, composite, directives, subgraphKey);
  }

  /** The client's fields at a position, by response key (10). */
  recordClientKeys(path: readonly string[], typeName: string, fields: FieldGroups): void {
    if (this.#internal > 0) return;
    const position = positionOf(path, typeName);
    let keys = this.#clientKeys.get(position);
    if (!keys) this.#clientKeys.set(position, (keys = new Map()));
    for (const [key, nodes] of fields) if (!keys.has(key)) keys.set(key, nodes[0]);
  }

  privateKey(path: readonly string[], typeName: string, name: string): string {
    const position = positionOf(path, typeName);
    let keys = this.#privateKeys.get(position);
    if (!keys) this.#privateKeys.set(position, (keys = new Map()));
    const key = `__sy_${name}`;
    keys.set(name, key);
    return key;
  }

  /** Tells each entity step where its objects carry fields under private keys (10). */
  settlePrivateKeys(): void {
    if (this.#privateKeys.size === 0) return;
    const read = new Set<string>();
    for (const step of this.steps) {
      if (step.entityType === undefined) continue;
      const position = positionOf(step.path, step.entityType);
      const keys = this.#privateKeys.get(position);
      if (keys) {
        step.responseKeys = keys;
        read.add(position);
      }
    }
    // Representations read private keys at their top level only; one inside a nested key is not modelled.
    if (read.size < this.#privateKeys.size) throw new PlanUnsupported('a nested key field under a response key the client uses for another field');
  }

  /** 9. Whether the caller may not read the client's field: then it is recorded for the runner to answer FORBIDDEN. */
  deny(type: GraphQLObjectType | GraphQLInterfaceType, name: string, key: string, path: readonly string[]): boolean {
    if (this.#internal > 0 || this.denied.size === 0) return false;
    const coordinate = `${type.name}.${name}`;
    if (!this.denied.has(coordinate)) return false;
    this.denials.push({ path, typeName: type.name, key, coordinate });
    return true;
  }

  /** Plans what the plan itself needs (a key, required fields): fetched whatever the caller may read. */
  internal(plan: () => void): void {
    this.#internal++;
    try {
      plan();
    } finally {
      this.#internal--;
    }
  }

  planRoot(rootType: GraphQLObjectType, selectionSet: SelectionSetNode, serial: boolean): void {
    const fields = collectFields(this.schema, this.analysis, rootType, [selectionSet]);
    this.rootLookups = !serial;
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
    if (serial) {
      let previous: PlanStep[] = [];
      for (const { key, nodes, graphs } of planned) {
        const first = this.steps.length;
        const step = this.newStep(graphs[0], [], undefined);
        this.mutationRoots.add(step);
        for (const before of previous) step.dependsOn.add(before);
        this.planObjectFields(rootType, new Map([[key, nodes]]), step.graph, step, step.selection, [], undefined, new Set(), undefined);
        // 1. The next mutation field waits for everything this one needs, its entity steps included.
        previous = this.steps.slice(first);
      }
      return;
    }
    // 1. Fields that fewest subgraphs resolve whole are placed first: the root fetches they need are
    // then there for the fields that any of several subgraphs would serve.
    const whole = new Map(planned.map((field) => [field, field.graphs.filter((graph) => this.covers(rootType, field.nodes, graph)).length]));
    for (const { key, nodes, graphs } of [...planned].sort((a, b) => whole.get(a)! - whole.get(b)!)) {
      const graph = this.rootGraph(rootType, nodes, graphs);
      const step = this.rootStep(graph);
      this.planObjectFields(rootType, new Map([[key, nodes]]), graph, step, step.selection, [], undefined, new Set(), undefined);
    }
  }

  /** Whether `graph` resolves a root field and all that is asked below it by itself. */
  covers(rootType: GraphQLObjectType, nodes: readonly FieldNode[], graph: string): boolean {
    const { covered, total } = this.coverage(rootType, nodes[0].name.value, nodes, graph);
    return covered === total;
  }

  /**
   * 1. The subgraph of a query's root field: fewest requests (one that has a root fetch already,
   *    and resolves everything asked below the field by itself), then the one that resolves most of
   *    it, then supergraph order. What it leaves is reached by the ways of chooseWay (11).
   */
  rootGraph(rootType: GraphQLObjectType, nodes: readonly FieldNode[], graphs: readonly string[]): string {
    let best = graphs[0];
    let bestScore: number[] | undefined;
    for (const graph of graphs) {
      const { covered, total } = this.coverage(rootType, nodes[0].name.value, nodes, graph);
      const score = [(this.#roots.has(graph) ? 0 : 1) + (covered < total ? 1 : 0), -covered];
      if (!bestScore || score[0] < bestScore[0] || (score[0] === bestScore[0] && score[1] < bestScore[1])) {
        best = graph;
        bestScore = score;
      }
    }
    return best;
  }

  /** The root step of a subgraph in a query, made on first use. */
  rootStep(graph: string): PlanStep {
    let step = this.#roots.get(graph);
    if (!step) this.#roots.set(graph, (step = this.newStep(graph, [], undefined)));
    return step;
  }

  /**
   * How much of the client's selection below a field `graph` resolves by itself, counted to
   * COVERAGE_DEPTH: a field counts where the subgraph resolves it and every field above it.
   */
  coverage(type: GraphQLObjectType | GraphQLInterfaceType, name: string, nodes: readonly FieldNode[], graph: string): Coverage {
    const returnType = compositeTypeOf(type, name);
    const counts = { covered: 0, total: 0 };
    if (returnType) this.countCovered(returnType, subSelections(nodes), graph, COVERAGE_DEPTH, counts);
    return counts;
  }

  countCovered(type: GraphQLCompositeType, selectionSets: readonly (SelectionSetNode | undefined)[], graph: string | undefined, depth: number, counts: { covered: number; total: number }): void {
    if (depth === 0) return;
    for (const possible of isObjectType(type) ? [type] : this.schema.getPossibleTypes(type)) {
      for (const [, nodes] of collectFields(this.schema, this.analysis, possible, selectionSets)) {
        const name = nodes[0].name.value;
        if (name === TYPENAME) continue;
        counts.total++;
        const here = graph !== undefined && this.model.canResolve(possible.name, name, graph, this.labels) && !this.model.requiresOf(possible.name, name, graph);
        if (here) counts.covered++;
        const returnType = compositeTypeOf(possible, name);
        if (returnType) this.countCovered(returnType, subSelections(nodes), here ? graph : undefined, depth - 1, counts);
      }
    }
  }

  newStep(graph: string, path: readonly string[], entityType: string | undefined): PlanStep {
    const step: PlanStep = {
      id: this.steps.length,
      graph,
      subgraph: this.model.subgraphName.get(graph) ?? graph,
      path,
      entityType,
      selection: emptyTree(),
      representation: new Map(),
      keyFields: new Set(),
      dependsOn: new Set(),
    };
    this.steps.push(step);
    return step;
  }

  /**
   * The entity step of `graph` at this position and type that can follow every step of `after`:
   * the first one made there that none of them depends on; a new one when each does (4).
   */
  entityStep(graph: string, path: readonly string[], typeName: string, after: ReadonlySet<PlanStep>): PlanStep {
    const key = positionKey(graph, path, typeName);
    let list = this.#byPosition.get(key);
    if (!list) this.#byPosition.set(key, (list = []));
    const step = list.find((candidate) => ![...after].some((d) => d === candidate || dependsOn(d, candidate))) ?? this.newStep(graph, path, typeName);
    if (!list.includes(step)) list.push(step);
    for (const d of after) step.dependsOn.add(d);
    return step;
  }

  framesAt(position: string): readonly Frame[] {
    return this.#frames.get(position) ?? [];
  }

  entitySteps(graph: string): readonly PlanStep[] {
    return this.steps.filter((step) => step.graph === graph && step.entityType !== undefined);
  }

  /** The frame of a tree planned for objects of a position, made (and recorded there) on first use (11). */
  frame(type: GraphQLObjectType | GraphQLInterfaceType, graph: string, step: PlanStep, at: SelectionTree, path: readonly string[], provided: FieldSetTree | undefined, above: Above | undefined): Frame {
    const position = typedPosition(above?.frame.position, above?.key, type.name);
    let byPosition = this.#frameOfTree.get(at);
    if (!byPosition) this.#frameOfTree.set(at, (byPosition = new Map()));
    let frame = byPosition.get(position);
    if (!frame) {
      frame = { type, graph, step, at, path, position, provided, above };
      byPosition.set(position, frame);
      const frames = this.#frames.get(position);
      if (frames) frames.push(frame);
      else this.#frames.set(frame.position, [frame]);
    }
    return frame;
  }

  /** Plans selections at one position (an object, interface or union) inside `step`; adds every step it puts fields in to `touched`. */
  planSelections(
    parentType: GraphQLCompositeType,
    selectionSets: readonly (SelectionSetNode | undefined)[],
    graph: string,
    step: PlanStep,
    at: SelectionTree,
    path: readonly string[],
    provided: FieldSetTree | undefined,
    touched: Set<PlanStep>,
    /** Response keys another step serves at this position (8). */
    skip: ReadonlySet<string> | undefined,
    /** The field whose value holds these objects (11); absent at the root. */
    above: Above | undefined,
  ): void {
    if (isObjectType(parentType)) {
      this.planObjectFields(parentType, without(collectFields(this.schema, this.analysis, parentType, selectionSets), skip), graph, step, at, path, provided, touched, above);
      return;
    }
    // An abstract position: the subgraph says which type each object is; plan each type it can
    // return there, as its own schema has them (5).
    if (this.model.isInterfaceObject(parentType.name, graph)) {
      this.planInterfaceObject(parentType as GraphQLInterfaceType, selectionSets, graph, step, at, path, provided, touched, above);
      return;
    }
    addLeaf(at, TYPENAME);
    touched.add(step);
    const local = this.model.subgraphSchema(graph).getType(parentType.name);
    if (!local || !isAbstractType(local)) throw new PlanUnsupported(`${parentType.name} is not abstract in ${graph}`);
    for (const possibleInGraph of this.model.subgraphSchema(graph).getPossibleTypes(local)) {
      const possible = this.schema.getType(possibleInGraph.name);
      if (!possible || !isObjectType(possible)) continue;
      const fields = without(collectFields(this.schema, this.analysis, possible, selectionSets), skip);
      if (fields.size === 0) continue;
      let fragment = at.fragments.get(possible.name);
      if (!fragment) at.fragments.set(possible.name, (fragment = emptyTree()));
      this.planObjectFields(possible, fields, graph, step, fragment, path, provided, touched, above);
    }
  }

  /**
   * 8. A position whose objects come from a subgraph that knows the interface only as an
   *    `@interfaceObject` (it answers `__typename` with the interface's name): that subgraph serves
   *    the interface fields it owns; a look-up by key in a subgraph that has the real interface
   *    tells each object's concrete type and serves the fields of the concrete types it has; the
   *    rest are entity look-ups that follow it.
   */
  planInterfaceObject(
    iface: GraphQLInterfaceType,
    selectionSets: readonly (SelectionSetNode | undefined)[],
    graph: string,
    step: PlanStep,
    at: SelectionTree,
    path: readonly string[],
    provided: FieldSetTree | undefined,
    touched: Set<PlanStep>,
    above: Above | undefined,
  ): void {
    touched.add(step);
    addLeaf(at, TYPENAME);
    const own = new Map<string, FieldNode[]>();
    for (const possible of this.schema.getPossibleTypes(iface)) {
      for (const [key, nodes] of collectFields(this.schema, this.analysis, possible, selectionSets)) {
        const name = nodes[0].name.value;
        if (name === TYPENAME || !iface.getFields()[name] || !(provided?.has(name) || this.model.canResolve(iface.name, name, graph, this.labels))) continue;
        const known = own.get(key);
        if (known) known.push(...nodes.filter((n) => !known.includes(n)));
        else own.set(key, [...nodes]);
      }
    }
    this.planObjectFields(iface, own, graph, step, at, path, provided, touched, above);
    const resolver = typeResolver(this, iface, graph, provided);
    const providers = new Set<PlanStep>([step]);
    this.internal(() => this.planObjectFields(iface, fieldSetFields(this.model.fieldSetSelection(resolver.key)), graph, step, at, path, provided, providers, above));
    const resolution = this.entityStep(resolver.graph, path, iface.name, providers);
    resolution.lookupType = iface.name;
    resolution.resolvesType = true;
    for (const provider of providers) touched.add(provider);
    touched.add(resolution);
    this.addKey(resolution, resolver.key);
    this.planSelections(iface, selectionSets, resolver.graph, resolution, resolution.selection, path, undefined, touched, new Set(own.keys()), above);
  }

  /** The key's fields go into the step's representations, and mark an object with a null one as no entity. */
  addKey(step: PlanStep, key: string): void {
    const tree = this.model.fieldSet(key);
    mergeTree(step.representation, tree);
    for (const field of tree.keys()) step.keyFields.add(field);
  }

  planObjectFields(
    type: GraphQLObjectType | GraphQLInterfaceType,
    fields: FieldGroups,
    graph: string,
    step: PlanStep,
    at: SelectionTree,
    path: readonly string[],
    provided: FieldSetTree | undefined,
    touched: Set<PlanStep>,
    above: Above | undefined,
  ): void {
    const frame = this.frame(type, graph, step, at, path, provided, above);
    const remote: [string, readonly FieldNode[]][] = [];
    this.recordClientKeys(path, type.name, fields);
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
      if (this.deny(type, name, key, path)) continue;
      if (!(provided?.has(name) || (this.model.canResolve(type.name, name, graph, this.labels) && !this.model.requiresOf(type.name, name, graph)))) {
        remote.push([key, nodes]);
        continue;
      }
      touched.add(step);
      const returnType = compositeTypeOf(type, name);
      const conditions = conditionsOf(nodes);
      const planned = this.addPlannedField(at, key, name, node.arguments ?? [], returnType !== undefined, conditions, subgraphKey(this.model, type, name, graph, key), path, type.name);
      if (returnType) {
        const own = this.model.providesOf(type.name, name, graph);
        const childProvided = provided?.get(name) ?? (own ? this.model.fieldSet(own) : undefined);
        const below: Above = { frame, key, name, arguments: node.arguments ?? [], directives: conditions };
        this.planSelections(this.positionType(type, name, graph, returnType, planned), subSelections(nodes), graph, step, planned.selection!, [...path, key], childProvided, touched, undefined, below);
      }
    }
    for (const [key, nodes] of remote) {
      const name = nodes[0].name.value;
      const coverages = new Map<string, Coverage>();
      const coverage = (g: string): Coverage => {
        let known = coverages.get(g);
        if (!known) coverages.set(g, (known = this.coverage(type, name, nodes, g)));
        return known;
      };
      const way = chooseWay(this, frame, name, coverage);
      if (way.tradeOff) this.tradeOffs++;
      this.follow(way, frame, key, nodes, touched);
    }
  }

  /**
   * Plans a field its frame's subgraph cannot resolve the way chooseWay found (3, 4, 8, 11): the
   * look-up's key (and required fields) in the frame it starts from, whose steps all come before
   * it; then, from the level the way starts at, the client's fields down to the field's position,
   * and the field there with its selection.
   */
  follow(way: Way, frame: Frame, key: string, nodes: readonly FieldNode[], touched: Set<PlanStep>): void {
    const { type, path } = frame;
    const name = nodes[0].name.value;
    const links: Above[] = [];
    let level = frame;
    for (let i = 0; i < way.level; i++) {
      links.unshift(level.above!);
      level = level.above!.frame;
    }
    let top: Frame;
    if (way.kind === 'extend') top = way.from!;
    else if (way.kind === 'root') {
      const root = this.rootStep(way.graph);
      top = this.frame(level.type, way.graph, root, root.selection, [], undefined, undefined);
    } else {
      // 3. The key and the type name travel in the representation; 4. so do required fields,
      // wherever they come from. Every step that provides one comes before the entity step.
      const from = way.from!;
      const providers = new Set<PlanStep>([from.step]);
      addLeaf(from.at, TYPENAME);
      const requires = way.level === 0 ? this.model.requiresOf(way.lookupType ?? type.name, name, way.graph) : undefined;
      this.internal(() => {
        this.planSelections(from.type, [this.model.fieldSetSelection(way.key!)], from.graph, from.step, from.at, from.path, from.provided, providers, undefined, from.above);
        if (requires) this.planSelections(from.type, [this.model.fieldSetSelection(requires)], from.graph, from.step, from.at, from.path, from.provided, providers, undefined, from.above);
      });
      const child = this.entityStep(way.graph, level.path, level.type.name, providers);
      if (way.lookupType) child.lookupType = way.lookupType;
      for (const provider of providers) touched.add(provider);
      this.addKey(child, way.key!);
      if (requires) mergeTree(child.representation, this.model.fieldSet(requires));
      touched.add(child);
      if (way.level === 0) {
        // Looked up for this field: the field is planned in the look-up whatever its subgraph requires (the representation carries it).
        this.planLookedUp(type, key, nodes, way, this.frame(type, way.graph, child, child.selection, path, undefined, frame.above), touched);
        return;
      }
      top = this.frame(level.type, way.graph, child, child.selection, level.path, undefined, level.above);
    }
    // 11. Down from the level the way starts at: the client's fields again, each below the one before.
    let at = top;
    links.forEach((link, i) => {
      at = this.descend(at, link, i + 1 < links.length ? links[i + 1].frame : frame);
    });
    this.planObjectFields(type, new Map([[key, nodes]]), at.graph, at.step, at.at, at.path, at.provided, touched, at.above);
  }

  /** The field in the entity step that looks it up at its own position (3, 4, 8). */
  planLookedUp(type: GraphQLObjectType | GraphQLInterfaceType, key: string, nodes: readonly FieldNode[], way: Way, frame: Frame, touched: Set<PlanStep>): void {
    const node = nodes[0];
    const name = node.name.value;
    const returnType = compositeTypeOf(type, name);
    const conditions = conditionsOf(nodes);
    const planned = this.addPlannedField(frame.at, key, name, node.arguments ?? [], returnType !== undefined, conditions, subgraphKey(this.model, type, name, way.graph, key), frame.path, type.name);
    if (returnType) {
      const own = this.model.providesOf(way.lookupType ?? type.name, name, way.graph);
      const below: Above = { frame, key, name, arguments: node.arguments ?? [], directives: conditions };
      this.planSelections(this.positionType(type, name, way.graph, returnType, planned), subSelections(nodes), way.graph, frame.step, planned.selection!, [...frame.path, key], own ? this.model.fieldSet(own) : undefined, touched, undefined, below);
    }
  }

  /**
   * One field of the way down (11): the client's field of the frame above, selected in this frame's
   * step, and the frame of the objects below it there (in a fragment where that subgraph's field
   * has an abstract type).
   */
  descend(frame: Frame, link: Above, below: Frame): Frame {
    const { model } = this;
    const localType = localFieldType(model, frame.type, link.name, below.type, frame.graph);
    if (!localType) throw new PlanUnsupported(`${frame.graph} has no ${below.type.name} below ${frame.type.name}.${link.name}`);
    const planned = this.addPlannedField(frame.at, link.key, link.name, link.arguments, true, link.directives, subgraphKey(model, frame.type, link.name, frame.graph, link.key), frame.path, frame.type.name);
    let at = planned.selection!;
    if (localType.name !== below.type.name) {
      addLeaf(at, TYPENAME);
      let fragment = at.fragments.get(below.type.name);
      if (!fragment) at.fragments.set(below.type.name, (fragment = emptyTree()));
      at = fragment;
    }
    const own = model.providesOf(frame.type.name, link.name, frame.graph);
    const provided = frame.provided?.get(link.name) ?? (own ? model.fieldSet(own) : undefined);
    return this.frame(below.type, frame.graph, frame.step, at, below.path, provided, { frame, key: link.key, name: link.name, arguments: link.arguments, directives: link.directives });
  }

  /**
   * The type a subgraph returns at a field: a shareable field may be an object type in one
   * subgraph (Book) where the supergraph has its abstract type (Media). Then only that type's
   * fragments apply, and `__typename` is fetched for the projection to resolve the abstract type.
   */
  positionType(type: GraphQLObjectType | GraphQLInterfaceType, fieldName: string, graph: string, returnType: GraphQLCompositeType, planned: PlannedField): GraphQLCompositeType {
    if (!isAbstractType(returnType)) return returnType;
    const local = this.model.subgraphSchema(graph).getType(type.name);
    const localField = local && (isObjectType(local) || isInterfaceType(local)) ? local.getFields()[fieldName] : undefined;
    const localName = localField ? getNamedType(localField.type).name : returnType.name;
    if (localName === returnType.name) return returnType;
    const narrowed = this.schema.getType(localName);
    if (!narrowed || !isCompositeType(narrowed)) return returnType;
    addLeaf(planned.selection!, TYPENAME);
    return narrowed;
  }
}

/** A position of objects in the answer: the response keys to it and the objects' type. */
function positionOf(path: readonly string[], typeName: string): string {
  return `${path.join('\u0000')}\u0000${typeName}`;
}

/** One entity step per subgraph, position and type. */
function positionKey(graph: string, path: readonly string[], typeName: string): string {
  return `${graph}\u0000${positionOf(path, typeName)}`;
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
