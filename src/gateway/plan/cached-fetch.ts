// The section cache around one fetch (decision 026, 1): what it holds fresh is not sent, answers are stored, stale copies stand in for a subgraph that could not answer.
import { GraphQLError, type ExecutionResult } from 'graphql';
import { isUnanswered, type GraphQLFormattedErrorLike } from '../../errors/unanswered.js';
import type { Fetch, FetchStep } from './build-plan.js';
import { parsePart, UNREADABLE, type RequestSections, type SectionRead, type UsablePart } from './section-cache.js';
import type { FetchAnswer, FetchCall, FetchFn, FetchLookup } from './subgraph-fetch.js';

type Data = Record<string, unknown>;

/** What the wrapper uses of one request's section cache (a `RequestSections`). */
export type FetchSections = Pick<RequestSections, 'usable' | 'keyOf' | 'read' | 'write' | 'noteFetched' | 'noteStale' | 'staleAllowed'>;

/** One entity step's look-up through the cache. */
interface CachedLookup {
  readonly step: FetchStep;
  readonly representations: readonly Data[];
  /** Indices of the representations sent (those the cache did not answer), in the order sent. */
  sent: number[];
  /** The step's cacheable part for this request, with each representation's key and what the cache held. */
  part?: UsablePart;
  keys?: string[];
  reads?: SectionRead[];
  /** Representations answered without the call, by index: fresh copies, and stale ones after a failure. */
  settled?: Map<number, unknown>;
  /** Indices of sent representations that a stale copy answered after the subgraph failed. */
  served?: Set<number>;
}

/**
 * The section cache (section-cache.ts) as a wrapper of a fetch:
 * 1. A root fetch is one part: answered from the cache whole, or fetched whole. An entity look-up is
 *    a part per entity: those the cache holds fresh are answered from it, only the others are sent,
 *    and `next` is not called when none is left.
 * 2. The answer goes back in the runner's order: `_entities` (or the step's alias) index for index,
 *    each error's path moved from the index sent to the runner's index; the cache's copies are the
 *    answer's `settled` entries.
 * 3. Answers are stored, none when the answer has any error (an error without a path may concern any).
 * 4. A fetch that failed because its subgraph could not answer (every error says so) is answered from
 *    stale copies where the cache keeps one, and the errors of those entities are dropped (noted in
 *    the request state: the answer is labelled STALE, never cached).
 * Reads from memory take no turn of the event loop: when memory answers every part, the answer is a
 * value, not a promise (issue 14).
 */
export function withSectionCache(sections: FetchSections): (next: FetchFn) => FetchFn {
  return function wrapFetch(next) {
    return function cachedFetch(call) {
      return call.lookups ? fetchEntities(call, call.lookups, sections, next) : fetchRoot(call, sections, next);
    };
  };
}

/** `use` applied to a value, or once the promise of one settles: a value stays a value. */
function then<T, U>(value: T | Promise<T>, use: (value: T) => U | Promise<U>): U | Promise<U> {
  return value instanceof Promise ? value.then(use) : use(value);
}

function fetchRoot(call: FetchCall, sections: FetchSections, next: FetchFn): FetchAnswer | Promise<FetchAnswer> {
  const { fetch } = call;
  const step = fetch.steps[0];
  const part = sections.usable(fetch, step, 1);
  if (!part) return next(call);
  const key = sections.keyOf(fetch, part);
  return then(sections.read(fetch, step, part, [key]), ([read]) => {
    if (read.fresh !== undefined) return { data: read.fresh as Data };
    return then(next(call), (result): FetchAnswer => {
      const errors = result.errors ?? [];
      if (read.stale && sections.staleAllowed(fetch) && failedUnanswered(errors)) {
        const value = parsePart(read.stale.json);
        if (value !== UNREADABLE) {
          sections.noteStale(fetch, step, 1, read.stale.ageMs, String(errors[0].extensions?.code));
          return { data: value as Data };
        }
      }
      const answer = result.data;
      if (answer && errors.length === 0) {
        sections.write(part, [[key, answer]], call.budget?.deadlineAt);
        sections.noteFetched(part);
      }
      return result;
    });
  });
}

/** Looks up every step's representations at once; only the misses are sent. */
function fetchEntities(call: FetchCall, lookups: readonly FetchLookup[], sections: FetchSections, next: FetchFn): FetchAnswer | Promise<FetchAnswer> {
  const { fetch } = call;
  const cached: CachedLookup[] = [];
  let reading: Promise<void>[] | undefined;
  for (const { step, representations } of lookups) {
    const lookup: CachedLookup = { step, representations, sent: representations.map((_, index) => index) };
    cached.push(lookup);
    if (representations.length === 0) continue;
    const part = sections.usable(fetch, step, representations.length);
    if (!part) continue;
    lookup.part = part;
    lookup.keys = representations.map((representation) => sections.keyOf(fetch, part, representation));
    const reads = sections.read(fetch, step, part, lookup.keys, representations);
    if (reads instanceof Promise) (reading ??= []).push(reads.then((answered) => useReads(lookup, part, answered, sections)));
    else useReads(lookup, part, reads, sections);
  }
  // No part of this call can be cached: it goes out as it came.
  if (!cached.some((lookup) => lookup.part)) return next(call);
  const send = () => sendMisses(call, cached, sections, next);
  return reading ? Promise.all(reading).then(send) : send();
}

function useReads(lookup: CachedLookup, part: UsablePart, reads: SectionRead[], sections: FetchSections): void {
  lookup.reads = reads;
  const sent: number[] = [];
  reads.forEach((read, index) => {
    if (read.fresh === undefined) sent.push(index);
    else (lookup.settled ??= new Map()).set(index, read.fresh);
  });
  lookup.sent = sent;
  if (sent.length > 0) sections.noteFetched(part);
}

function sendMisses(call: FetchCall, cached: CachedLookup[], sections: FetchSections, next: FetchFn): FetchAnswer | Promise<FetchAnswer> {
  if (cached.every((lookup) => lookup.sent.length === 0)) return { settled: settledOf(cached) };
  const lookups = cached.map(({ step, representations, part, sent }) => ({ step, representations: part ? sent.map((index) => representations[index]) : representations }));
  return then(next({ ...call, lookups }), (result) => answerInOrder(call, cached, result, sections));
}

function settledOf(cached: readonly CachedLookup[]): Map<FetchStep, Map<number, unknown>> {
  const settled = new Map<FetchStep, Map<number, unknown>>();
  for (const lookup of cached) if (lookup.settled) settled.set(lookup.step, lookup.settled);
  return settled;
}

/** The subgraph's answer to the misses, stored, with stale copies where it could not answer, in the runner's order. */
function answerInOrder(call: FetchCall, cached: CachedLookup[], result: ExecutionResult, sections: FetchSections): FetchAnswer {
  const { fetch } = call;
  const errors = result.errors ?? [];
  const answer = result.data as Data | null | undefined;
  const unanswered = failedUnanswered(errors);
  const data: Data = { ...answer };
  for (const lookup of cached) {
    if (!lookup.part) continue;
    const alias = lookup.step.alias ?? '_entities';
    const entities = answer?.[alias];
    if (unanswered && lookup.reads && sections.staleAllowed(fetch)) serveStale(fetch, lookup, sections, String(errors[0].extensions?.code));
    if (Array.isArray(entities)) {
      if (errors.length === 0) storeAnswers(lookup, entities, sections, call.budget?.deadlineAt);
      data[alias] = inRunnerOrder(lookup, entities);
    } else if (errors.length > 0) {
      // Not an answer without data: the errors say what failed (and some may be dropped below).
      data[alias] = [];
    }
  }
  return { data, errors: errorsInOrder(errors, cached), settled: settledOf(cached) };
}

/** The answered entities at the indices the runner collected them at (the cache's own are `settled`). */
function inRunnerOrder(lookup: CachedLookup, entities: readonly unknown[]): unknown[] {
  const ordered: unknown[] = new Array<unknown>(lookup.representations.length);
  lookup.sent.forEach((original, index) => {
    ordered[original] = entities[index];
  });
  return ordered;
}

/** Stores each answered entity under its key; none when the answer has any error (a pathless one may concern any). */
function storeAnswers(lookup: CachedLookup, entities: readonly unknown[], sections: FetchSections, callDeadlineAt: number | undefined): void {
  const entries: [string, unknown][] = [];
  lookup.sent.forEach((original, index) => {
    const entity = entities[index];
    if (entity !== undefined) entries.push([lookup.keys![original], entity]);
  });
  sections.write(lookup.part!, entries, callDeadlineAt);
}

/** Stale copies for the sent entities that have one; those are then answered. */
function serveStale(fetch: Fetch, lookup: CachedLookup, sections: FetchSections, failureCode: string): void {
  let oldest = 0;
  const served = new Set<number>();
  for (const original of lookup.sent) {
    const stale = lookup.reads![original]?.stale;
    if (!stale) continue;
    const value = parsePart(stale.json);
    if (value === UNREADABLE) continue;
    served.add(original);
    oldest = Math.max(oldest, stale.ageMs);
    (lookup.settled ??= new Map()).set(original, staleEntity(lookup.step, value));
  }
  if (served.size === 0) return;
  lookup.served = served;
  sections.noteStale(fetch, lookup.step, served.size, oldest, failureCode);
}

/**
 * A stale copy as the runner merges it. As before this wrapper, a stale copy does not give an
 * `@interfaceObject`'s object its concrete type (a fresh copy and an answer do): its `__typename` is
 * left out for such a step (the object's own type name stays either way).
 */
function staleEntity(step: FetchStep, value: unknown): unknown {
  if (!step.resolvesType || value === null || typeof value !== 'object' || Array.isArray(value) || !('__typename' in value)) return value;
  const rest: Data = {};
  for (const [key, field] of Object.entries(value)) if (key !== '__typename') rest[key] = field;
  return rest;
}

/**
 * Each error's path moved from the index sent to the runner's index (`[alias, sentIndex, …]` to
 * `[alias, index, …]`); an entity a stale copy stood in for is answered, so its errors go. An error
 * without an entity index stays as it is: it concerns the entities not settled.
 */
function errorsInOrder(errors: readonly GraphQLError[], cached: readonly CachedLookup[]): GraphQLError[] {
  const moved: GraphQLError[] = [];
  for (const error of errors) {
    const path = error.path;
    const lookup = path && typeof path[1] === 'number' ? cached.find((l) => (l.step.alias ?? '_entities') === path[0]) : undefined;
    if (!lookup?.part) {
      moved.push(error);
      continue;
    }
    const sentIndex = path![1] as number;
    const original = lookup.sent[sentIndex];
    if (original === undefined || lookup.served?.has(original)) continue;
    moved.push(original === sentIndex ? error : new GraphQLError(error.message, { path: [path![0], original, ...path!.slice(2)], extensions: error.extensions, originalError: error.originalError ?? undefined }));
  }
  return moved;
}

/** Whether a call failed because its subgraph could not answer (every error says so): the case stale copies are kept for. */
function failedUnanswered(errors: readonly GraphQLFormattedErrorLike[]): boolean {
  return errors.length > 0 && errors.every((error) => isUnanswered(error));
}
