// Rule 11 of build-plan.ts: when the client's `@skip`/`@include` want each planned field, and, once every field is placed, what the plan fetches for itself wanted whenever what it serves is.
import type { FieldNode } from 'graphql';
import type { Guards, OperationAnalysis } from '../../request/operation-analysis.js';
import type { Need, NeedFor, PlanStep, SelectionTree } from './plan-types.js';
import { TYPENAME, allOf, anyOf } from './selection-tree.js';
import { PlanUnsupported } from './supergraph-model.js';

/** The conditions of one plan's fields: what each of the plan's own is for, and where the client wants its own. Lives for one planning. */
export class FieldConditions {
  /** What each of the plan's own fields is for, by tree and response key. */
  readonly #needsFor = new Map<SelectionTree, Map<string, Set<NeedFor>>>();
  /** 12. The client's fields a way down selects again, by tree and response key. */
  readonly #waysDown = new Map<SelectionTree, Set<string>>();
  /** When the client wants each of its fields of object, interface or union type, by tree and response key. */
  readonly #clientWants = new Map<SelectionTree, Map<string, readonly Guards[] | undefined>>();

  constructor(
    /** The client operation's analysis: the guards of each of its fields. */
    readonly analysis: OperationAnalysis,
  ) {}

  /**
   * 11. When the client's conditions may leave a response key out: the guards of its selections
   *     (the analysis's, any of which passing wants it); undefined when one always executes. What
   *     the plan needs for another field is wanted when that field is (and, once every field is
   *     placed, whenever what it is for is: settleNeeds).
   */
  includedOf(nodes: readonly FieldNode[], need: Need | undefined): readonly Guards[] | undefined {
    if (need) return need.included;
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
   * 11. Records what the field under `key` in `at` is planned for: `need`'s look-up or field, or, for
   *     the client's field of object, interface or union type, when the client wants it there.
   */
  notePlanned(at: SelectionTree, key: string, need: Need | undefined, included: readonly Guards[] | undefined, composite: boolean): void {
    if (!need) {
      if (!composite) return;
      let wants = this.#clientWants.get(at);
      if (!wants) this.#clientWants.set(at, (wants = new Map()));
      wants.set(key, wants.has(key) ? anyOf(wants.get(key), included) : included);
      return;
    }
    if (!need.for) return;
    let byKey = this.#needsFor.get(at);
    if (!byKey) this.#needsFor.set(at, (byKey = new Map()));
    let fors = byKey.get(key);
    if (!fors) byKey.set(key, (fors = new Set()));
    fors.add(need.for);
  }

  /** 11, 12. Records that a way down selects the client's field under `key` in `at` again (settleNeeds, c). */
  noteWayDown(at: SelectionTree, key: string): void {
    let waysDown = this.#waysDown.get(at);
    if (!waysDown) this.#waysDown.set(at, (waysDown = new Set()));
    waysDown.add(key);
  }

  /**
   * 11. Once every field is placed, each field the plan selects for itself is wanted whenever what
   *     it serves is, for any values of the variables; the conditions it was planned with may say less:
   *     a. a look-up's key fields, whenever the look-up is made: whenever one of its fields is
   *        wanted, those added to it after its key was planned included (12's `extend`);
   *     b. a field's required fields, whenever the field is;
   *     c. a field of the plan's own, or one of the client's a way down selects again (12), whenever
   *        a field placed below it is (a later field's way may end there), within the client's
   *        conditions for it where the client asks for it in that tree (the client's fields below
   *        it carry only their own);
   *     and each step holding them is made then in turn (the runner makes a look-up when one of its
   *     fields is wanted). Documents send each field under its `included` (5): so no look-up is
   *     made without its key, and no field is sent without what it requires.
   */
  settleNeeds(): void {
    const settled = new Map<SelectionTree, Map<string, readonly Guards[] | undefined>>();
    const made = new Map<PlanStep, readonly Guards[] | undefined>();
    const open = new Set<unknown>();
    // Wanted when any field of the tree is, its type conditions' included (a type name goes with them).
    const anyBelow = (tree: SelectionTree): readonly Guards[] | undefined => {
      let when: readonly Guards[] | undefined = [];
      for (const [key, field] of tree.fields) if (when && field.name !== TYPENAME) when = anyOf(when, wantedWhen(tree, key));
      for (const fragment of tree.fragments.values()) if (when) when = anyOf(when, anyBelow(fragment));
      return when;
    };
    // a. A step is made when one of its fields is wanted (the runner's rule); a root step always.
    const madeWhen = (step: PlanStep): readonly Guards[] | undefined => {
      if (step.entityType === undefined) return undefined;
      if (made.has(step)) return made.get(step);
      if (open.has(step)) throw new PlanUnsupported('a look-up needed for itself');
      open.add(step);
      let when: readonly Guards[] | undefined = [];
      for (const key of step.selection.fields.keys()) if (when) when = anyOf(when, wantedWhen(step.selection, key));
      open.delete(step);
      made.set(step, when);
      return when;
    };
    const wantedWhen = (at: SelectionTree, key: string): readonly Guards[] | undefined => {
      const field = at.fields.get(key)!;
      const fors = this.#needsFor.get(at)?.get(key);
      if (!fors && !this.#waysDown.get(at)?.has(key)) return field.included;
      let byKey = settled.get(at);
      if (!byKey) settled.set(at, (byKey = new Map()));
      if (byKey.has(key)) return byKey.get(key);
      if (open.has(field)) throw new PlanUnsupported(`the field under ${key} needed for itself`);
      open.add(field);
      let when = field.included;
      // a, b. Not told what it is for (not planned to the end): always, which never leaves it out.
      for (const needFor of fors ?? []) if (when) when = anyOf(when, needFor.step ? madeWhen(needFor.step) : needFor.field ? wantedWhen(needFor.field.at, needFor.field.key) : undefined);
      // c.
      if (when && field.selection) when = anyOf(when, allOf(this.#clientWants.get(at)?.get(key), anyBelow(field.selection)));
      open.delete(field);
      byKey.set(key, when);
      return when;
    };
    for (const [at, byKey] of this.#needsFor) for (const key of byKey.keys()) wantedWhen(at, key);
    for (const [at, keys] of this.#waysDown) for (const key of keys) wantedWhen(at, key);
    // Planned fields are never written: a new object under the same key where it changed.
    for (const [at, byKey] of settled) {
      for (const [key, when] of byKey) {
        const field = at.fields.get(key)!;
        if (when !== field.included) at.fields.set(key, { ...field, included: when });
      }
    }
  }
}
