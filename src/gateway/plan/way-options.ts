// The ways to a field, estimated against the plan as it stands (rules 3, 8 and 12 of build-plan.ts): another step holding the objects, a look-up by a key they can be given (directly or through hops), a root fetch again; what each costs in steps and requests.
import { getNamedType, isAbstractType, isObjectType, type GraphQLInterfaceType, type GraphQLObjectType } from 'graphql';
import { compositeTypeOf, localFieldType, providedFor, typedPosition, type PlanContext } from './field-sources.js';
import type { Frame, PlanStep } from './plan-types.js';
import type { FieldSetTree } from './supergraph-model.js';
import { TYPENAME } from './selection-tree.js';
import { stageOf } from './stages.js';

/**
 * `extend`: a step that already holds the objects at that level (in the way's subgraph) selects the field;
 * `lookup`: an entity look-up there, by a key; `root`: a new root fetch of the way's subgraph.
 */
export type WayKind = 'extend' | 'lookup' | 'root';

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

export interface Option {
  readonly kind: WayKind;
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
export class Ways {
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
