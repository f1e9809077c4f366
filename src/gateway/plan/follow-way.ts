// Rules 3, 4 and 12 of build-plan.ts: a field its step's subgraph cannot resolve, planned the way chooseWay found: the look-up's key and required fields, the fields on the way down, the field in the look-up.
import type { Guards } from '../../request/operation-analysis.js';
import { subSelections } from './collect-fields.js';
import type { Way } from './entity-paths.js';
import { compositeTypeOf, fieldScope, localFieldType, positionType, providedFor, subgraphKey } from './field-sources.js';
import type { ClientField, Placement } from './placement.js';
import type { Above, Frame, Need, NeedFor, PlanStep, SelectionTree } from './plan-types.js';
import { below, inStep, position, rootPosition, withNeed } from './positions.js';
import { TYPENAME, addField, addLeaf, allOf, directivesOf, emptyTree } from './selection-tree.js';
import { PlanUnsupported } from './supergraph-model.js';

/**
 * Plans a field its frame's subgraph cannot resolve the way chooseWay found (3, 4, 8, 12): the
 * look-up's key (and required fields) in the frame it starts from, whose steps all come before
 * it; then, from the level the way starts at, the client's fields down to the field's position,
 * and the field there with its selection. All of it is wanted when the field is, the fields on
 * the way down when they are too (11).
 */
export function follow(placement: Placement, way: Way, frame: Frame, field: ClientField, touched: Set<PlanStep>, need: Need | undefined): void {
  const { type } = frame;
  const { key, nodes } = field;
  const name = nodes[0].name.value;
  const included = placement.conditions.includedOf(nodes, need);
  const links: Above[] = [];
  let level = frame;
  for (let i = 0; i < way.level; i++) {
    links.unshift(level.above!);
    level = level.above!.frame;
  }
  // 11. A field on the way down is wanted when the client wants it there and the one below it is
  // wanted, down to the field the way is for; the look-up when the first of them is.
  const wanted: (readonly Guards[] | undefined)[] = [];
  let inner = included;
  for (let i = links.length - 1; i >= 0; i--) wanted[i] = inner = allOf(links[i].included, inner);
  let top: Frame;
  if (way.kind === 'extend') top = way.from!;
  else if (way.kind === 'root') {
    const root = placement.steps.rootStep(way.graph);
    top = placement.steps.frame(level.type, rootPosition(root, level.scope));
  } else {
    // 3. The key and the type name travel in the representation; 4. so do required fields,
    // wherever they come from. Every step that provides one comes before the entity step.
    const from = way.from!;
    const providers = new Set<PlanStep>([from.step]);
    addLeaf(from.at, TYPENAME);
    const requires = way.level === 0 ? placement.model.requiresOf(way.lookupType ?? type.name, name, way.graph) : undefined;
    // The plan's own needs, wanted when the look-up is made (the key) and when the field is
    // sent (what it requires): 11, settleNeeds.
    const keyFor: NeedFor = {};
    const requiresFor: NeedFor = {};
    placement.planSelections(from.type, [placement.model.fieldSetSelection(way.key!)], withNeed(from, { included: inner, for: keyFor }), providers);
    if (requires) placement.planSelections(from.type, [placement.model.fieldSetSelection(requires)], withNeed(from, { included: inner, for: requiresFor }), providers);
    const child = placement.steps.entityStep(way.graph, level.path, level.type.name, providers, way.key!, requires);
    keyFor.step = child;
    if (way.lookupType) child.lookupType = way.lookupType;
    for (const provider of providers) touched.add(provider);
    touched.add(child);
    if (way.level === 0) {
      // Looked up for this field: the field is planned in the look-up whatever its subgraph requires (the representation carries it).
      requiresFor.field = planLookedUp(placement, way, field, placement.steps.frame(type, inStep(frame, child, undefined)), touched, need);
      return;
    }
    top = placement.steps.frame(level.type, inStep(level, child, undefined));
  }
  // 12. Down from the level the way starts at: the client's fields again, each below the one before.
  let at = top;
  links.forEach((link, i) => {
    at = descend(placement, at, link, i + 1 < links.length ? links[i + 1].frame : frame, wanted[i]);
  });
  placement.planObjectFields(type, new Map([[key, nodes]]), withNeed(at, need), touched);
}

/** The field in the entity step that looks it up at its own position (3, 4, 8); where it went. */
function planLookedUp(placement: Placement, way: Way, field: ClientField, frame: Frame, touched: Set<PlanStep>, need: Need | undefined): { at: SelectionTree; key: string } {
  const { type, key, nodes } = field;
  const where = withNeed(frame, need);
  const node = nodes[0];
  const name = node.name.value;
  const returnType = compositeTypeOf(type, name);
  const directives = directivesOf(nodes);
  const included = placement.conditions.includedOf(nodes, need);
  const responseKey = placement.keys.responseKey(where, key, name, node.arguments ?? []);
  const planned = addField(frame.at, { key: responseKey, name, args: node.arguments ?? [], composite: returnType !== undefined, directives, subgraphKey: subgraphKey(placement.model, type, name, way.graph, responseKey), included });
  placement.conditions.notePlanned(frame.at, responseKey, need, included, returnType !== undefined);
  if (returnType) {
    const own = placement.model.providesOf(way.lookupType ?? type.name, name, way.graph);
    const childScope = fieldScope(placement, type, name, way.graph, frame.scope, undefined);
    const above: Above = { frame, key: responseKey, name, arguments: node.arguments ?? [], directives, included };
    placement.planSelections(positionType(placement, type, name, way.graph, returnType, planned), subSelections(nodes), below(where, planned, above, { provided: own ? placement.model.providedSet(own) : undefined, scope: childScope }), touched);
  }
  return { at: frame.at, key: responseKey };
}

/**
 * One field of the way down (12): the client's field of the frame above, selected in this frame's
 * step (wanted when it and the fields below it on the way are, 11; settleNeeds adds any other
 * placed below it later), and the frame of the objects below it there
 * (in a fragment where that subgraph's field has an abstract type).
 */
function descend(placement: Placement, frame: Frame, link: Above, below: Frame, included: readonly Guards[] | undefined): Frame {
  const { model } = placement;
  const localType = localFieldType(model, frame.type, link.name, below.type, frame.graph);
  if (!localType) throw new PlanUnsupported(`${frame.graph} has no ${below.type.name} below ${frame.type.name}.${link.name}`);
  const planned = addField(frame.at, { key: link.key, name: link.name, args: link.arguments, composite: true, directives: link.directives, subgraphKey: subgraphKey(model, frame.type, link.name, frame.graph, link.key), included });
  placement.conditions.noteWayDown(frame.at, link.key);
  placement.conditions.notePlanned(frame.at, link.key, undefined, link.included, true);
  let at = planned.selection!;
  if (localType.name !== below.type.name) {
    addLeaf(at, TYPENAME);
    let fragment = at.fragments.get(below.type.name);
    if (!fragment) at.fragments.set(below.type.name, (fragment = emptyTree()));
    at = fragment;
  }
  const own = model.providesOf(frame.type.name, link.name, frame.graph);
  const provided = providedFor(frame.provided?.get(link.name) ?? (own ? model.providedSet(own) : undefined), below.type, placement.schema);
  const scope = fieldScope(placement, frame.type, link.name, frame.graph, frame.scope, frame.provided);
  return placement.steps.frame(below.type, position({ graph: frame.graph, step: frame.step, at, path: below.path, provided, scope, above: { ...link, frame } }));
}
