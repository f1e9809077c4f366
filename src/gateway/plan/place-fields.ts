// Placing fields: which subgraph and step serves each field of the client's operation (decision 007, numbers 1 to 4 and 8 to 10 of buildPlan).
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
import { chooseTarget, compositeTypeOf, fieldScope, hasTarget, providedFor, subgraphKey, typeResolver, type Scope, type Target } from './entity-paths.js';
import type { PlanStep, PlannedDenial, PlannedField, RepresentationDraft, SelectionTree } from './plan-types.js';
import { TYPENAME, addField, addLeaf, conditionsOf, emptyTree, mergeTree } from './selection-tree.js';
import { PlanUnsatisfiable, PlanUnsupported, type FieldSetTree, type SupergraphModel } from './supergraph-model.js';

const NO_ROOTS: ReadonlyMap<string, PlanStep> = new Map();

/** Fields the router answers from the API schema without a subgraph (GraphQL spec 4.1, 4.2). */
const INTROSPECTION_ROOTS = new Set(['__typename', '__schema', '__type']);

/** One operation's planning: its steps by position, the denials, the client's and the plan's response keys (10). Lives for one buildPlan call. */
export class Planner {
  readonly steps: PlanStep[] = [];
  /** The root steps of mutation fields: their documents are mutations. */
  readonly mutationRoots = new Set<PlanStep>();
  readonly #byPosition = new Map<string, PlanStep[]>();
  readonly denials: PlannedDenial[] = [];
  /** 10. The client's fields at each path, by response key: the `fieldSignature` of each field there (of any type's objects). */
  readonly #clientKeys = new Map<string, Map<string, Set<string>>>();
  /** 10. The plan's own fields (keys, required fields) at each path: the response key of each field signature. */
  readonly #planKeys = new Map<string, Map<string, string>>();
  /** The fields that returned each position's objects (by response path), with their parent and return types (3). */
  readonly #origins = new Map<string, { typeName: string; fieldName: string; returns: string }[]>();
  /** Above 0 while planning what the plan itself needs (keys, required fields), which no denial removes. */
  #internal = 0;
  /** While planning what the plan needs for a field: when that field is wanted (11). */
  #internalIncluded: readonly Guards[] | undefined;

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
   * 10. The response key a field is fetched under. The client's fields keep theirs. The plan's own
   *     fields (keys, required fields) go under their names, unless the client (any selection at the
   *     same path, of any type's objects: they may be merged into one object) or another field of the
   *     plan puts something else there: another field (`id: name`), or the same field with other
   *     arguments (`price(currency: "EUR")` beside a required `price(currency: "USD")`). Then the
   *     field takes a private key (`__sy_price`, `__sy_price_2`, ...), one per field and arguments
   *     at that path; representations read it there and carry it under its name.
   */
  responseKey(path: readonly string[], key: string, name: string, args: readonly ArgumentNode[]): string {
    if (this.#internal === 0) return key;
    const at = pathKey(path);
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
   *     the plan needs for another field is wanted when that field is.
   */
  includedOf(nodes: readonly FieldNode[]): readonly Guards[] | undefined {
    if (this.#internal > 0) return this.#internalIncluded;
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

  /**
   * Plans what the plan itself needs (a key, required fields): fetched whatever the caller may read,
   * whenever `included` (the guards of the field it is needed for; absent: always) wants it.
   */
  internal(plan: () => void, included?: readonly Guards[]): void {
    const outer = this.#internalIncluded;
    if (this.#internal === 0) this.#internalIncluded = included;
    this.#internal++;
    try {
      plan();
    } finally {
      this.#internal--;
      this.#internalIncluded = outer;
    }
  }

  planRoot(rootType: GraphQLObjectType, selectionSet: SelectionSetNode, serial: boolean): void {
    this.recordClientKeys(rootType, selectionSet);
    const fields = collectFields(this.schema, this.analysis, rootType, [selectionSet]);
    const roots = new Map<string, PlanStep>();
    // Every subgraph starts at the root.
    const scope: Scope = { graphs: new Set(this.model.subgraphName.keys()) };
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
        step = this.newStep(this.rootGraph(rootType, selectionSet, field, graphs, NO_ROOTS, scope), [], undefined);
        this.mutationRoots.add(step);
        for (const before of previous) step.dependsOn.add(before);
        this.planObjectFields(rootType, field, step.graph, step, step.selection, [], undefined, new Set(), scope);
        // 1. The next mutation field waits for everything this one needs, its entity steps included.
        previous = this.steps.slice(first);
        continue;
      }
      const graph = this.rootGraph(rootType, selectionSet, field, graphs, roots, scope);
      step = roots.get(graph);
      if (!step) roots.set(graph, (step = this.newStep(graph, [], undefined)));
      this.planObjectFields(rootType, field, graph, step, step.selection, [], undefined, new Set(), scope);
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
  rootGraph(rootType: GraphQLObjectType, selectionSet: SelectionSetNode, field: FieldGroups, graphs: readonly string[], roots: ReadonlyMap<string, PlanStep>, scope: Scope): string {
    if (graphs.length === 1) return graphs[0];
    let best: RootCost | undefined;
    let failure: PlanUnsupported | undefined;
    for (const graph of graphs) {
      const trial = new Planner(this.model, this.schema, this.analysis, this.labels, this.denied);
      trial.recordClientKeys(rootType, selectionSet);
      const step = trial.newStep(graph, [], undefined);
      try {
        trial.planObjectFields(rootType, field, graph, step, step.selection, [], undefined, new Set(), scope);
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

  /**
   * How many fields of the client's selection below `type.name` a subgraph resolving that field
   * cannot answer along its own answer (what it `@provides` there counts as answered): each needs a
   * look-up after it. Denials and `@skip`/`@include` are not weighed: this only ranks subgraphs.
   */
  missingBelow(type: GraphQLObjectType | GraphQLInterfaceType, name: string, graph: string, nodes: readonly FieldNode[], provided: FieldSetTree | undefined): number {
    if (!compositeTypeOf(type, name)) return 0;
    const own = this.model.providesOf(type.name, name, graph);
    const below = provided?.get(name) ?? (own ? this.model.providedSet(own) : undefined);
    // The types the subgraph's own schema can return there.
    const schema = this.model.subgraphSchema(graph);
    const local = schema.getType(type.name);
    const localField = local && (isObjectType(local) || isInterfaceType(local)) ? local.getFields()[name] : undefined;
    if (!localField) return 0;
    const localType = getNamedType(localField.type);
    const possible = isAbstractType(localType) ? schema.getPossibleTypes(localType) : isObjectType(localType) ? [localType] : [];
    let missing = 0;
    for (const { name: typeName } of possible) {
      const objectType = this.schema.getType(typeName);
      if (!objectType || !isObjectType(objectType)) continue;
      const typed = providedFor(below, objectType, this.schema);
      for (const [, fieldNodes] of collectFields(this.schema, this.analysis, objectType, subSelections(nodes))) {
        const field = fieldNodes[0].name.value;
        if (field.startsWith('__')) continue;
        if (typed?.has(field) || (this.model.canResolve(typeName, field, graph, this.labels) && !this.model.requiresOf(typeName, field, graph))) missing += this.missingBelow(objectType, field, graph, fieldNodes, typed);
        else missing += 1;
      }
    }
    return missing;
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
    /** The subgraphs that could answer here, and the union members they all have (see fieldScope). */
    scope: Scope,
    /** Response keys another step serves at this position (8). */
    skip?: ReadonlySet<string>,
  ): void {
    if (isObjectType(parentType)) {
      // A subgraph whose field has this one member, where another that could answer has not: only the type name.
      if (scope.members && !scope.members.has(parentType.name)) {
        touched.add(step);
        return;
      }
      this.planObjectFields(parentType, without(collectFields(this.schema, this.analysis, parentType, selectionSets), skip), graph, step, at, path, providedFor(provided, parentType, this.schema), touched, scope);
      return;
    }
    // An abstract position: the subgraph says which type each object is; plan each type it can
    // return there, as its own schema has them (5).
    if (this.model.isInterfaceObject(parentType.name, graph)) {
      this.planInterfaceObject(parentType as GraphQLInterfaceType, selectionSets, graph, step, at, path, provided, touched, scope);
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
      this.planObjectFields(parentType, without(collectFields(this.schema, this.analysis, parentType, selectionSets), skip), graph, step, at, path, providedFor(provided, parentType, this.schema), touched, scope);
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
      this.planObjectFields(possible, fields, graph, step, fragment, path, providedFor(provided, possible, this.schema), touched, scope);
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
    scope: Scope,
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
    this.planObjectFields(iface, served, graph, step, at, path, provided, touched, scope);
    if (!needsType) return;
    const resolver = typeResolver(this, iface, graph, provided);
    const providers = new Set<PlanStep>([step]);
    this.internal(() => this.planObjectFields(iface, fieldSetFields(this.model.fieldSetSelection(resolver.key)), graph, step, at, path, provided, providers, scope));
    const resolution = this.entityStep(resolver.graph, path, iface.name, providers, resolver.key);
    resolution.lookupType = iface.name;
    resolution.resolvesType = true;
    for (const provider of providers) touched.add(provider);
    touched.add(resolution);
    this.planSelections(iface, selectionSets, resolver.graph, resolution, resolution.selection, path, undefined, touched, scope, new Set(served.keys()));
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
    /** The scope of this position: its fields' scopes follow from it. */
    scope: Scope,
  ): void {
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
      if (this.deny(type, name, key, path)) continue;
      if (!(provided?.has(name) || (this.model.canResolve(type.name, name, graph, this.labels) && !this.model.requiresOf(type.name, name, graph)))) {
        remote.push([key, nodes]);
        continue;
      }
      touched.add(step);
      const returnType = compositeTypeOf(type, name);
      const responseKey = this.responseKey(path, key, name, node.arguments ?? []);
      const planned = addField(at, responseKey, name, node.arguments ?? [], returnType !== undefined, conditionsOf(nodes), subgraphKey(this.model, type, name, graph, responseKey), this.includedOf(nodes));
      if (returnType) {
        this.noteOrigin([...path, responseKey], type.name, name, returnType.name);
        const own = this.model.providesOf(type.name, name, graph);
        const childProvided = provided?.get(name) ?? (own ? this.model.providedSet(own) : undefined);
        const childScope = fieldScope(this, type, name, graph, scope, provided);
        this.planSelections(this.positionType(type, name, graph, returnType, planned), subSelections(nodes), graph, step, planned.selection!, [...path, responseKey], childProvided, touched, childScope);
      }
    }
    for (const [key, nodes] of remote) {
      const name = nodes[0].name.value;
      const target = this.target(type, name, graph, provided, path, nodes);
      // 3. The key and the type name travel in the representation; 4. so do required fields,
      // wherever they come from. Every step that provides one comes before the entity step.
      const providers = new Set<PlanStep>([step]);
      addLeaf(at, TYPENAME);
      const ownerType = target.lookupType ?? type.name;
      const requires = this.model.requiresOf(ownerType, name, target.graph);
      const included = this.includedOf(nodes);
      this.internal(() => {
        this.planSelections(type, [this.model.fieldSetSelection(target.key)], graph, step, at, path, provided, providers, scope);
        if (requires) this.planSelections(type, [this.model.fieldSetSelection(requires)], graph, step, at, path, provided, providers, scope);
      }, included);
      const child = this.entityStep(target.graph, path, type.name, providers, target.key, requires);
      if (target.lookupType) child.lookupType = target.lookupType;
      for (const provider of providers) touched.add(provider);
      touched.add(child);
      const returnType = compositeTypeOf(type, name);
      const responseKey = this.responseKey(path, key, name, nodes[0].arguments ?? []);
      const planned = addField(child.selection, responseKey, name, nodes[0].arguments ?? [], returnType !== undefined, conditionsOf(nodes), subgraphKey(this.model, type, name, target.graph, responseKey), included);
      if (returnType) {
        this.noteOrigin([...path, responseKey], type.name, name, returnType.name);
        const own = this.model.providesOf(ownerType, name, target.graph);
        const childScope = fieldScope(this, type, name, target.graph, scope, undefined);
        this.planSelections(this.positionType(type, name, target.graph, returnType, planned), subSelections(nodes), target.graph, child, planned.selection!, [...path, responseKey], own ? this.model.providedSet(own) : undefined, touched, childScope);
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
  target(type: GraphQLObjectType | GraphQLInterfaceType, name: string, graph: string, provided: FieldSetTree | undefined, path: readonly string[], nodes: readonly FieldNode[]): Target {
    try {
      return chooseTarget(this, type, name, graph, provided, (g) => this.hasEntityStep(g, path, type.name), (g) => this.missingBelow(type, name, g, nodes, undefined));
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

/** A path of objects in the answer: the response keys to it. */
function pathKey(path: readonly string[]): string {
  return path.join('\u0000');
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
