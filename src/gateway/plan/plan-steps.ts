// The steps of one plan and the frames they hold (rules 3, 4 and 12 of build-plan.ts): root steps, entity steps that follow what provides their representations, and the frame of each tree at each position.
import { isInterfaceType, type GraphQLInterfaceType, type GraphQLObjectType, type GraphQLSchema } from 'graphql';
import { typedPosition } from './field-sources.js';
import type { FetchOperation, Frame, PlanStep, Position, RepresentationDraft, SelectionTree } from './plan-types.js';
import { pathKey, type ResponseKeys } from './response-keys.js';
import { emptyTree, mergeTree } from './selection-tree.js';
import { PlanUnsupported, type SupergraphModel } from './supergraph-model.js';

/** One plan's steps, by position, and its frames (12). Lives for one planning. */
export class PlanSteps {
  /** Every step, in the order made (its id). */
  readonly all: PlanStep[] = [];
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

  constructor(
    readonly model: SupergraphModel,
    readonly schema: GraphQLSchema,
    /** The response keys the plan's own fields were given: representations read them (10). */
    readonly keys: ResponseKeys,
  ) {}

  /** The root steps made so far, by subgraph (one per subgraph in a query). */
  get roots(): ReadonlyMap<string, PlanStep> {
    return this.#roots;
  }

  newStep(graph: string, path: readonly string[], entityType: string | undefined): PlanStep {
    const step: PlanStep = {
      id: this.all.length,
      graph,
      subgraph: this.model.subgraphName.get(graph) ?? graph,
      path,
      entityType,
      objectTypes: entityType === undefined ? undefined : objectTypesOf(this.schema, entityType),
      selection: emptyTree(),
      representation: new Map(),
      keyFields: new Map(),
      dependsOn: new Set(),
    };
    this.all.push(step);
    return step;
  }

  /** The root step of a subgraph in a query (or a subscription's one), made on first use. */
  rootStep(graph: string): PlanStep {
    let step = this.#roots.get(graph);
    if (!step) this.#roots.set(graph, (step = this.newStep(graph, [], undefined)));
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
    const representation = this.keys.representationAt(path, key);
    if (requires) mergeRepresentation(representation, this.keys.representationAt(path, requires));
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
    return this.all.filter((step) => step.graph === graph && step.entityType !== undefined);
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
}

/**
 * The `__typename`s objects of an interface may carry at a position planned as the interface (8):
 * its own (answered by an `@interfaceObject`) and each implementation's (told by a look-up
 * meanwhile). Undefined for an object type: its objects carry its name.
 */
export function objectTypesOf(schema: GraphQLSchema, typeName: string): ReadonlySet<string> | undefined {
  const type = schema.getType(typeName);
  if (!type || !isInterfaceType(type)) return undefined;
  return new Set([type.name, ...schema.getPossibleTypes(type).map((possible) => possible.name)]);
}

/** One entity step per subgraph, position and type. */
function positionKey(graph: string, path: readonly string[], typeName: string): string {
  return `${graph}\u0000${pathKey(path)}\u0000${typeName}`;
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
