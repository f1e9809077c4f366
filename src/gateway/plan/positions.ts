// Where fields are planned (plan-types.ts Position), for every rule of build-plan.ts that places one (2 to 12), none of its own: frozen positions and the moves between them, into a step, a fragment, a field's value, a need.
import type { Above, Need, PlanStep, PlannedField, Position, Scope, SelectionTree } from './plan-types.js';
import type { FieldSetTree } from './supergraph-model.js';

/** A position, frozen: every field read from `where` (a Frame's own fields left behind), then `changes`. */
function moved(where: Position, changes: Partial<Position>): Position {
  return position({ graph: where.graph, step: where.step, at: where.at, path: where.path, provided: where.provided, scope: where.scope, above: where.above, need: where.need, ...changes });
}

export function position(fields: Position): Position {
  return Object.freeze(fields);
}

/** The top of a root step: the client's fields, nothing provided, nothing above. */
export function rootPosition(step: PlanStep, scope: Scope): Position {
  return position({ graph: step.graph, step, at: step.selection, path: [], provided: undefined, scope });
}

export function withProvided(where: Position, provided: FieldSetTree | undefined): Position {
  return moved(where, { provided });
}

/** The same position, planning for `need` (undefined: the client's fields). */
export function withNeed(where: Position, need: Need | undefined): Position {
  return moved(where, { need });
}

/** A type condition's fragment of the position's tree (5), with what is provided to that type. */
export function inFragment(where: Position, fragment: SelectionTree, provided: FieldSetTree | undefined): Position {
  return moved(where, { at: fragment, provided });
}

/** The same objects in another step (a look-up), at the top of its selection. */
export function inStep(where: Position, step: PlanStep, provided: FieldSetTree | undefined): Position {
  return moved(where, { graph: step.graph, step, at: step.selection, provided });
}

/** The objects of a planned field's value, one level down in the same step. */
export function below(where: Position, planned: PlannedField, above: Above, facts: { provided: FieldSetTree | undefined; scope: Scope }): Position {
  return moved(where, { at: planned.selection!, path: [...where.path, above.key], above, provided: facts.provided, scope: facts.scope });
}
