// The shapes of a query plan: what the planner hands the runner (final once the plan is made), and the draft steps it plans with.
import type { ArgumentNode, DirectiveNode, DocumentNode, GraphQLInterfaceType, GraphQLObjectType } from 'graphql';
import type { FieldSetTree } from './supergraph-model.js';
import type { Guards } from '../../request/operation-analysis.js';

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
  /** The client's executable directives on it other than `@skip`/`@include` (those are `included`). */
  readonly directives: readonly DirectiveNode[];
  /**
   * When the client's `@skip`/`@include` (the field's own and its fragments') may leave the field
   * out: the guards of each selection it stands for; it is wanted when every condition list of one
   * of them passes. Absent: always wanted. A look-up none of whose fields is wanted is not made,
   * and the subgraph document sends the field under exactly these conditions (5), so it is never
   * sent without the look-ups that feed it. Fields the plan needs for another field carry that
   * field's, widened once every field is placed (FieldConditions.settleNeeds).
   */
  readonly included?: readonly Guards[];
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
 * What each representation of an entity step carries, by field name (what the subgraph's resolver
 * reads, GraphQL arguments set by the key or `@requires` field set): for each field, the response key
 * the plan fetched it under in the merged objects (its name, or a private key where that name holds
 * another field at that path, 10) and the fields it carries below.
 */
export type RepresentationTree = ReadonlyMap<string, RepresentationField>;

export interface RepresentationField {
  readonly key: string;
  readonly fields: RepresentationTree;
}

/** A representation tree while the planner merges field sets into it. */
export type RepresentationDraft = Map<string, { readonly key: string; readonly fields: RepresentationDraft }>;

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
   * For a look-up of an interface's objects (`entityType` an interface, 8): every `__typename` they
   * may carry, the interface's own (from an `@interfaceObject`) and each implementation's (told by
   * another step meanwhile). Absent: only `entityType`.
   */
  readonly objectTypes?: ReadonlySet<string>;
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
  /** Fields each representation carries (keys and `@requires` fields), and where the objects hold them; entity steps only. */
  readonly representation: RepresentationTree;
  /** The key fields among them: an object whose key field is null or missing is not an entity and is not looked up. */
  readonly keyFields: FieldSetTree;
  /** Steps whose answers this step needs first: the one that found its objects, and those providing `@requires` fields. */
  readonly dependsOn: ReadonlySet<FetchStep>;
  /** For an entity step in a batched fetch: the alias of its `_entities` field (`_0`, ...); absent when it is the fetch's only step. */
  readonly alias?: string;
  /** For an entity step: the variable holding its representations. */
  readonly representationsVariable?: string;
}

/** The operation type of a fetch's document. */
export type FetchOperation = 'query' | 'mutation' | 'subscription';

/** One subgraph request: a root step, or the entity steps of one subgraph that wait for the same steps (one `_entities` field each). */
export interface Fetch {
  readonly id: number;
  readonly graph: string;
  readonly subgraph: string;
  readonly steps: readonly FetchStep[];
  /**
   * The document's operation type: `mutation` for a root mutation field's fetch, `subscription`
   * for the root fetch of a subscription (`QueryPlan.subscription`); every other fetch, entity
   * fetches of mutations and subscriptions included, is a query.
   */
  readonly operation: FetchOperation;
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
  /** The type it is a field of: objects of other types at an abstract position keep theirs. */
  readonly typeName: string;
  /** For a field of an interface: every `__typename` its objects may carry (see `FetchStep.objectTypes`). */
  readonly objectTypes?: ReadonlySet<string>;
  readonly key: string;
  readonly coordinate: string;
}

export interface QueryPlan {
  /**
   * Why no plan can answer the operation (PlanUnsatisfiable): a field it selects has no source where
   * it is asked. The plan then has no fetches, and the request is refused with QUERY_PLANNING_FAILED.
   */
  readonly unsatisfiable?: string;
  /** In an order where every fetch comes after those it depends on. */
  readonly fetches: readonly Fetch[];
  /**
   * For a subscription operation: its one root fetch (`operation: 'subscription'`, `fetches[0]`,
   * the only fetch that depends on none). It is not run as a query: its document is sent to its
   * subgraph as a subscription, and each event's payload answers it, the other fetches (entity
   * fetches, all depending on it, directly or not) completing each event. Absent for a query or
   * a mutation, and for a subscription whose root field the caller may not read (9: no fetch at
   * all, `denied` holds it).
   */
  readonly subscription?: Fetch;
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
  readonly objectTypes?: ReadonlySet<string>;
  lookupType?: string;
  resolvesType?: boolean;
  readonly selection: SelectionTree;
  readonly representation: RepresentationDraft;
  readonly keyFields: FieldSetTree;
  readonly dependsOn: Set<PlanStep>;
}

/**
 * Where one step holds the objects of one position while the planner works on it: the tree their
 * fields go in, and the field above them. A look-up's key is planned in a frame, and a field no
 * look-up reaches at its own position is re-selected from a frame above it (12).
 */
export interface Frame extends Position {
  readonly type: GraphQLObjectType | GraphQLInterfaceType;
  /**
   * The response keys to it with the type at each of them: frames at one position hold the same
   * objects (a path alone does not tell apart the books below a shelf from those below a store).
   */
  readonly position: string;
  /** Frames are kept and found again whatever is being planned: they never carry a `need`. */
  readonly need?: undefined;
}

/**
 * Where selections are planned: the subgraph and step, the tree they go in, the response keys
 * down to it, what a parent field `@provides` there, the scope and the field above. Immutable and
 * made by small helpers (`positionIn`, `below`, `withNeed`...), so every recursive call holds its
 * own and none can change another's.
 */
export interface Position {
  readonly graph: string;
  readonly step: PlanStep;
  /** The tree the fields go in (the step's selection, a field's, or a type condition's fragment). */
  readonly at: SelectionTree;
  readonly path: readonly string[];
  /** Fields a parent field `@provides` here. */
  readonly provided: FieldSetTree | undefined;
  /** The subgraphs that could answer here (fieldScope): what is planned below follows from it. */
  readonly scope: Scope;
  /** The field whose value holds these objects, in its parent's frame; absent at the root. */
  readonly above?: Above;
  /**
   * Set while planning what the plan itself needs (a key, required fields) rather than the
   * client's fields: see Need. Absent: the client's fields.
   */
  readonly need?: Need;
}

/**
 * What the plan needs for itself (a look-up's key, required fields), planned beside the client's
 * fields with three differences: no denial removes it (9, place-fields.ts), it goes under a
 * response key of its own when the client's is taken (10, response-keys.ts), and it is wanted
 * when what it is for is (11): `included` while the plan is made (absent: always), widened once
 * every field is placed to every request that makes the look-up or sends the field named by
 * `for` (FieldConditions.settleNeeds).
 * Meeting a need may take a look-up of its own (a hop for a key): that look-up's key is a need
 * for it, while the fields the look-up gives keep the outer need.
 */
export interface Need {
  readonly included: readonly Guards[] | undefined;
  /** What it is for; absent: nothing that can be made more often (`included` says it all). */
  readonly for?: NeedFor;
}

/**
 * What a need is for, told once that is planned: a look-up, whose key fields are wanted whenever it
 * is made (`step`), or a field in one, whose required fields are wanted whenever it is sent (`field`:
 * its tree and response key). Told once, right after the need is planned.
 */
export interface NeedFor {
  step?: PlanStep;
  field?: { readonly at: SelectionTree; readonly key: string };
}

/** The client's field between a frame and the one below it, as a step re-selects it. */
export interface Above {
  readonly frame: Frame;
  readonly key: string;
  readonly name: string;
  readonly arguments: readonly ArgumentNode[];
  /** Its directives other than `@skip`/`@include` (PlannedField.directives). */
  readonly directives: readonly DirectiveNode[];
  /** When the client wants it where it was planned (PlannedField.included, before merging); absent: always. */
  readonly included: readonly Guards[] | undefined;
}

/**
 * The subgraphs that could answer the objects at a position, and, below a union field, the members
 * every one of them has there (undefined: no narrowing). The root's scope is every subgraph.
 */
export interface Scope {
  readonly graphs: ReadonlySet<string>;
  readonly members?: ReadonlySet<string>;
}
