// Ways to a field its step's subgraph cannot resolve: a look-up at its position or at an entity above it, or another step holding it; the cheapest wins (3, 8, 12).
import {
  getNamedType,
  isAbstractType,
  isCompositeType,
  isInterfaceType,
  isObjectType,
  isUnionType,
  type GraphQLCompositeType,
  type GraphQLInterfaceType,
  type GraphQLObjectType,
  type GraphQLSchema,
} from 'graphql';
import type { Frame, PlanStep, Scope } from './plan-types.js';
import { PROVIDED_ON, PlanUnsatisfiable, PlanUnsupported, type FieldSetTree, type SupergraphModel } from './supergraph-model.js';
import { mergeTree } from './selection-tree.js';
import { TYPENAME } from './selection-tree.js';
import { stageOf } from './stages.js';

/** What choosing a subgraph reads: the supergraph, the API schema and the progressive-override labels switched on. */
export interface PlanContext {
  readonly model: SupergraphModel;
  readonly schema: GraphQLSchema;
  readonly labels: ReadonlySet<string>;
}

/** What choosing a way to a field reads of the plan made so far. */
export interface WayContext extends PlanContext {
  /** The frames planned so far at a position (Frame.position). */
  framesAt(position: string): readonly Frame[];
  /** The entity steps planned so far in a subgraph. */
  entitySteps(graph: string): readonly PlanStep[];
  /** Whether a root field may be selected again in another subgraph's root fetch: in a query, never in a mutation or a subscription. */
  readonly rootLookups: boolean;
  /** When set, a way no deeper than this many steps is as good as a shallower one: fewer requests decide (see buildPlan). */
  readonly stageBudget?: number;
}

/** How a field is had. */
export interface Way {
  /**
   * `extend`: a step that already holds the objects at that level (in the way's subgraph) selects it;
   * `lookup`: an entity look-up there, by `key`; `root`: a new root fetch of the way's subgraph.
   */
  readonly kind: 'extend' | 'lookup' | 'root';
  /** How many fields above the field's own position the way starts: 0 at the position itself (12). */
  readonly level: number;
  readonly graph: string;
  /** The frame extended, or the one the look-up's key is planned in; absent for a root fetch. */
  readonly from?: Frame;
  readonly key?: string;
  /** The interface the look-up names, for a subgraph that knows it as an `@interfaceObject` (8). */
  readonly lookupType?: string;
  /** How many steps run one after another before the field is had (0: in a root fetch). */
  readonly stage: number;
  /** How many requests the way adds: its look-up, unless one of that subgraph is made there or can share its request, and the hops for its key. */
  readonly calls: number;
  /** A way as cheap in requests was left for this one because it takes more steps one after another (its requests may be shared). */
  readonly tradeOff: boolean;
}

/** How much of a field's sub-selection a subgraph resolves by itself, against all of it (fields at every depth). */
export interface Coverage {
  readonly covered: number;
  readonly total: number;
}

export type { Scope };

/**
 * The scope of a field's objects, planned in `graph` at a position of scope `parent`.
 * 1. Besides `graph`, any subgraph that resolves the field could answer it when it reaches the
 *    parent objects: it is in the parent's scope, or the parent is an entity it resolves by a key
 *    `graph` can obtain. A value type is reached only along its own path, so below a shareable
 *    value type that one subgraph returns, that subgraph alone answers.
 * 2. At a union field answered by several, the answer must not depend on which of them the plan
 *    asks: only the members all of them have there are planned. An object of another member keeps
 *    its `__typename` and nothing else, its fields null (graphql-hive's federation audit,
 *    partial-union and partial-union-complex; Hive Router narrows partial unions the same way).
 */
export function fieldScope(ctx: PlanContext, type: GraphQLObjectType | GraphQLInterfaceType, fieldName: string, graph: string, parent: Scope, provided: FieldSetTree | undefined): Scope {
  const graphs = new Set<string>([graph]);
  for (const candidate of ctx.model.resolversOf(type.name, fieldName, ctx.labels)) {
    if (graphs.has(candidate)) continue;
    if (parent.graphs.has(candidate) || ctx.model.keysIn(type.name, candidate).some((key) => canObtain(ctx, type, ctx.model.fieldSet(key), graph, provided, MAX_KEY_HOPS))) graphs.add(candidate);
  }
  if (graphs.size === 1 || !isUnionType(getNamedType(type.getFields()[fieldName].type))) return { graphs };
  let members: Set<string> | undefined;
  for (const candidate of graphs) {
    const own = localMembers(ctx, type.name, fieldName, candidate);
    members = members ? new Set([...members].filter((member) => own.has(member))) : own;
  }
  return { graphs, members };
}

/** The object types a subgraph can return at a field, by its own schema: the field's type, or its possible types. */
function localMembers(ctx: PlanContext, typeName: string, fieldName: string, graph: string): Set<string> {
  const schema = ctx.model.subgraphSchema(graph);
  const local = schema.getType(typeName);
  const field = local && (isObjectType(local) || isInterfaceType(local)) ? local.getFields()[fieldName] : undefined;
  if (!field) return new Set();
  const named = getNamedType(field.type);
  if (isAbstractType(named)) return new Set(schema.getPossibleTypes(named).map((t) => t.name));
  return isObjectType(named) ? new Set([named.name]) : new Set();
}

/**
 * A subgraph with the real interface that resolves it by a key the interface object's subgraph can
 * return, and has implementations of it (one without any can name no concrete type: its `_entities`
 * cannot even hold the interface). None: the concrete type cannot be had.
 */
export function typeResolver(ctx: PlanContext, iface: GraphQLInterfaceType, graph: string, provided: FieldSetTree | undefined): { graph: string; key: string } {
  for (const candidate of ctx.model.graphsOf(iface.name)) {
    if (candidate === graph || ctx.model.isInterfaceObject(iface.name, candidate)) continue;
    const schema = ctx.model.subgraphSchema(candidate);
    const local = schema.getType(iface.name);
    if (!local || !isAbstractType(local) || schema.getPossibleTypes(local).length === 0) continue;
    for (const key of ctx.model.keysIn(iface.name, candidate)) if (canReturn(ctx, iface, ctx.model.fieldSet(key), graph, provided)) return { graph: candidate, key };
  }
  throw new PlanUnsatisfiable(`no subgraph tells the concrete type of ${iface.name} objects from ${graph}`);
}

/** The alias of a field whose type in `graph` differs from the supergraph's (5); undefined when it has none. */
export function subgraphKey(model: SupergraphModel, type: GraphQLObjectType | GraphQLInterfaceType, fieldName: string, graph: string, key: string): string | undefined {
  const local = model.subgraphSchema(graph).getType(type.name);
  const localField = local && (isObjectType(local) || isInterfaceType(local)) ? local.getFields()[fieldName] : undefined;
  if (!localField) return undefined;
  const localType = String(localField.type);
  if (localType === String(type.getFields()[fieldName].type)) return undefined;
  return `${key}__${localType.replace(/!/g, '_nn').replace(/\[/g, '_l').replace(/\]/g, '')}`;
}

/**
 * The named type `graph` gives the field, when objects of `child` can stand below it there: the
 * same type, or an abstract one `child` is a possible type of in that subgraph (then the step
 * selects them in a fragment); undefined when they cannot.
 */
export function localFieldType(model: SupergraphModel, parent: GraphQLObjectType | GraphQLInterfaceType, fieldName: string, child: GraphQLObjectType | GraphQLInterfaceType, graph: string): GraphQLCompositeType | undefined {
  const schema = model.subgraphSchema(graph);
  const local = schema.getType(parent.name);
  const field = local && (isObjectType(local) || isInterfaceType(local)) ? local.getFields()[fieldName] : undefined;
  const named = field && getNamedType(field.type);
  if (!named || !isCompositeType(named)) return undefined;
  if (named.name === child.name) return named;
  const localChild = schema.getType(child.name);
  return isAbstractType(named) && isObjectType(localChild) && schema.isSubType(named, localChild) ? named : undefined;
}

/** How deep a key may be reached through other look-ups (3 is more hops than real graphs use). */
const MAX_KEY_HOPS = 3;

/**
 * 12. The way to a field that the frame's subgraph cannot resolve (or resolves only with
 *     `@requires`): fewest steps one after another first, then fewest requests, then the subgraph
 *     that resolves most of what is asked below the field (counting what it `@provides`), then
 *     the way nearest to the field.
 *     Ways are, at the field's position and at each position above it up to the root:
 *     a. another step already holding the objects there, in a subgraph that resolves the fields
 *        from there down to the field (no request added);
 *     b. an entity look-up there, by a key the objects can be given from any step holding them
 *        (directly, or planned through further look-ups);
 *     c. above the root field of a query: a root fetch of a subgraph that resolves the root field
 *        and everything down to the field (a shared root field returning a value type), unless
 *        the objects below it are one implementation of its abstract type. Never in a mutation
 *        (its field would run twice) nor in a subscription (its events come from one subgraph):
 *        there, a field only this would reach is unsatisfiable, and the reason says so.
 *     Above the field's own position, the look-up re-selects the fields on the way down, so every
 *     subgraph of the way must resolve each of them (a value type with no key of its own is
 *     reached from the nearest entity, or the root, that such a subgraph can look up).
 *     With a stage budget (buildPlan's second pass), stages within it count as equal.
 *     No way at all makes the operation unsatisfiable (3), unless the search passed over a way
 *     it does not follow (a look-up of an interface above the field, a key field of abstract
 *     type): then the planner only does not know one (PlanUnsupported). MAX_KEY_HOPS is taken
 *     as no limit: real graphs use fewer hops.
 */
export function chooseWay(ctx: WayContext, frame: Frame, fieldName: string, coverage: (graph: string) => Coverage): Way {
  const ways = new Ways(ctx);
  const budget = ctx.stageBudget;
  let best: Option | undefined;
  let bestScore: number[] = [];
  const scored: { stage: number; calls: number }[] = [];
  const refused = new Set<string>();
  for (const option of ways.options(ways.placeOf(frame), fieldName, MAX_KEY_HOPS, budget, refused)) {
    const { covered, total } = coverage(option.graph);
    // What the subgraph leaves uncovered below the field costs at least one more request.
    const calls = option.calls + (covered < total ? 1 : 0);
    scored.push({ stage: option.stage, calls });
    const score = [budget === undefined ? option.stage : Math.max(0, option.stage - budget), calls, -covered, option.level];
    if (best === undefined || lexicallyLess(score, bestScore)) {
      best = option;
      bestScore = score;
    }
  }
  if (!best) {
    let reason = `no way from ${frame.graph} to ${frame.type.name}.${fieldName}`;
    if (refused.size > 0) reason += ` (only fetching the root field again from ${[...refused].join(', ')} would reach it, and a mutation's or subscription's root field is fetched once)`;
    throw ways.incomplete ? new PlanUnsupported(`${reason} found (the search stopped short)`) : new PlanUnsatisfiable(reason);
  }
  const from = best.from?.frame;
  if (best.kind !== 'root' && !from) throw new PlanUnsupported(`a way to ${frame.type.name}.${fieldName} from a position not planned`);
  return { kind: best.kind, level: best.level, graph: best.graph, from, key: best.key, lookupType: best.lookupType, stage: best.stage, calls: best.calls, tradeOff: scored.some((o) => o.stage > best.stage && o.calls <= bestScore[1]) };
}

/**
 * Whether a subgraph that resolves the field is reached by a look-up at this position, by a key
 * `graph` can give the objects (directly or through other subgraphs' keys) (3).
 */
export function hasLookup(ctx: PlanContext, type: GraphQLObjectType | GraphQLInterfaceType, fieldName: string, graph: string, provided: FieldSetTree | undefined): boolean {
  return ctx.model
    .resolversOf(type.name, fieldName, ctx.labels)
    .some((candidate) => (candidate !== graph || ctx.model.requiresOf(type.name, fieldName, candidate) !== undefined) && ctx.model.keysIn(type.name, candidate).some((key) => canObtain(ctx, type, ctx.model.fieldSet(key), graph, provided, MAX_KEY_HOPS)));
}

/**
 * What a `@provides` provides on objects of `type` (an object type, or an interface for what holds
 * on all its objects): the fields outside any type condition, and those of each condition that
 * applies to it (the type itself, or an abstract type it belongs to), nested ones too.
 */
export function providedFor(provided: FieldSetTree | undefined, type: GraphQLObjectType | GraphQLInterfaceType, schema: GraphQLSchema): FieldSetTree | undefined {
  if (!provided) return undefined;
  let conditional = false;
  for (const key of provided.keys()) if (key.startsWith(PROVIDED_ON)) conditional = true;
  if (!conditional) return provided;
  const narrowed: FieldSetTree = new Map();
  for (const [key, sub] of provided) {
    if (!key.startsWith(PROVIDED_ON)) {
      mergeTree(narrowed, new Map([[key, sub]]));
      continue;
    }
    const conditionName = key.slice(PROVIDED_ON.length);
    const condition = schema.getType(conditionName);
    const applies = conditionName === type.name || (condition !== undefined && condition !== null && isAbstractType(condition) && schema.isSubType(condition, type));
    if (applies) mergeTree(narrowed, providedFor(sub, type, schema)!);
  }
  return narrowed;
}

/** Whether `graph` can return every field of the set on objects of `type` by itself. */
function canReturn(ctx: PlanContext, type: GraphQLObjectType | GraphQLInterfaceType, fields: FieldSetTree, graph: string, provided: FieldSetTree | undefined): boolean {
  for (const [name, sub] of fields) {
    if (name === TYPENAME) continue;
    if (!(provided?.has(name) || (ctx.model.canResolve(type.name, name, graph, ctx.labels) && !ctx.model.requiresOf(type.name, name, graph)))) return false;
    if (sub.size === 0) continue;
    const fieldType = compositeTypeOf(type, name);
    if (!fieldType || !isObjectType(fieldType)) return false;
    if (!canReturn(ctx, fieldType, sub, graph, providedFor(provided?.get(name), fieldType, ctx.schema))) return false;
  }
  return true;
}

/** Whether the fields can be had at this position from `graph`, or through at most `hops` look-ups by other subgraphs' keys. */
function canObtain(ctx: PlanContext, type: GraphQLObjectType | GraphQLInterfaceType, fields: FieldSetTree, graph: string, provided: FieldSetTree | undefined, hops: number): boolean {
  for (const [name, sub] of fields) {
    const one: FieldSetTree = new Map([[name, sub]]);
    if (canReturn(ctx, type, one, graph, provided)) continue;
    if (hops === 0) return false;
    const found = ctx.model
      .resolversOf(type.name, name, ctx.labels)
      .filter((g) => g !== graph && canReturn(ctx, type, one, g, undefined))
      .some((g) => ctx.model.keysIn(type.name, g).some((key) => canObtain(ctx, type, ctx.model.fieldSet(key), graph, provided, hops - 1)));
    if (!found) return false;
  }
  return true;
}

/** The field's named type when it is composite (object, interface, union); undefined for a leaf. */
export function compositeTypeOf(type: GraphQLObjectType | GraphQLInterfaceType, fieldName: string): GraphQLCompositeType | undefined {
  const field = type.getFields()[fieldName];
  if (!field) throw new PlanUnsupported(`${type.name}.${fieldName} is not in the supergraph`);
  const named = getNamedType(field.type);
  return isCompositeType(named) ? named : undefined;
}

/**
 * Objects of one position as one subgraph would hold them: a planned frame, or a position a key's
 * nested field would be planned at (considered only, while estimating what a key costs).
 */
interface Place {
  readonly type: GraphQLObjectType | GraphQLInterfaceType;
  readonly graph: string;
  readonly path: readonly string[];
  readonly position: string;
  readonly provided: FieldSetTree | undefined;
  /** Steps run one after another before the objects are there. */
  readonly stage: number;
  readonly above?: { readonly place: Place; readonly name: string };
  readonly frame?: Frame;
}

interface Option {
  readonly kind: Way['kind'];
  readonly level: number;
  readonly graph: string;
  readonly from?: Place;
  readonly key?: string;
  readonly lookupType?: string;
  readonly stage: number;
  readonly calls: number;
}

/** A look-up before its requests are counted: from which place, by which key, how deep, and the requests its key takes. */
interface LookupDraft {
  readonly level: number;
  readonly graph: string;
  readonly from: Place;
  readonly key: string;
  readonly lookupType?: string;
  readonly stage: number;
  readonly keyCalls: number;
}

interface Estimate {
  readonly stage: number;
  readonly calls: number;
}

/** One field of the way down from a level above to the field's position. */
interface Link {
  readonly parent: GraphQLObjectType | GraphQLInterfaceType;
  readonly name: string;
  readonly child: GraphQLObjectType | GraphQLInterfaceType;
}

/** The ways to fields, estimated against the plan as it stands; made for one choice (the plan grows between choices). */
class Ways {
  readonly #places = new Map<Frame, Place>();
  readonly #children = new Map<Place, Map<string, Place>>();
  readonly #best = new Map<string, Estimate | null>();
  readonly #ids = new Map<Place, number>();
  readonly #stages = new Map<PlanStep, number>();
  /** The entity steps of each subgraph: their positions and stages. */
  readonly #entitySteps = new Map<string, { positions: Set<string>; stages: Set<number> }>();
  /** Whether the search passed over a way it does not follow (see chooseWay): finding none then proves nothing. */
  incomplete = false;

  constructor(readonly ctx: WayContext) {}

  placeOf(frame: Frame): Place {
    let place = this.#places.get(frame);
    if (!place) {
      place = {
        type: frame.type,
        graph: frame.graph,
        path: frame.path,
        position: frame.position,
        provided: frame.provided,
        stage: this.stageOf(frame.step),
        above: frame.above && { place: this.placeOf(frame.above.frame), name: frame.above.name },
        frame,
      };
      this.#places.set(frame, place);
    }
    return place;
  }

  stageOf(step: PlanStep): number {
    return stageOf(step, dependenciesOf, this.#stages);
  }

  /**
   * The way's options for the field at the place: a, b and c of chooseWay, with 8 at the position
   * itself. Above it, a subgraph is passed over at a level where no option can beat (be shallower
   * than, or as shallow and free as) the best it has below: ties go to the way nearest the field.
   * Stages within `budget` count as none (see chooseWay). `refused` gathers the subgraphs whose
   * root fetch (c) would have reached the field, were root fields fetched again (a query's only).
   */
  options(place: Place, name: string, hops: number, budget?: number, refused?: Set<string>): Option[] {
    const { model, labels } = this.ctx;
    const type = place.type;
    const found: Option[] = [];
    const over = (stage: number): number => (budget === undefined ? stage : Math.max(0, stage - budget));
    const bestOf = new Map<string, Estimate>();
    const add = (option: Option): void => {
      found.push(option);
      const best = bestOf.get(option.graph);
      if (!best || over(option.stage) < over(best.stage) || (over(option.stage) === over(best.stage) && option.calls < best.calls)) bestOf.set(option.graph, option);
    };
    /** Whether the best option of the subgraph so far beats any at least this deep. */
    const beaten = (best: Estimate | undefined, stage: number): boolean => best !== undefined && (over(best.stage) < over(stage) || (over(best.stage) === over(stage) && best.calls === 0));
    const here = [place, ...this.others(place)];
    // a. Another step holding these objects, in a subgraph that resolves the field.
    for (const holder of here) if (holder.graph !== place.graph && this.returnable(holder.type, name, holder.graph, holder.provided)) add({ kind: 'extend', level: 0, graph: holder.graph, from: holder, stage: holder.stage, calls: 0 });
    // b. A look-up here. A field with @requires in the current subgraph is resolved there too, but by a look-up that carries what it requires.
    for (const graph of model.resolversOf(type.name, name, labels)) {
      const requires = model.requiresOf(type.name, name, graph);
      if (graph === place.graph && requires === undefined) continue;
      for (const holder of here) {
        if (holder.graph === graph && requires === undefined) continue;
        for (const key of model.keysIn(type.name, graph)) {
          const keyed = this.obtain(holder, model.fieldSet(key), hops);
          const required = requires === undefined ? { stage: 0, calls: 0 } : this.obtain(holder, model.fieldSet(requires), hops);
          if (keyed && required) add(this.lookup(place, { level: 0, graph, from: holder, key, stage: Math.max(keyed.stage, required.stage) + 1, keyCalls: keyed.calls + required.calls }));
        }
      }
    }
    // 8. A field an `@interfaceObject` adds to an interface: looked up as the interface there.
    if (isObjectType(type)) {
      for (const iface of type.getInterfaces()) {
        if (!iface.getFields()[name]) continue;
        for (const graph of model.graphsOf(iface.name)) {
          if (graph === place.graph || !model.isInterfaceObject(iface.name, graph) || !model.canResolve(iface.name, name, graph, labels)) continue;
          for (const holder of here) {
            for (const key of model.keysIn(iface.name, graph)) {
              const keyed = this.obtain(holder, model.fieldSet(key), hops);
              if (keyed) add(this.lookup(place, { level: 0, graph, from: holder, key, lookupType: iface.name, stage: keyed.stage + 1, keyCalls: keyed.calls }));
            }
          }
        }
      }
    }
    // 12. Above the position: the fields down to it are selected again from there, so only the
    // subgraphs that resolve each of them stay candidates, one level up at a time.
    let fitting = model.resolversOf(type.name, name, labels).filter((graph) => this.returnable(type, name, graph, undefined));
    let below = place;
    for (let level = 1; below.above && fitting.length > 0; level++) {
      const ancestor = below.above.place;
      const link = { parent: ancestor.type, name: below.above.name, child: below.type };
      fitting = fitting.filter((graph) => this.fits(link, graph));
      const atRoot = ancestor.path.length === 0;
      // c. A root field of abstract type is not asked again for one implementation: which objects
      // it returns may depend on the subgraph (a Node interface split across subgraphs, each
      // knowing its own). A mutation field is never run twice, and a subscription's events come
      // from one subgraph: in those nothing is selected again from above the root field.
      if (atRoot && getNamedType(link.parent.getFields()[link.name].type).name !== link.child.name) break;
      const holders = fitting.length > 0 ? [ancestor, ...this.others(ancestor)] : [];
      if (atRoot && !this.ctx.rootLookups) {
        for (const graph of fitting) if (!holders.some((holder) => holder.graph === graph)) refused?.add(graph);
        break;
      }
      const shallowest = Math.min(...holders.map((holder) => holder.stage));
      for (const graph of fitting) {
        if (beaten(bestOf.get(graph), shallowest)) continue;
        for (const holder of holders) if (holder.graph === graph) add({ kind: 'extend', level, graph, from: holder, stage: holder.stage, calls: 0 });
        if (atRoot) {
          if (!holders.some((holder) => holder.graph === graph)) add({ kind: 'root', level, graph, stage: 0, calls: 1 });
          continue;
        }
        if (!isObjectType(ancestor.type)) {
          if (model.keysIn(ancestor.type.name, graph).length > 0) this.incomplete = true;
          continue;
        }
        for (const holder of holders) {
          if (holder.graph === graph || beaten(bestOf.get(graph), holder.stage + 1)) continue;
          for (const key of model.keysIn(ancestor.type.name, graph)) {
            const keyed = this.obtain(holder, model.fieldSet(key), hops);
            if (keyed) add(this.lookup(ancestor, { level, graph, from: holder, key, stage: keyed.stage + 1, keyCalls: keyed.calls }));
          }
        }
      }
      below = ancestor;
    }
    return found;
  }

  /** A look-up of the objects at `at` (the level's place): its own request unless it shares one. */
  lookup(at: Place, draft: LookupDraft): Option {
    const { level, graph, from, key, lookupType, stage, keyCalls } = draft;
    const shared = this.shares(graph, at.path, at.type.name, stage);
    return { kind: 'lookup', level, graph, from, key, lookupType, stage, calls: keyCalls + (shared ? 0 : 1) };
  }

  /** What it takes to give the place's objects every field of the set: directly, or through look-ups (at most `hops` deep). */
  obtain(place: Place, fields: FieldSetTree, hops: number): Estimate | undefined {
    let stage = place.stage;
    let calls = 0;
    for (const [name, sub] of fields) {
      if (name === TYPENAME) continue;
      let got: Estimate | undefined;
      if (this.returnable(place.type, name, place.graph, place.provided)) {
        const type = compositeTypeOf(place.type, name);
        // Below an abstract type (a required field's fragments; keys have none) the subgraph answers for what it returns.
        if (sub.size === 0 || (type && isAbstractType(type))) continue;
        if (!type || !isObjectType(type)) {
          this.incomplete = true;
          return undefined;
        }
        got = this.obtain(this.child(place, name, type, place.graph, place.stage, providedFor(place.provided?.get(name), type, this.ctx.schema)), sub, hops);
      } else if (hops > 0) got = this.best(place, name, sub, hops - 1);
      if (!got) return undefined;
      stage = Math.max(stage, got.stage);
      calls += got.calls;
    }
    return { stage, calls };
  }

  /** The cheapest way to one field of a key (with its own nested fields), memoised for the choice. */
  best(place: Place, name: string, sub: FieldSetTree, hops: number): Estimate | undefined {
    const memo = `${this.idOf(place)}\u0000${name}\u0000${hops}\u0000${printTree(sub)}`;
    const known = this.#best.get(memo);
    if (known !== undefined) return known ?? undefined;
    // A way that needs this same field again is no way: it is found unreachable while it is being estimated.
    this.#best.set(memo, null);
    let best: Estimate | undefined;
    // Below an abstract type the subgraph of the way answers for what it returns (see obtain).
    const type = sub.size > 0 ? compositeTypeOf(place.type, name) : undefined;
    for (const option of this.options(place, name, hops)) {
      let estimate: Estimate | undefined = option;
      if (type && !isAbstractType(type)) {
        if (!isObjectType(type)) {
          this.incomplete = true;
          break;
        }
        const own = this.ctx.model.providesOf(option.lookupType ?? place.type.name, name, option.graph);
        const rest = this.obtain(this.child(place, name, type, option.graph, option.stage, own ? providedFor(this.ctx.model.providedSet(own), type, this.ctx.schema) : undefined), sub, hops);
        estimate = rest && { stage: Math.max(option.stage, rest.stage), calls: option.calls + rest.calls };
      }
      if (estimate && (!best || estimate.stage < best.stage || (estimate.stage === best.stage && estimate.calls < best.calls))) best = estimate;
    }
    this.#best.set(memo, best ?? null);
    return best;
  }

  /** Whether `graph` resolves the field by itself, without `@requires`, or a parent field provides it. */
  returnable(type: GraphQLObjectType | GraphQLInterfaceType, name: string, graph: string, provided: FieldSetTree | undefined): boolean {
    return provided?.has(name) === true || (this.ctx.model.canResolve(type.name, name, graph, this.ctx.labels) && !this.ctx.model.requiresOf(type.name, name, graph));
  }

  /** Whether `graph` resolves one field of the way down, with the objects below it of the type they have there. */
  fits(link: Link, graph: string): boolean {
    return this.returnable(link.parent, link.name, graph, undefined) && localFieldType(this.ctx.model, link.parent, link.name, link.child, graph) !== undefined;
  }

  /** The other frames planned at the place's position. */
  others(place: Place): Place[] {
    return this.ctx
      .framesAt(place.position)
      .filter((frame) => frame !== place.frame)
      .map((frame) => this.placeOf(frame));
  }

  /**
   * Whether a look-up in `graph` at this position and stage adds no request: a step of that
   * subgraph is made there already, or one at that stage shares its request (batchFetches 6).
   */
  shares(graph: string, path: readonly string[], typeName: string, stage: number): boolean {
    let steps = this.#entitySteps.get(graph);
    if (!steps) {
      steps = { positions: new Set(), stages: new Set() };
      for (const step of this.ctx.entitySteps(graph)) {
        steps.positions.add(positionKey(step.path, step.entityType!));
        steps.stages.add(this.stageOf(step));
      }
      this.#entitySteps.set(graph, steps);
    }
    return steps.stages.has(stage) || steps.positions.has(positionKey(path, typeName));
  }

  /** The objects below one field of the place, as `graph` would hold them (considered only). */
  child(place: Place, name: string, type: GraphQLObjectType, graph: string, stage: number, provided: FieldSetTree | undefined): Place {
    let children = this.#children.get(place);
    if (!children) this.#children.set(place, (children = new Map()));
    const id = `${name}\u0000${graph}\u0000${stage}`;
    let child = children.get(id);
    if (!child) {
      const position = typedPosition(place.position, name, type.name);
      const planned = this.ctx.framesAt(position).find((frame) => frame.graph === graph);
      child = planned ? this.placeOf(planned) : { type, graph, path: [...place.path, name], position, provided, stage, above: { place, name } };
      children.set(id, child);
    }
    return child;
  }

  idOf(place: Place): number {
    let id = this.#ids.get(place);
    if (id === undefined) this.#ids.set(place, (id = this.#ids.size));
    return id;
  }
}

/** A position with the type at each response key of its path (Frame.position). */
export function typedPosition(parent: string | undefined, key: string | undefined, typeName: string): string {
  return parent === undefined ? typeName : `${parent}\u0001${key}\u0002${typeName}`;
}

function dependenciesOf(step: PlanStep): Iterable<PlanStep> {
  return step.dependsOn;
}

function positionKey(path: readonly string[], typeName: string): string {
  return `${path.join('\u0000')}\u0000${typeName}`;
}

function printTree(tree: FieldSetTree): string {
  let printed = '';
  for (const [name, sub] of tree) printed += sub.size > 0 ? `${name}{${printTree(sub)}}` : `${name} `;
  return printed;
}

function lexicallyLess(a: readonly number[], b: readonly number[]): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] < b[i];
  return false;
}
