// The query planner: one client operation becomes fetch steps, one per subgraph and entity position, each with its document.
import {
  Kind,
  getNamedType,
  isAbstractType,
  isInterfaceType,
  isCompositeType,
  isObjectType,
  print,
  validate,
  valueFromASTUntyped,
  type ArgumentNode,
  type DirectiveNode,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLInterfaceType,
  type GraphQLObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionNode,
  type SelectionSetNode,
  type ValueNode,
  type VariableDefinitionNode,
} from 'graphql';
import { PlanInvalid, PlanUnsupported, type FieldSetTree, type SupergraphModel } from './supergraph-model.js';
import type { Fetch, FetchStep, PlanStep, PlannedDenial, PlannedField, QueryPlan, SelectionTree } from './plan-types.js';

export type { Fetch, FetchStep, PlannedDenial, PlannedField, QueryPlan, SelectionTree } from './plan-types.js';

const TYPENAME = '__typename';
const NONE: ReadonlySet<string> = new Set();

/**
 * Plans a query or mutation operation against the supergraph (decision 007). Throws
 * PlanUnsupported for what it does not model (subscriptions, executable directives other than
 * `@skip`/`@include`, a nested key field under a response key the client uses for another field);
 * the caller then executes the operation by stitching. The numbers below are referred to in the code
 * (6 is in batchFetches, 8 in planInterfaceObject, 10 in addPlannedField).
 *
 * 1. Root fields are grouped by the subgraph that resolves them (preferring one already chosen).
 *    Mutation fields run one after another (GraphQL spec 6.2.2): each gets its own root fetch,
 *    which waits for every step of the field before it. Introspection fields (`__schema`,
 *    `__type`, `__typename`) are answered by the router from the API schema.
 * 2. Each field stays in the subgraph of its parent while that subgraph can resolve it (its own
 *    field, a key field, or one a parent field `@provides`), and has no `@requires` there.
 * 3. Otherwise the field moves to an entity step at the same position in a subgraph that resolves
 *    it, by a key the current subgraph can return; when none can be returned directly, the key's
 *    fields are themselves planned as fields (a hop through a subgraph that knows both keys).
 *    The key fields and `__typename` are added to the parent step for the representations.
 * 4. A field with `@requires` gets its required fields planned at the same position first (they may
 *    come from other steps), and its entity step depends on every step that provides them. When
 *    the step of that subgraph at that position is itself needed to provide them (two subgraphs
 *    requiring fields of each other), a second step at the same position follows it.
 * 5. Every step gets its document once: nothing about a plan is computed per request. An abstract
 *    position gets a type condition for each possible type in the subgraph's own schema, and a
 *    field whose type in that subgraph differs from the supergraph's is aliased.
 * 7. Every document is validated against its subgraph's own schema (read from the join
 *    directives) before the plan is used: PlanInvalid, never a request the subgraph must reject.
 * 8. `@interfaceObject`: see planInterfaceObject.
 * 9. A plan is made per authorization decision too: a field the caller may not read is left out
 *    of every subgraph document and answered FORBIDDEN at its path, nullability deciding what
 *    else falls; keys and required fields the plan itself needs are still fetched.
 */
export function buildPlan(
  model: SupergraphModel,
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName?: string | null,
  labels: ReadonlySet<string> = NONE,
  denied: ReadonlySet<string> = NONE,
): QueryPlan {
  const operation = selectOperation(document, operationName);
  if (operation.operation === 'subscription') throw new PlanUnsupported('subscription operations are executed by stitching');
  if (operation.directives?.length) throw new PlanUnsupported('operation directives');
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const planner = new Planner(model, schema, fragments, labels, denied);
  const rootType = operation.operation === 'mutation' ? schema.getMutationType() : schema.getQueryType();
  if (!rootType) throw new PlanUnsupported(`no ${operation.operation} type`);
  planner.planRoot(rootType, operation.selectionSet, operation.operation === 'mutation');
  planner.settlePrivateKeys();
  const steps = topologicalOrder(planner.steps);
  const definitions = new Map((operation.variableDefinitions ?? []).map((d) => [d.variable.name.value, d]));
  const variableDefaults: Record<string, unknown> = {};
  for (const [name, definition] of definitions) if (definition.defaultValue) variableDefaults[name] = valueFromASTUntyped(definition.defaultValue);
  const fetches = batchFetches(steps, definitions, planner.mutationRoots);
  // 7. The safety net: a document its subgraph must reject is never sent.
  for (const fetch of fetches) {
    const errors = validate(model.subgraphSchema(fetch.graph), fetch.document);
    if (errors.length > 0) throw new PlanInvalid(`the document for ${fetch.subgraph} is invalid there: ${errors[0].message}`);
  }
  return { fetches, denied: planner.denials, variableDefaults };
}

/**
 * 6. Entity steps of one subgraph that wait for the same steps are ready at the same moment: they
 *    go in one request, one aliased `_entities` field each (as stitching's batching does per tick).
 */
function batchFetches(steps: readonly PlanStep[], definitions: ReadonlyMap<string, VariableDefinitionNode>, mutationRoots: ReadonlySet<PlanStep>): Fetch[] {
  // Steps come dependencies first, so the fetches a step waits for are known when it is placed.
  // Groups in the order they are made, so a group's index is its fetch's id.
  const groups: { steps: PlanStep[]; dependsOn: number[] }[] = [];
  const byKey = new Map<string, number>();
  const groupOf = new Map<PlanStep, number>();
  for (const step of steps) {
    const dependsOn = [...new Set([...step.dependsOn].map((d) => groupOf.get(d)!))].sort((a, b) => a - b);
    const key = step.entityType === undefined ? `root\u0000${step.id}` : `${step.graph}\u0000${dependsOn.join(',')}`;
    let index = byKey.get(key);
    if (index === undefined) {
      index = groups.push({ steps: [], dependsOn }) - 1;
      byKey.set(key, index);
    }
    groups[index]!.steps.push(step);
    groupOf.set(step, index);
  }
  // A group waits only for groups made before it, so the steps its steps depend on are built when it is emitted.
  const fetches: Fetch[] = [];
  const built = new Map<PlanStep, FetchStep>();
  for (const group of groups) {
    const operation = mutationRoots.has(group.steps[0]) ? 'mutation' : 'query';
    fetches.push(emitFetch(fetches.length, group.steps, operation, group.dependsOn.map((id) => fetches[id]), definitions, built));
  }
  return fetches;
}

function selectOperation(document: DocumentNode, operationName?: string | null): OperationDefinitionNode {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const operation = operationName ? operations.find((o) => o.name?.value === operationName) : operations.length === 1 ? operations[0] : undefined;
  if (!operation) throw new PlanUnsupported('no single operation to plan');
  return operation;
}

/** Fields the router answers from the API schema without a subgraph (GraphQL spec 4.1, 4.2). */
const INTROSPECTION_ROOTS = new Set(['__typename', '__schema', '__type']);

/** How deep a key may be reached through other subgraphs' keys (3 is more hops than real graphs use). */
const MAX_KEY_HOPS = 3;

class Planner {
  readonly steps: PlanStep[] = [];
  /** The root steps of mutation fields: their documents are mutations. */
  readonly mutationRoots = new Set<PlanStep>();
  readonly #byPosition = new Map<string, PlanStep[]>();
  readonly denials: PlannedDenial[] = [];
  /** Fields the plan needs under a private key at a position (path and type), by field name (10). */
  readonly #privateKeys = new Map<string, Map<string, string>>();
  readonly #clientKeys = new Map<string, Map<string, FieldNode>>();
  /** Above 0 while planning what the plan itself needs (keys, required fields), which no denial removes. */
  #internal = 0;

  constructor(
    readonly model: SupergraphModel,
    readonly schema: GraphQLSchema,
    readonly fragments: ReadonlyMap<string, FragmentDefinitionNode>,
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
  recordClientKeys(path: readonly string[], typeName: string, fields: ReadonlyMap<string, FieldNode[]>): void {
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
    const fields = this.collectFields(rootType, selectionSet.selections);
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
      let step: PlanStep | undefined;
      if (serial) {
        const first = this.steps.length;
        step = this.newStep(graphs[0], [], undefined);
        this.mutationRoots.add(step);
        for (const before of previous) step.dependsOn.add(before);
        this.planObjectFields(rootType, new Map([[key, nodes]]), step.graph, step, step.selection, [], undefined, new Set());
        // 1. The next mutation field waits for everything this one needs, its entity steps included.
        previous = this.steps.slice(first);
        continue;
      }
      const graph = graphs.find((g) => roots.has(g)) ?? graphs[0];
      step = roots.get(graph);
      if (!step) roots.set(graph, (step = this.newStep(graph, [], undefined)));
      this.planObjectFields(rootType, new Map([[key, nodes]]), graph, step, step.selection, [], undefined, new Set());
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

  hasEntityStep(graph: string, path: readonly string[], typeName: string): boolean {
    return this.#byPosition.has(positionKey(graph, path, typeName));
  }

  /** Plans selections at one position (an object, interface or union) inside `step`; adds every step it puts fields in to `touched`. */
  planSelections(
    parentType: GraphQLCompositeType,
    selections: readonly SelectionNode[],
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
      this.planObjectFields(parentType, without(this.collectFields(parentType, selections), skip), graph, step, at, path, provided, touched);
      return;
    }
    // An abstract position: the subgraph says which type each object is; plan each type it can
    // return there, as its own schema has them (5).
    if (this.model.isInterfaceObject(parentType.name, graph)) {
      this.planInterfaceObject(parentType as GraphQLInterfaceType, selections, graph, step, at, path, provided, touched);
      return;
    }
    addLeaf(at, TYPENAME);
    touched.add(step);
    const local = this.model.subgraphSchema(graph).getType(parentType.name);
    if (!local || !isAbstractType(local)) throw new PlanUnsupported(`${parentType.name} is not abstract in ${graph}`);
    for (const possibleInGraph of this.model.subgraphSchema(graph).getPossibleTypes(local)) {
      const possible = this.schema.getType(possibleInGraph.name);
      if (!possible || !isObjectType(possible)) continue;
      const fields = without(this.collectFields(possible, selections), skip);
      if (fields.size === 0) continue;
      let fragment = at.fragments.get(possible.name);
      if (!fragment) at.fragments.set(possible.name, (fragment = emptyTree()));
      this.planObjectFields(possible, fields, graph, step, fragment, path, provided, touched);
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
    selections: readonly SelectionNode[],
    graph: string,
    step: PlanStep,
    at: SelectionTree,
    path: readonly string[],
    provided: FieldSetTree | undefined,
    touched: Set<PlanStep>,
  ): void {
    touched.add(step);
    addLeaf(at, TYPENAME);
    const own = new Map<string, FieldNode[]>();
    for (const possible of this.schema.getPossibleTypes(iface)) {
      for (const [key, nodes] of this.collectFields(possible, selections)) {
        const name = nodes[0].name.value;
        if (name === TYPENAME || !iface.getFields()[name] || !(provided?.has(name) || this.model.canResolve(iface.name, name, graph, this.labels))) continue;
        const known = own.get(key);
        if (known) known.push(...nodes.filter((n) => !known.includes(n)));
        else own.set(key, [...nodes]);
      }
    }
    this.planObjectFields(iface, own, graph, step, at, path, provided, touched);
    const resolver = this.typeResolver(iface, graph, provided);
    const providers = new Set<PlanStep>([step]);
    this.internal(() => this.planObjectFields(iface, fieldSetFields(this.model.fieldSetSelection(resolver.key)), graph, step, at, path, provided, providers));
    const resolution = this.entityStep(resolver.graph, path, iface.name, providers);
    resolution.lookupType = iface.name;
    resolution.resolvesType = true;
    for (const provider of providers) touched.add(provider);
    touched.add(resolution);
    this.addKey(resolution, resolver.key);
    this.planSelections(iface, selections, resolver.graph, resolution, resolution.selection, path, undefined, touched, new Set(own.keys()));
  }

  /** The key's fields go into the step's representations, and mark an object with a null one as no entity. */
  addKey(step: PlanStep, key: string): void {
    const tree = this.model.fieldSet(key);
    mergeTree(step.representation, tree);
    for (const field of tree.keys()) step.keyFields.add(field);
  }

  /** A subgraph with the real interface that resolves it by a key the interface object's subgraph can return. */
  typeResolver(iface: GraphQLInterfaceType, graph: string, provided: FieldSetTree | undefined): { graph: string; key: string } {
    for (const candidate of this.model.graphsOf(iface.name)) {
      if (candidate === graph || this.model.isInterfaceObject(iface.name, candidate)) continue;
      for (const key of this.model.keysIn(iface.name, candidate)) if (this.canReturn(iface, this.model.fieldSet(key), graph, provided)) return { graph: candidate, key };
    }
    throw new PlanUnsupported(`no subgraph tells the concrete type of ${iface.name} objects from ${graph}`);
  }

  planObjectFields(
    type: GraphQLObjectType | GraphQLInterfaceType,
    fields: Map<string, FieldNode[]>,
    graph: string,
    step: PlanStep,
    at: SelectionTree,
    path: readonly string[],
    provided: FieldSetTree | undefined,
    touched: Set<PlanStep>,
  ): void {
    const remote: [string, FieldNode[]][] = [];
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
      const returnType = this.returnType(type, name);
      const planned = this.addPlannedField(at, key, name, node.arguments ?? [], returnType !== undefined, conditionsOf(nodes), this.subgraphKey(type, name, graph, key), path, type.name);
      if (returnType) {
        const own = this.model.providesOf(type.name, name, graph);
        const childProvided = provided?.get(name) ?? (own ? this.model.fieldSet(own) : undefined);
        this.planSelections(this.positionType(type, name, graph, returnType, planned), subSelections(nodes), graph, step, planned.selection!, [...path, key], childProvided, touched);
      }
    }
    for (const [key, nodes] of remote) {
      const name = nodes[0].name.value;
      const target = this.chooseTarget(type, name, graph, path, provided);
      // 3. The key and the type name travel in the representation; 4. so do required fields,
      // wherever they come from. Every step that provides one comes before the entity step.
      const providers = new Set<PlanStep>([step]);
      addLeaf(at, TYPENAME);
      const ownerType = target.lookupType ?? type.name;
      const requires = this.model.requiresOf(ownerType, name, target.graph);
      this.internal(() => {
        this.planSelections(type, this.model.fieldSetSelection(target.key).selections, graph, step, at, path, provided, providers);
        if (requires) this.planSelections(type, this.model.fieldSetSelection(requires).selections, graph, step, at, path, provided, providers);
      });
      const child = this.entityStep(target.graph, path, type.name, providers);
      if (target.lookupType) child.lookupType = target.lookupType;
      for (const provider of providers) touched.add(provider);
      this.addKey(child, target.key);
      if (requires) mergeTree(child.representation, this.model.fieldSet(requires));
      touched.add(child);
      const returnType = this.returnType(type, name);
      const planned = this.addPlannedField(child.selection, key, name, nodes[0].arguments ?? [], returnType !== undefined, conditionsOf(nodes), this.subgraphKey(type, name, target.graph, key), path, type.name);
      if (returnType) {
        const own = this.model.providesOf(ownerType, name, target.graph);
        this.planSelections(this.positionType(type, name, target.graph, returnType, planned), subSelections(nodes), target.graph, child, planned.selection!, [...path, key], own ? this.model.fieldSet(own) : undefined, touched);
      }
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

  /** The alias of a field whose type in `graph` differs from the supergraph's (5); undefined when it has none. */
  subgraphKey(type: GraphQLObjectType | GraphQLInterfaceType, fieldName: string, graph: string, key: string): string | undefined {
    const local = this.model.subgraphSchema(graph).getType(type.name);
    const localField = local && (isObjectType(local) || isInterfaceType(local)) ? local.getFields()[fieldName] : undefined;
    if (!localField) return undefined;
    const localType = String(localField.type);
    if (localType === String(type.getFields()[fieldName].type)) return undefined;
    return `${key}__${localType.replace(/!/g, '_nn').replace(/\[/g, '_l').replace(/\]/g, '')}`;
  }

  /**
   * A subgraph that resolves the field, by a key the current subgraph can return (preferring a
   * step already made there); else one whose key the current subgraph can obtain through other
   * subgraphs' keys (3).
   */
  chooseTarget(type: GraphQLObjectType | GraphQLInterfaceType, fieldName: string, graph: string, path: readonly string[], provided: FieldSetTree | undefined): Target {
    // A field with @requires in the current subgraph is resolved there too, but by a look-up that carries what it requires.
    const candidates = this.model.resolversOf(type.name, fieldName, this.labels).filter((g) => g !== graph || this.model.requiresOf(type.name, fieldName, g) !== undefined);
    candidates.sort((a, b) => Number(this.hasEntityStep(b, path, type.name)) - Number(this.hasEntityStep(a, path, type.name)));
    for (const candidate of candidates) {
      for (const key of this.model.keysIn(type.name, candidate)) {
        if (this.canReturn(type, this.model.fieldSet(key), graph, provided)) return { graph: candidate, key };
      }
    }
    for (const candidate of candidates) {
      for (const key of this.model.keysIn(type.name, candidate)) {
        if (this.canObtain(type, this.model.fieldSet(key), graph, provided, MAX_KEY_HOPS)) return { graph: candidate, key };
      }
    }
    // 8. A field an `@interfaceObject` adds to an interface: looked up as the interface there.
    if (isObjectType(type)) {
      for (const iface of type.getInterfaces()) {
        if (!iface.getFields()[fieldName]) continue;
        for (const candidate of this.model.graphsOf(iface.name)) {
          if (candidate === graph || !this.model.isInterfaceObject(iface.name, candidate) || !this.model.canResolve(iface.name, fieldName, candidate, this.labels)) continue;
          for (const key of this.model.keysIn(iface.name, candidate)) {
            if (this.canReturn(type, this.model.fieldSet(key), graph, provided)) return { graph: candidate, key, lookupType: iface.name };
          }
        }
      }
    }
    throw new PlanUnsupported(`no entity path from ${graph} to ${type.name}.${fieldName}`);
  }

  /** Whether `graph` can return every field of the set on objects of `type` by itself. */
  canReturn(type: GraphQLObjectType | GraphQLInterfaceType, fields: FieldSetTree, graph: string, provided: FieldSetTree | undefined): boolean {
    for (const [name, sub] of fields) {
      if (name === TYPENAME) continue;
      if (!(provided?.has(name) || (this.model.canResolve(type.name, name, graph, this.labels) && !this.model.requiresOf(type.name, name, graph)))) return false;
      if (sub.size === 0) continue;
      const returnType = this.returnType(type, name);
      if (!returnType || !isObjectType(returnType)) return false;
      if (!this.canReturn(returnType, sub, graph, provided?.get(name))) return false;
    }
    return true;
  }

  /** Whether the fields can be had at this position from `graph`, or through at most `hops` look-ups by other subgraphs' keys. */
  canObtain(type: GraphQLObjectType | GraphQLInterfaceType, fields: FieldSetTree, graph: string, provided: FieldSetTree | undefined, hops: number): boolean {
    for (const [name, sub] of fields) {
      const one: FieldSetTree = new Map([[name, sub]]);
      if (this.canReturn(type, one, graph, provided)) continue;
      if (hops === 0) return false;
      const found = this.model
        .resolversOf(type.name, name, this.labels)
        .filter((g) => g !== graph && this.canReturn(type, one, g, undefined))
        .some((g) => this.model.keysIn(type.name, g).some((key) => this.canObtain(type, this.model.fieldSet(key), graph, provided, hops - 1)));
      if (!found) return false;
    }
    return true;
  }

  returnType(type: GraphQLObjectType | GraphQLInterfaceType, fieldName: string): GraphQLCompositeType | undefined {
    const field = type.getFields()[fieldName];
    if (!field) throw new PlanUnsupported(`${type.name}.${fieldName} is not in the supergraph`);
    const named = getNamedType(field.type);
    return isCompositeType(named) ? named : undefined;
  }

  /**
   * GraphQL's CollectFields (spec 6.3.2) for one concrete type, with every `@skip`/`@include` taken
   * as "maybe": what they exclude is decided per request, by the subgraph for a field's own
   * conditions and by the projection for everything (a fragment's condition is not sent, its fields
   * are fetched). Any other directive cannot be planned.
   */
  collectFields(type: GraphQLObjectType, selections: readonly SelectionNode[], into = new Map<string, FieldNode[]>(), seen = new Set<string>()): Map<string, FieldNode[]> {
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
        if (!selection.typeCondition || this.applies(selection.typeCondition.name.value, type)) this.collectFields(type, selection.selectionSet.selections, into, seen);
      } else {
        const name = selection.name.value;
        const fragment = this.fragments.get(name);
        if (!fragment) throw new PlanUnsupported(`unknown fragment ${name}`);
        if (seen.has(name) || !this.applies(fragment.typeCondition.name.value, type)) continue;
        seen.add(name);
        this.collectFields(type, fragment.selectionSet.selections, into, seen);
        seen.delete(name);
      }
    }
    return into;
  }

  applies(condition: string, type: GraphQLObjectType): boolean {
    if (condition === type.name) return true;
    const conditionType = this.schema.getType(condition);
    return conditionType !== undefined && isAbstractType(conditionType) && this.schema.isSubType(conditionType, type);
  }
}

/** Where an entity look-up goes: the subgraph, the key, and the interface it is looked up as (8). */
interface Target {
  graph: string;
  key: string;
  lookupType?: string;
}

/** The fields of a field set, by name, as CollectFields would give them. */
function fieldSetFields(selectionSet: SelectionSetNode): Map<string, FieldNode[]> {
  const fields = new Map<string, FieldNode[]>();
  for (const selection of selectionSet.selections) if (selection.kind === Kind.FIELD) fields.set(selection.name.value, [selection]);
  return fields;
}

function without(fields: Map<string, FieldNode[]>, skip: ReadonlySet<string> | undefined): Map<string, FieldNode[]> {
  if (!skip || skip.size === 0) return fields;
  for (const key of skip) fields.delete(key);
  return fields;
}

/** A position of objects in the answer: the response keys to it and the objects' type. */
function positionOf(path: readonly string[], typeName: string): string {
  return `${path.join('\u0000')}\u0000${typeName}`;
}

/** One entity step per subgraph, position and type. */
function positionKey(graph: string, path: readonly string[], typeName: string): string {
  return `${graph}\u0000${positionOf(path, typeName)}`;
}

function emptyTree(): SelectionTree {
  return { fields: new Map(), fragments: new Map() };
}

function subSelections(nodes: readonly FieldNode[]): SelectionNode[] {
  return nodes.flatMap((node) => node.selectionSet?.selections ?? []);
}

/** Adds a field at a response key, or merges with the one already there; two different fields under one key cannot be planned. */
function addField(at: SelectionTree, key: string, name: string, args: readonly ArgumentNode[], composite: boolean, directives: readonly DirectiveNode[] = [], subgraphKey?: string): PlannedField {
  const existing = at.fields.get(key);
  if (existing) {
    if (existing.name !== name || !sameArguments(existing.arguments, args) || existing.subgraphKey !== subgraphKey) throw new PlanUnsupported(`two different fields under the response key "${key}"`);
    // Wanted under different conditions (or also by the plan itself, for a key): always fetched.
    if (existing.directives.length > 0 && !sameDirectives(existing.directives, directives)) {
      // A new object under the same key (the map keeps its place): planned fields are never written.
      const merged: PlannedField = { ...existing, directives: [] };
      at.fields.set(key, merged);
      return merged;
    }
    return existing;
  }
  const field: PlannedField = { name, arguments: args, directives, selection: composite ? emptyTree() : undefined, subgraphKey };
  at.fields.set(key, field);
  return field;
}

function addLeaf(at: SelectionTree, name: string, key = name): void {
  const existing = at.fields.get(key);
  if (existing && existing.name !== name) throw new PlanUnsupported(`two different fields under the response key "${key}"`);
  if (!existing) at.fields.set(key, { name, arguments: [], directives: [] });
  else if (existing.directives.length > 0) at.fields.set(key, { ...existing, directives: [] });
}

/** The `@skip`/`@include` of a response key's selections when they all carry the same ones; none otherwise. */
function conditionsOf(nodes: readonly FieldNode[]): readonly DirectiveNode[] {
  const first = nodes[0].directives ?? [];
  if (first.length === 0) return first;
  return nodes.every((node) => sameDirectives(node.directives ?? [], first)) ? first : [];
}

function sameDirectives(a: readonly DirectiveNode[], b: readonly DirectiveNode[]): boolean {
  return a === b || (a.length === b.length && a.every((directive, i) => print(directive) === print(b[i])));
}

function sameArguments(a: readonly ArgumentNode[], b: readonly ArgumentNode[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  return a.every((argument, i) => argument.name.value === b[i].name.value && print(argument.value) === print(b[i].value));
}

function mergeTree(into: FieldSetTree, from: FieldSetTree): void {
  for (const [name, sub] of from) {
    const existing = into.get(name);
    if (existing) mergeTree(existing, sub);
    else into.set(name, new Map(sub));
  }
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

/** Orders steps so each follows its dependencies; a cycle cannot be executed in any order. */
function topologicalOrder(steps: readonly PlanStep[]): PlanStep[] {
  const ordered: PlanStep[] = [];
  const state = new Map<PlanStep, 'visiting' | 'done'>();
  const visit = (step: PlanStep): void => {
    const seen = state.get(step);
    if (seen === 'done') return;
    if (seen === 'visiting') throw new PlanUnsupported('steps depend on each other in a cycle');
    state.set(step, 'visiting');
    for (const dependency of step.dependsOn) visit(dependency);
    state.set(step, 'done');
    ordered.push(step);
  };
  for (const step of steps) visit(step);
  return ordered;
}

/**
 * 5. The fetch of a group of steps: its subgraph document, the client variables it declares, and
 *    its steps as the runner reads them, each with the alias of its `_entities` field and the
 *    variable of its representations fixed here, in the one place that names them in the document.
 *    `built` holds the steps of the fetches emitted before (a group only waits for those); each
 *    step of this one is added to it.
 */
function emitFetch(
  id: number,
  steps: readonly PlanStep[],
  operation: 'query' | 'mutation',
  dependsOn: readonly Fetch[],
  definitions: ReadonlyMap<string, VariableDefinitionNode>,
  built: Map<PlanStep, FetchStep>,
): Fetch {
  const used = new Set<string>();
  const renamed = { any: false };
  const selections: SelectionNode[] = [];
  const ownVariables: VariableDefinitionNode[] = [];
  const batched = steps.length > 1;
  const fetchSteps = steps.map((step, index): FetchStep => {
    const selectionSet = toSelectionSet(step.selection, used, renamed);
    if (step.entityType === undefined) {
      selections.push(...selectionSet.selections);
      return finalStep(step, undefined, undefined, built);
    }
    const alias = batched ? `_${index}` : undefined;
    const representationsVariable = batched ? `_${index}_representations` : 'representations';
    const variable = { kind: Kind.VARIABLE, name: { kind: Kind.NAME, value: representationsVariable } } as const;
    ownVariables.push({
      kind: Kind.VARIABLE_DEFINITION,
      variable,
      type: {
        kind: Kind.NON_NULL_TYPE,
        type: { kind: Kind.LIST_TYPE, type: { kind: Kind.NON_NULL_TYPE, type: { kind: Kind.NAMED_TYPE, name: { kind: Kind.NAME, value: '_Any' } } } },
      },
    });
    selections.push({
      kind: Kind.FIELD,
      alias: alias ? { kind: Kind.NAME, value: alias } : undefined,
      name: { kind: Kind.NAME, value: '_entities' },
      arguments: [{ kind: Kind.ARGUMENT, name: { kind: Kind.NAME, value: 'representations' }, value: variable }],
      selectionSet: {
        kind: Kind.SELECTION_SET,
        selections: [{ kind: Kind.INLINE_FRAGMENT, typeCondition: { kind: Kind.NAMED_TYPE, name: { kind: Kind.NAME, value: step.lookupType ?? step.entityType } }, selectionSet }],
      },
    });
    return finalStep(step, alias, representationsVariable, built);
  });
  const variableDefinitions: VariableDefinitionNode[] = [...ownVariables];
  for (const name of used) {
    const definition = definitions.get(name);
    if (!definition) throw new PlanUnsupported(`undeclared variable $${name}`);
    if (ownVariables.some((v) => v.variable.name.value === name)) throw new PlanUnsupported(`a client variable named $${name}`);
    variableDefinitions.push(definition);
  }
  const first = steps[0];
  return Object.freeze({
    id,
    graph: first.graph,
    subgraph: first.subgraph,
    steps: Object.freeze(fetchSteps),
    operation,
    renamed: renamed.any,
    dependsOn: Object.freeze([...dependsOn]),
    document: operationDocument(operation, variableDefinitions, { kind: Kind.SELECTION_SET, selections }),
    variableNames: Object.freeze([...used]),
  });
}

/** A planned step as the runner reads it: frozen, its dependencies the built steps of earlier fetches. */
function finalStep(step: PlanStep, alias: string | undefined, representationsVariable: string | undefined, built: Map<PlanStep, FetchStep>): FetchStep {
  const dependsOn = new Set<FetchStep>();
  for (const dependency of step.dependsOn) {
    const done = built.get(dependency);
    if (!done) throw new PlanUnsupported('a step emitted before a step it depends on');
    dependsOn.add(done);
  }
  const final: FetchStep = Object.freeze({
    id: step.id,
    graph: step.graph,
    subgraph: step.subgraph,
    path: step.path,
    entityType: step.entityType,
    lookupType: step.lookupType,
    resolvesType: step.resolvesType,
    selection: step.selection,
    representation: step.representation,
    keyFields: step.keyFields,
    responseKeys: step.responseKeys,
    dependsOn,
    alias,
    representationsVariable,
  });
  built.set(step, final);
  return final;
}

function operationDocument(operation: 'query' | 'mutation', variableDefinitions: VariableDefinitionNode[], selectionSet: SelectionSetNode): DocumentNode {
  return {
    kind: Kind.DOCUMENT,
    definitions: [{ kind: Kind.OPERATION_DEFINITION, operation: operation as OperationDefinitionNode['operation'], variableDefinitions, selectionSet }],
  } as DocumentNode;
}

function toSelectionSet(tree: SelectionTree, variables: Set<string>, renamed: { any: boolean }): SelectionSetNode {
  const selections: SelectionNode[] = [];
  for (const [key, field] of tree.fields) {
    for (const argument of field.arguments) collectVariables(argument.value, variables);
    for (const directive of field.directives) for (const argument of directive.arguments ?? []) collectVariables(argument.value, variables);
    const sub = field.selection && (field.selection.fields.size > 0 || field.selection.fragments.size > 0) ? toSelectionSet(field.selection, variables, renamed) : undefined;
    if (field.subgraphKey) renamed.any = true;
    const responseKey = field.subgraphKey ?? key;
    selections.push({
      kind: Kind.FIELD,
      alias: responseKey === field.name ? undefined : { kind: Kind.NAME, value: responseKey },
      name: { kind: Kind.NAME, value: field.name },
      arguments: field.arguments,
      directives: field.directives,
      // A composite field must select something: its type name at least.
      selectionSet: field.selection ? (sub ?? { kind: Kind.SELECTION_SET, selections: [{ kind: Kind.FIELD, name: { kind: Kind.NAME, value: TYPENAME } }] }) : undefined,
    });
  }
  for (const [typeName, fragment] of tree.fragments) {
    if (fragment.fields.size === 0 && fragment.fragments.size === 0) continue;
    selections.push({
      kind: Kind.INLINE_FRAGMENT,
      typeCondition: { kind: Kind.NAMED_TYPE, name: { kind: Kind.NAME, value: typeName } },
      selectionSet: toSelectionSet(fragment, variables, renamed),
    });
  }
  return { kind: Kind.SELECTION_SET, selections };
}

function collectVariables(value: ValueNode, into: Set<string>): void {
  if (value.kind === Kind.VARIABLE) into.add(value.name.value);
  else if (value.kind === Kind.LIST) for (const item of value.values) collectVariables(item, into);
  else if (value.kind === Kind.OBJECT) for (const field of value.fields) collectVariables(field.value, into);
}
