// The shapes of a query plan: what the planner hands the runner (final once the plan is made), and the draft steps it plans with.
import type { ArgumentNode, DirectiveNode, DocumentNode, GraphQLInterfaceType, GraphQLObjectType } from 'graphql';
import type { FieldSetTree } from './supergraph-model.js';

/**
 * What one fetch asks for at one position: fields by response key, and fragments by type condition.
 * The planner fills the maps while it plans; nothing writes them once the plan's fetches are built.
 */
export interface SelectionTree {
  readonly fields: Map<string, PlannedField>;
  readonly fragments: Map<string, SelectionTree>;
}

export interface PlannedField {
  readonly name: string;
  readonly arguments: readonly ArgumentNode[];
  /** The client's `@skip`/`@include` on it, kept when every selection of the key agrees; the subgraph evaluates them. */
  readonly directives: readonly DirectiveNode[];
  /** Present for fields of object, interface or union type. */
  readonly selection?: SelectionTree;
  /**
   * The response key the subgraph answers under, when it differs from the client's: a field whose
   * type in that subgraph differs from the supergraph's (a shareable field, nullable in one
   * subgraph) is aliased, so two such positions never meet under one key with different types
   * (GraphQL spec 5.3.2, which the subgraph validates). The runner renames it back.
   */
  readonly subgraphKey?: string;
}

/**
 * One request to one subgraph: a root fetch, or an `_entities` look-up of the objects found at `path`.
 * Built (and frozen) when its fetch's document is emitted, so every value the runner reads was
 * final when the plan was made.
 */
export interface FetchStep {
  readonly id: number;
  /** The `join__Graph` value. */
  readonly graph: string;
  /** The subgraph's published name. */
  readonly subgraph: string;
  /** Response keys from the root to the objects this step extends (list items are walked through); empty for a root fetch. */
  readonly path: readonly string[];
  /** For an entity step: the type of the objects it extends (their `__typename`). */
  readonly entityType?: string;
  /**
   * The type the look-up names (representations' `__typename`, the document's type condition)
   * when it differs from `entityType`: the interface, for a subgraph that knows it only as an
   * `@interfaceObject`, or for the step that learns each object's concrete type.
   */
  readonly lookupType?: string;
  /** The step asks the interface's own subgraph which concrete type each object is (objects from an `@interfaceObject`). */
  readonly resolvesType?: boolean;
  /** The root selection, or what goes inside `... on EntityType`. */
  readonly selection: SelectionTree;
  /** Fields each representation carries (keys and `@requires` fields); entity steps only. */
  readonly representation: FieldSetTree;
  /** The key fields among them: an object whose key field is null is not an entity and is not looked up. */
  readonly keyFields: ReadonlySet<string>;
  /** Fields of the representation that the objects carry under a private key, by field name (10). */
  readonly responseKeys?: ReadonlyMap<string, string>;
  /** Steps whose answers this step needs first: the one that found its objects, and those providing `@requires` fields. */
  readonly dependsOn: ReadonlySet<FetchStep>;
  /** For an entity step in a batched fetch: the alias of its `_entities` field (`_0`, ...); absent when it is the fetch's only step. */
  readonly alias?: string;
  /** For an entity step: the variable holding its representations. */
  readonly representationsVariable?: string;
}

/** One subgraph request: a root step, or the entity steps of one subgraph that wait for the same steps (one `_entities` field each). */
export interface Fetch {
  readonly id: number;
  readonly graph: string;
  readonly subgraph: string;
  readonly steps: readonly FetchStep[];
  /** `mutation` for a root mutation field's fetch; every other fetch is a query. */
  readonly operation: 'query' | 'mutation';
  /** Some field is aliased in the subgraph document (`PlannedField.subgraphKey`): the answer is renamed back. */
  readonly renamed: boolean;
  /** Fetches whose answers this one needs first. */
  readonly dependsOn: readonly Fetch[];
  readonly document: DocumentNode;
  /** The client's variables that the document uses. */
  readonly variableNames: readonly string[];
}

/** A field the caller may not read (the authorization decision denies its coordinate): never fetched, answered FORBIDDEN. */
export interface PlannedDenial {
  /** Response keys to the objects that carry it (list items walked through). */
  readonly path: readonly string[];
  /** The object type it is a field of: objects of other types at an abstract position keep theirs. */
  readonly typeName: string;
  readonly key: string;
  readonly coordinate: string;
}

export interface QueryPlan {
  /** In an order where every fetch comes after those it depends on. */
  readonly fetches: readonly Fetch[];
  /** Fields the request's authorization decision denies. */
  readonly denied: readonly PlannedDenial[];
  /** Default values of the operation's variables, for conditions read before the subgraph sees them. */
  readonly variableDefaults: Readonly<Record<string, unknown>>;
}

/**
 * A step while the planner works on it: it gains fields, dependencies, keys and look-up facts as
 * fields are placed. Never handed to the runner: emission turns each into a frozen `FetchStep`
 * with the facts of its fetch (alias, representations variable).
 */
export interface PlanStep {
  readonly id: number;
  readonly graph: string;
  readonly subgraph: string;
  readonly path: readonly string[];
  readonly entityType?: string;
  lookupType?: string;
  resolvesType?: boolean;
  readonly selection: SelectionTree;
  readonly representation: FieldSetTree;
  readonly keyFields: Set<string>;
  responseKeys?: ReadonlyMap<string, string>;
  readonly dependsOn: Set<PlanStep>;
}

/**
 * Where one step holds the objects of one position while the planner works on it: the tree their
 * fields go in, and the field above them. A look-up's key is planned in a frame, and a field no
 * look-up reaches at its own position is re-selected from a frame above it (11).
 */
export interface Frame {
  readonly type: GraphQLObjectType | GraphQLInterfaceType;
  readonly graph: string;
  readonly step: PlanStep;
  readonly at: SelectionTree;
  readonly path: readonly string[];
  /**
   * The response keys to it with the type at each of them: frames at one position hold the same
   * objects (a path alone does not tell apart the books below a shelf from those below a store).
   */
  readonly position: string;
  /** Fields a parent field `@provides` here. */
  readonly provided: FieldSetTree | undefined;
  /** The field whose value holds these objects, in its parent's frame; absent at the root. */
  readonly above?: Above;
}

/** The client's field between a frame and the one below it, as a step re-selects it. */
export interface Above {
  readonly frame: Frame;
  readonly key: string;
  readonly name: string;
  readonly arguments: readonly ArgumentNode[];
  readonly directives: readonly DirectiveNode[];
}
