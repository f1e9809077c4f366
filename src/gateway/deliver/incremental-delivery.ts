// A deferred query's answer as payloads: the required part when its fetches are done, each deferred part when its own are.
import type { DirectiveNode, ExecutionResult, GraphQLError } from 'graphql';
import type { CallBudget } from '../../request/call-budget.js';
import { missingOf, staleOf, type Completeness, type MissingSection } from '../../request/completeness.js';
import { requestStateOf, type IncrementalFormat } from '../../request/request-state.js';
import { StreamRecorder } from '../../streaming/stream-record.js';
import type { Fetch, QueryPlan } from '../plan/build-plan.js';
import type { AnswerProjector, Projection } from '../plan/project-answer.js';
import { placeDenials, type RunningPlan, type RunRequest } from '../plan/run-plan.js';
import { takeMarkers, type DeferSplit } from './deferred-parts.js';
import { INCREMENTAL_FORMATS, type Delivered, type Delivery } from './incremental-formats.js';

type Data = Record<string, unknown>;

export interface IncrementalDeliveryOptions {
  readonly plan: QueryPlan;
  readonly split: DeferSplit;
  readonly format: IncrementalFormat;
  readonly projector: AnswerProjector;
  readonly operationName: string | null | undefined;
  readonly variables: Data | undefined;
  /** The GraphQL context: the request's state (signal, stale notes, stream record) is read from it. */
  readonly context: unknown;
  readonly deniedError: (coordinate: string) => Error;
  /** The deferred parts' budget, in ms from now (`deferDeadlineMs`). */
  readonly deferDeadlineMs: number;
  /** Starts the plan with the budget of each fetch (the runner's `startPlan` with the request's fetch functions). */
  start(budgetOf: RunRequest['budgetOf']): RunningPlan;
  /** Runs once every fetch is done, before the last payload (a mutation's purge). */
  afterRun?: (data: Data) => Promise<void>;
}

/**
 * Answers a query with `@defer` in payloads (decision 027), or undefined when the compiled
 * projection cannot shape it (introspection in it: one answer then).
 * 1. One run of the plan, started at once: every fetch starts when its inputs are known, whichever
 *    part it serves. The plan is the one the query without `@defer` has, so no fetch is made that
 *    it would not make.
 * 2. Which fetches a payload waits for is read from the plan: a fetch serves a part when one of its
 *    steps' fields is wanted with that part (and the parts around it) delivered, by the guards the
 *    operation analysis gave each field (a deferred fragment is a guard of its own).
 * 3. The initial payload waits for the fetches of the operation without its deferred parts and is
 *    bounded by the request's deadline. Each deferred part's fetches are bounded by the defer
 *    deadline instead (`budgetOf`): a part that misses it arrives with DEADLINE_EXCEEDED errors,
 *    and the stream ends. The client's leaving aborts every call (the request's signal).
 * 4. Every payload is projected from the one merged tree: the initial one from the split document,
 *    each part from its own selections at its place. Markers in an answer announce the parts
 *    inside it. Denied fields are placed for each projection and taken out after, so a fetch still
 *    running reads the plan's own values.
 * 5. Parts whose fetches are done at the same moment go out in one payload. Each payload carries
 *    `extensions.completeness` for the answer so far; the last one's is the whole answer's.
 */
export function deliverIncrementally(options: IncrementalDeliveryOptions): AsyncIterable<ExecutionResult> | undefined {
  const { plan, split, projector, operationName, variables } = options;
  if (split.introspective) return undefined;
  const projection = projector.projectionOf(split.document, operationName, variables);
  if (!projection) return undefined;
  const whole: Projection = projection;
  const partProjection = (delivery: Delivery) => projector.partProjectionOf(split.document, operationName, variables, delivery.part.selectionSet, delivery.typeName);
  const deferred = new Set<DirectiveNode>(split.parts.map((part) => part.directive));
  const initialFetches = fetchesServing(plan, deferred, new Set());
  const state = requestStateOf(options.context);
  const budget: CallBudget = { signal: state.signal, deadlineAt: performance.now() + options.deferDeadlineMs };
  const running = options.start((fetch: Fetch) => (initialFetches.has(fetch.id) ? undefined : budget));
  const format = INCREMENTAL_FORMATS[options.format];
  // The request's answer is this stream: a client that leaves ends it at once (its queue place, its audit row), whatever the generator waits for.
  const record = new StreamRecorder(state, { complete: false, until: state.signal });
  const readyOf = readiness(plan, split, deferred, running);

  async function* payloads(): AsyncGenerator<ExecutionResult> {
    let count = 0;
    const missing: MissingSection[] = [];
    let reported = 0;
    const completeness = (errors: readonly GraphQLError[] | undefined): Completeness => {
      missing.push(...missingOf(errors));
      const all = [...missing, ...staleOf(state.stale)];
      return { complete: all.length === 0 && reported === 0, missing: all };
    };
    const waiting: Waiting[] = [];
    const announce = (found: ReturnType<typeof takeMarkers>, around: ReadonlySet<DirectiveNode>): Delivery[] =>
      found.map((place) => {
        const chain = new Set(around).add(place.part.directive);
        const delivery: Delivery = { ...place, id: String(count++) };
        const entry: Waiting = { delivery, chain, ready: false };
        void readyOf(chain).then(() => (entry.ready = true), () => (entry.ready = true));
        waiting.push(entry);
        return delivery;
      });
    try {
      await Promise.all([...initialFetches].map((id) => running.fetchDone[id]));
      const first = projected(() => whole(running.data));
      const found = announce(takeMarkers(split, first.data, running.data, []), new Set());
      const firstErrors = takeUnplaced(running, 0);
      reported = firstErrors.length;
      const result = firstErrors.length > 0 ? { ...first, errors: [...(first.errors ?? []), ...firstErrors] } : first;
      const initial = completeness(result.errors);
      // No deferred part applies anywhere: the first payload is the last (after a mutation's purge).
      if (found.length === 0 && options.afterRun) {
        await running.done;
        await options.afterRun(running.data);
      }
      record.sent(result.errors, initial.complete);
      yield format.initial({ result, found, completeness: initial, hasNext: found.length > 0 });
      let unplacedSeen = reported;
      while (waiting.length > 0) {
        await Promise.race(waiting.map((entry) => readyOf(entry.chain)));
        // Parts done at the same moment share a payload: let every settled fetch mark its parts.
        await new Promise<void>((resolve) => setImmediate(resolve));
        const ready = waiting.filter((entry) => entry.ready);
        const delivered: Delivered[] = [];
        const foundNow: Delivery[] = [];
        for (const entry of ready) {
          waiting.splice(waiting.indexOf(entry), 1);
          const answer = projected(() => partProjection(entry.delivery)?.(entry.delivery.source, entry.delivery.path) ?? { data: null });
          foundNow.push(...announce(takeMarkers(split, answer.data, entry.delivery.source, entry.delivery.path), entry.chain));
          delivered.push({ delivery: entry.delivery, result: answer });
        }
        if (waiting.length === 0) {
          await running.done;
          await options.afterRun?.(running.data);
        }
        const unplaced = takeUnplaced(running, unplacedSeen);
        unplacedSeen += unplaced.length;
        reported += unplaced.length;
        const errors = [...delivered.flatMap(({ result }) => result.errors ?? []), ...unplaced];
        const soFar = completeness(errors);
        record.sent(errors, soFar.complete);
        yield format.later({ delivered, found: foundNow, unplaced, hasNext: waiting.length > 0, completeness: soFar });
      }
    } finally {
      record.end();
    }
  }

  /** Projects with the denied fields in place, and the plan's own values back after. */
  function projected(project: () => ExecutionResult): ExecutionResult {
    const restore = placeDenials(plan, running.data, options.deniedError);
    try {
      return project();
    } finally {
      restore?.();
    }
  }

  return payloads();
}

/** When the fetches a delivery waits for are done, by the parts delivered with it (memoised per set of parts). */
function readiness(plan: QueryPlan, split: DeferSplit, deferred: ReadonlySet<DirectiveNode>, running: RunningPlan): (chain: ReadonlySet<DirectiveNode>) => Promise<void> {
  const known = new Map<string, Promise<void>>();
  return function readyOf(chain) {
    const key = split.parts.filter((part) => chain.has(part.directive)).map((part) => part.id).join(',');
    let ready = known.get(key);
    if (!ready) {
      const ids = fetchesServing(plan, deferred, chain);
      known.set(key, (ready = Promise.all([...ids].map((id) => running.fetchDone[id])).then(() => undefined)));
    }
    return ready;
  };
}

interface Waiting {
  readonly delivery: Delivery;
  /** The parts delivered with it: its own and those around it. */
  readonly chain: ReadonlySet<DirectiveNode>;
  ready: boolean;
}

/** The errors no field stands for that the run reported since `from`. */
function takeUnplaced(running: RunningPlan, from: number): GraphQLError[] {
  return running.unplaced.slice(from);
}

/**
 * 2. The ids of the fetches whose answers a payload needs, when the deferred parts in `delivered`
 * are delivered and the others not yet: a fetch is needed when a field of one of its steps is
 * wanted (no guard, or a guard whose every `@defer` is delivered or not deferring). `@skip` and
 * `@include` are read as "maybe": a fetch they leave out is done at once.
 */
export function fetchesServing(plan: QueryPlan, deferred: ReadonlySet<DirectiveNode>, delivered: ReadonlySet<DirectiveNode>): Set<number> {
  const passes = (list: readonly DirectiveNode[]) => list.every((directive) => !deferred.has(directive) || delivered.has(directive));
  const ids = new Set<number>();
  for (const fetch of plan.fetches) {
    let needed = false;
    for (const step of fetch.steps) {
      for (const field of step.selection.fields.values()) {
        if (!field.included || field.included.some((guards) => guards.every(passes))) {
          needed = true;
          break;
        }
      }
      if (needed) break;
    }
    if (needed) ids.add(fetch.id);
  }
  return ids;
}
