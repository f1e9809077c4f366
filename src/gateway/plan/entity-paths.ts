// Rule 12 of build-plan.ts (with 3 and 8): the way to a field its step's subgraph cannot resolve, chosen among the options way-options.ts finds: fewest steps in sequence, fewest requests, most of the selection answered.
import { MAX_KEY_HOPS, type Coverage } from './field-sources.js';
import type { Frame } from './plan-types.js';
import { PlanUnsatisfiable, PlanUnsupported } from './supergraph-model.js';
import { Ways, type Option, type WayContext, type WayKind } from './way-options.js';

export type { WayContext } from './way-options.js';

/** How a field is had. */
export interface Way {
  /** `extend`, `lookup` (by `key`) or `root` (WayKind). */
  readonly kind: WayKind;
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

function lexicallyLess(a: readonly number[], b: readonly number[]): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] < b[i];
  return false;
}
