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
import { planCost } from './batch-fetches.js';
import { chooseTarget, compositeTypeOf, hasTarget, providedFor, subgraphKey, typeResolver, type Target } from './entity-paths.js';
import type { PlanStep, PlannedDenial, PlannedField, SelectionTree } from './plan-types.js';
import { TYPENAME, addField, addLeaf, conditionsOf, emptyTree, mergeTree, sameArguments } from './selection-tree.js';
import { PlanUnsatisfiable, PlanUnsupported, type FieldSetTree, type SupergraphModel } from './supergraph-model.js';

const NO_ROOTS: ReadonlyMap<string, PlanStep> = new Map();

/** Fields the router answers from the API schema without a subgraph (GraphQL spec 4.1, 4.2). */
const INTROSPECTION_ROOTS = new Set(['__typename', '__schema', '__type']);

/** One operation's planning: its steps by position, the denials, private and client keys (10). Lives for one buildPlan call. */
export class Planner {
  readonly steps: PlanStep[] = [];
  /** The root steps of mutation fields: their documents are mutations. */
  readonly mutationRoots = new Set<PlanStep>();
  readonly #byPosition = new Map<string, PlanStep[]>();
  readonly denials: PlannedDenial[] = [];
  /** Fields the plan needs under a private key at a position (path and type), by field name (10). */
  readonly #privateKeys = new Map<string, Map<string, string>>();
  readonly #clientKeys = new Map<string, Map<string, FieldNode>>();
  /** The fields that returned each position's objects (by response path), with their parent and return types (3). */
  readonly #origins = new Map<string, { typeName: string; fieldName: string; returns: string }[]>();
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
    const roots = new Map<string, PlanStep>();
    let previous: PlanStep[] = [];
    for (const [key, nodes] of fields) {
      const name = nodes[0].name.value;
      if (INTROSPECTION_ROOTS.has(name)) continue;
      if (name.startsWith('__')) throw new PlanUnsupported(`the meta field ${name}`);
      // 9. A denied root field makes no fetch at all (an empty one would be no document).
      if (this.deny(rootType, name, key, [])) continue;
      const graphs = this.model.resolversOf(rootType.name, name, this.labels);
      if (graphs.length === 0) throw new PlanUnsupported(`no subgraph resolves ${rootType.name}.${name}`);
      const field: FieldGroups = new Map([[key, nodes]]);
      let step: PlanStep | undefined;
      if (serial) {
        const first = this.steps.length;
        step = this.newStep(this.rootGraph(rootType, field, graphs, NO_ROOTS), [], undefined);
        this.mutationRoots.add(step);
        for (const before of previous) step.dependsOn.add(before);
        this.planObjectFields(rootType, field, step.graph, step, step.selection, [], undefined, new Set());
        // 1. The next mutation field waits for everything this one needs, its entity steps included.
        previous = this.steps.slice(first);
        continue;
      }
      const graph = this.rootGraph(rootType, field, graphs, roots);
      step = roots.get(graph);
      if (!step) roots.set(graph, (step = this.newStep(graph, [], undefined)));
      this.planObjectFields(rootType, field, graph, step, step.selection, [], undefined, new Set());
    }
  }

  /**
   * 1. The subgraph of a root field that several resolve (a shareable root field): each is tried
   *    alone, and the one that serves the field's whole selection with the fewest requests one
   *    after another, then the fewest requests, then the fewest look-ups (batched in those
   *    requests) is chosen (one already serving a root field saves its root request; supergraph
   *    order breaks ties). One from which part of the selection has no source at all is never
   *    chosen; when that holds for each, the operation is unsatisfiable.
   */
  rootGraph(rootType: GraphQLObjectType, field: FieldGroups, graphs: readonly string[], roots: ReadonlyMap<string, PlanStep>): string {
    if (graphs.length === 1) return graphs[0];
    let best: RootCost | undefined;
    let failure: PlanUnsupported | undefined;
    for (const graph of graphs) {
      const trial = new Planner(this.model, this.schema, this.analysis, this.labels, this.denied);
      const step = trial.newStep(graph, [], undefined);
      try {
        trial.planObjectFields(rootType, field, graph, step, step.selection, [], undefined, new Set());
      } catch (error) {
        if (!(error instanceof PlanUnsupported)) throw error;
        // What the planner does not model outweighs a missing source: stitching may still answer it.
        if (!failure || (failure instanceof PlanUnsatisfiable && !(error instanceof PlanUnsatisfiable))) failure = error;
        continue;
      }
      const cost = planCost(trial.steps);
      const candidate = { graph, sequential: cost.sequential, calls: cost.calls - (roots.has(graph) ? 1 : 0), lookups: trial.steps.length };
      if (!best || cheaper(candidate, best)) best = candidate;
    }
    if (!best) throw failure!;
    return best.graph;
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

  hasEntityStep(graph: string, path: readonly string[], typeName: string): boolean {
    return this.#byPosition.has(positionKey(graph, path, typeName));
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
    skip?: ReadonlySet<string>,
  ): void {
    if (isObjectType(parentType)) {
      this.planObjectFields(parentType, without(collectFields(this.schema, this.analysis, parentType, selectionSets), skip), graph, step, at, path, providedFor(provided, parentType, this.schema), touched);
      return;
    }
    // An abstract position: the subgraph says which type each object is; plan each type it can
    // return there, as its own schema has them (5).
    if (this.model.isInterfaceObject(parentType.name, graph)) {
      this.planInterfaceObject(parentType as GraphQLInterfaceType, selectionSets, graph, step, at, path, provided, touched);
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
      this.planObjectFields(parentType, without(collectFields(this.schema, this.analysis, parentType, selectionSets), skip), graph, step, at, path, providedFor(provided, parentType, this.schema), touched);
      return;
    }
    for (const possibleInGraph of possibleTypes) {
      const possible = this.schema.getType(possibleInGraph.name);
      if (!possible || !isObjectType(possible)) continue;
      const fields = without(collectFields(this.schema, this.analysis, possible, selectionSets), skip);
      if (fields.size === 0) continue;
      let fragment = at.fragments.get(possible.name);
      if (!fragment) at.fragments.set(possible.name, (fragment = emptyTree()));
      // A `@provides` of abstract type provides per type condition, as the providing subgraph's schema has them.
      this.planObjectFields(possible, fields, graph, step, fragment, path, providedFor(provided, possible, this.schema), touched);
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
  planInterfaceObject(
    iface: GraphQLInterfaceType,
    selectionSets: readonly (SelectionSetNode | undefined)[],
    graph: string,
    step: PlanStep,
    at: SelectionTree,
    path: readonly string[],
    providedHere: FieldSetTree | undefined,
    touched: Set<PlanStep>,
  ): void {
    const provided = providedFor(providedHere, iface, this.schema);
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
      if (owned || (ofInterface && onInterface.has(key) && hasTarget(this, iface, name, graph, provided))) served.set(key, nodes);
      else needsType = true;
    }
    this.planObjectFields(iface, served, graph, step, at, path, provided, touched);
    if (!needsType) return;
    const resolver = typeResolver(this, iface, graph, provided);
    const providers = new Set<PlanStep>([step]);
    this.internal(() => this.planObjectFields(iface, fieldSetFields(this.model.fieldSetSelection(resolver.key)), graph, step, at, path, provided, providers));
    const resolution = this.entityStep(resolver.graph, path, iface.name, providers);
    resolution.lookupType = iface.name;
    resolution.resolvesType = true;
    for (const provider of providers) touched.add(provider);
    touched.add(resolution);
    this.addKey(resolution, resolver.key);
    this.planSelections(iface, selectionSets, resolver.graph, resolution, resolution.selection, path, undefined, touched, new Set(served.keys()));
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
  ): void {
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
      const planned = this.addPlannedField(at, key, name, node.arguments ?? [], returnType !== undefined, conditionsOf(nodes), subgraphKey(this.model, type, name, graph, key), path, type.name);
      if (returnType) {
        this.noteOrigin([...path, key], type.name, name, returnType.name);
        const own = this.model.providesOf(type.name, name, graph);
        const childProvided = provided?.get(name) ?? (own ? this.model.providedSet(own) : undefined);
        this.planSelections(this.positionType(type, name, graph, returnType, planned), subSelections(nodes), graph, step, planned.selection!, [...path, key], childProvided, touched);
      }
    }
    for (const [key, nodes] of remote) {
      const name = nodes[0].name.value;
      const target = this.target(type, name, graph, provided, path);
      // 3. The key and the type name travel in the representation; 4. so do required fields,
      // wherever they come from. Every step that provides one comes before the entity step.
      const providers = new Set<PlanStep>([step]);
      addLeaf(at, TYPENAME);
      const ownerType = target.lookupType ?? type.name;
      const requires = this.model.requiresOf(ownerType, name, target.graph);
      this.internal(() => {
        this.planSelections(type, [this.model.fieldSetSelection(target.key)], graph, step, at, path, provided, providers);
        if (requires) this.planSelections(type, [this.model.fieldSetSelection(requires)], graph, step, at, path, provided, providers);
      });
      const child = this.entityStep(target.graph, path, type.name, providers);
      if (target.lookupType) child.lookupType = target.lookupType;
      for (const provider of providers) touched.add(provider);
      this.addKey(child, target.key);
      if (requires) mergeTree(child.representation, this.model.fieldSet(requires));
      touched.add(child);
      const returnType = compositeTypeOf(type, name);
      const planned = this.addPlannedField(child.selection, key, name, nodes[0].arguments ?? [], returnType !== undefined, conditionsOf(nodes), subgraphKey(this.model, type, name, target.graph, key), path, type.name);
      if (returnType) {
        this.noteOrigin([...path, key], type.name, name, returnType.name);
        const own = this.model.providesOf(ownerType, name, target.graph);
        this.planSelections(this.positionType(type, name, target.graph, returnType, planned), subSelections(nodes), target.graph, child, planned.selection!, [...path, key], own ? this.model.providedSet(own) : undefined, touched);
      }
    }
  }

  /** Records the field of `typeName` that returned the objects at `path` (what `target` may ask again). */
  noteOrigin(path: readonly string[], typeName: string, fieldName: string, returns: string): void {
    const at = path.join('\u0000');
    const origins = this.#origins.get(at);
    if (!origins) this.#origins.set(at, [{ typeName, fieldName, returns }]);
    else if (!origins.some((o) => o.typeName === typeName && o.fieldName === fieldName)) origins.push({ typeName, fieldName, returns });
  }

  /**
   * 3. The entity look-up a field moves to. Without one the operation is unsatisfiable, unless a
   *    subgraph that resolves the field could reach these objects through the field that returned
   *    them, asked of it again (a shared root field, a value type's parent): the planner does not
   *    model that, so it is left to stitching (PlanUnsupported). Objects under a type condition of
   *    an abstract position are not reached so: a field answers all its objects from one subgraph.
   */
  target(type: GraphQLObjectType | GraphQLInterfaceType, name: string, graph: string, provided: FieldSetTree | undefined, path: readonly string[]): Target {
    try {
      return chooseTarget(this, type, name, graph, provided, (g) => this.hasEntityStep(g, path, type.name));
    } catch (error) {
      if (!(error instanceof PlanUnsatisfiable)) throw error;
      const origins = this.#origins.get(path.join('\u0000')) ?? [];
      const resolvers = this.model.resolversOf(type.name, name, this.labels).filter((g) => g !== graph);
      if (origins.some((o) => o.returns === type.name && resolvers.some((g) => this.model.canResolve(o.typeName, o.fieldName, g, this.labels)))) {
        throw new PlanUnsupported(`${error.message} but through its parent field asked of another subgraph`);
      }
      throw error;
    }
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

/** What serving a root field from one subgraph costs (1). */
interface RootCost {
  graph: string;
  /** Requests one after another. */
  sequential: number;
  /** Requests, less the root request a subgraph already serving a root field saves. */
  calls: number;
  /** Steps: the root one and each entity look-up, however they are batched. */
  lookups: number;
}

function cheaper(a: RootCost, b: RootCost): boolean {
  if (a.sequential !== b.sequential) return a.sequential < b.sequential;
  if (a.calls !== b.calls) return a.calls < b.calls;
  return a.lookups < b.lookups;
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
