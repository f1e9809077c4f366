// The stage of a step or fetch: the one numbering of "how many run one after another before it".
/**
 * The stage of a plan's step or fetch: 0 for one that waits for nothing (a root fetch), else one
 * more than the latest stage among those it waits for. Fetches of one stage may be in flight
 * together; a plan whose last stage is n makes n + 1 requests one after another at most. The
 * planner weighs ways by it (entity-paths.ts), keeps the plan with the earlier last stage
 * (build-plan.ts, 12) and costs root choices by it (batch-fetches.ts); the runner starts a fetch
 * when every fetch of an earlier stage it waits for has merged (run-plan.ts, 1). `known` memoises.
 */
export function stageOf<T>(item: T, dependsOn: (item: T) => Iterable<T>, known: Map<T, number>): number {
  let stage = known.get(item);
  if (stage === undefined) {
    stage = 0;
    for (const dependency of dependsOn(item)) stage = Math.max(stage, stageOf(dependency, dependsOn, known) + 1);
    known.set(item, stage);
  }
  return stage;
}

/** The last stage of a plan's fetches or steps (0: root fetches only, or none). */
export function lastStage<T>(items: Iterable<T>, dependsOn: (item: T) => Iterable<T>): number {
  const known = new Map<T, number>();
  let last = 0;
  for (const item of items) last = Math.max(last, stageOf(item, dependsOn, known));
  return last;
}
