// Rule 8 of build-plan.ts: a position whose objects come from a subgraph that knows their interface only as an `@interfaceObject`.
import type { FieldNode, GraphQLInterfaceType, SelectionSetNode } from 'graphql';
import type { FieldGroups } from '../../request/operation-analysis.js';
import { collectFields, fieldSetFields } from './collect-fields.js';
import { hasLookup, providedFor, typeResolver } from './field-sources.js';
import type { Placement } from './placement.js';
import type { Need, NeedFor, PlanStep, Position } from './plan-types.js';
import { inStep, withNeed, withProvided } from './positions.js';
import { TYPENAME, addLeaf } from './selection-tree.js';

/** The need of what is wanted whenever its objects are (a key that tells an object's type). */
const ALWAYS: Need = Object.freeze({ included: undefined });

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
export function planInterfaceObject(placement: Placement, iface: GraphQLInterfaceType, selectionSets: readonly (SelectionSetNode | undefined)[], outer: Position, touched: Set<PlanStep>): void {
  const provided = providedFor(outer.provided, iface, placement.schema);
  const where = withProvided(outer, provided);
  const { graph, step, at, path } = where;
  touched.add(step);
  addLeaf(at, TYPENAME);
  const onInterface = collectFields(placement.schema, placement.analysis, iface, selectionSets);
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
  for (const possible of placement.schema.getPossibleTypes(iface)) gather(collectFields(placement.schema, placement.analysis, possible, selectionSets), onInterface);
  const served = new Map<string, FieldNode[]>();
  for (const [key, nodes] of all) {
    const name = nodes[0].name.value;
    // Not an interface field (`__typename`, an implementation's own): the concrete type is needed (c).
    const ofInterface = iface.getFields()[name] !== undefined;
    const owned = ofInterface && (provided?.has(name) || placement.model.canResolve(iface.name, name, graph, placement.labels));
    if (owned || (ofInterface && onInterface.has(key) && hasLookup(placement, iface, name, graph, provided))) served.set(key, nodes);
    else needsType = true;
  }
  placement.planObjectFields(iface, served, where, touched);
  if (!needsType) return;
  const resolver = typeResolver(placement, iface, graph, provided);
  const providers = new Set<PlanStep>([step]);
  // The key of the look-up that tells each object's type: the plan's own need, always wanted
  // (within another need, whenever the look-up is made).
  const resolving: NeedFor = {};
  placement.planObjectFields(iface, fieldSetFields(placement.model.fieldSetSelection(resolver.key)), withNeed(where, where.need ? { included: where.need.included, for: resolving } : ALWAYS), providers);
  const resolution = placement.steps.entityStep(resolver.graph, path, iface.name, providers, resolver.key);
  resolving.step = resolution;
  resolution.lookupType = iface.name;
  resolution.resolvesType = true;
  for (const provider of providers) touched.add(provider);
  touched.add(resolution);
  placement.planSelections(iface, selectionSets, inStep(where, resolution, undefined), touched, new Set(served.keys()));
}
