// The @defer check: a query asked with random `@defer`s must, its payloads merged, answer as without them; and the router bugs it knows today.
import { parse, validate, type GraphQLSchema } from 'graphql';
import { mergePayloads, postDeferred, responseNullability, type Payload } from '../helpers/defer-payloads.js';
import { insertDefer, type DeferredQuery } from '../helpers/insert-defer.js';
import { canonical, comparable, differences, type Comparable } from './compare-answers.js';
import type { Candidate } from './shrink-query.js';

type Path = readonly (string | number)[];

/**
 * What the check compares of two answers: `data` (deep, key order ignored), the errors, and where the stream broke its
 * format. The HTTP status is not compared: a stream's is 200 once its first payload is out.
 *
 * Errors are compared by the position each one nulled (its own path when the field is nullable, else the nearest
 * nullable position above, else `data`) and its code, each pair once. Among non-null fields that fail under one
 * nullable position, an engine reports the first it meets (spec 6.4.4: the rest are lost with the null), and `@defer`
 * changes that order: a part delivered on its own reports its own failure, the same null. An error of a nullable field
 * is still compared at its exact path.
 */
export interface DeferComparable {
  data: unknown;
  /** Each error's path and code, sorted (what a report shows). */
  errors: Comparable['errors'];
  /** What is compared of the errors: each distinct (position nulled, code), sorted. */
  nulled: { nulled: string; code: string }[];
  problems: string[];
}

interface RawAnswer {
  data?: unknown;
  errors?: readonly { path?: Path; extensions?: Record<string, unknown> }[];
}

/** The comparable parts of an answer; `nullableAt` is the query's (`responseNullability`). No `data` at all (a refused request) reads as null. */
export function toComparable(answer: RawAnswer, nullableAt: (path: Path) => boolean, problems: string[] = []): DeferComparable {
  const { errors } = comparable({ status: 0, body: { data: answer.data, errors: answer.errors as never } });
  const pairs = new Map<string, { nulled: string; code: string }>();
  for (const error of answer.errors ?? []) {
    const pair = { nulled: nulledBy(error.path, nullableAt), code: String(error.extensions?.code ?? '') };
    pairs.set(`${pair.nulled}\u0000${pair.code}`, pair);
  }
  return { data: answer.data ?? null, errors, nulled: sortPairs([...pairs.values()]), problems };
}

/** The position an error at `path` nulled: the nearest nullable position at or above it, `` for the whole data, `(request)` without a path. */
function nulledBy(path: Path | undefined, nullableAt: (path: Path) => boolean): string {
  if (!path) return '(request)';
  for (let length = path.length; length > 0; length--) if (nullableAt(path.slice(0, length))) return path.slice(0, length).join('.');
  return '';
}

const sortPairs = (pairs: { nulled: string; code: string }[]) => pairs.sort((a, b) => (a.nulled === b.nulled ? a.code.localeCompare(b.code) : a.nulled.localeCompare(b.nulled)));

/** What two answers must agree on. */
const compared = (c: DeferComparable) => ({ data: c.data, errors: c.nulled, problems: c.problems });

export function sameAnswer(a: DeferComparable, b: DeferComparable): boolean {
  return canonical(compared(a)) === canonical(compared(b));
}

/** Where two answers differ, as `path: a ≠ b` lines. */
export function answerDifferences(a: DeferComparable, b: DeferComparable): string[] {
  return differences(compared(a), compared(b));
}

/** The kind of a difference (a shrunk query must keep it): which parts differ, and the codes on each side. */
export function differenceKind(a: DeferComparable, b: DeferComparable): string {
  return canonical({ data: canonical(a.data) !== canonical(b.data), codes: [a.nulled.map((e) => e.code), b.nulled.map((e) => e.code)], problems: b.problems.length > 0 });
}

export interface AskedDeferred {
  answer: DeferComparable;
  /** The payloads as the router sent them (messages are not compared, but a report shows them). */
  payloads: Payload[];
  /** Whether the answer came as a multipart stream (false: one JSON answer, e.g. every `@defer` off, or a refusal). */
  streamed: boolean;
}

/** Sends a query with `@defer`s and merges its payloads (the query's own nullability bubbles the null of a failed part). */
export async function askDeferred(url: string, schema: GraphQLSchema, { query, variables }: Candidate): Promise<AskedDeferred> {
  const response = await postDeferred(url, query, { variables });
  const nullableAt = responseNullability(schema, query);
  const { data, errors, problems } = mergePayloads(response.payloads, { nullableAt });
  return { answer: toComparable({ data, errors }, nullableAt, problems), payloads: response.payloads, streamed: response.streamed };
}

/**
 * The query with random `@defer`s (`insertDefer`), checked against the schema: a document the insertion made invalid is
 * a bug of the test, said as such, not a difference between answers. The router's own `@defer` rules (unique labels,
 * none on a mutation's root fields) are checked by the router.
 */
export function withRandomDefers(schema: GraphQLSchema, query: string, seed: number): DeferredQuery {
  const deferred = insertDefer(schema, query, seed);
  const errors = validate(schema, parse(deferred.query));
  if (errors.length > 0) throw new Error(`insertDefer (seed ${seed}) made an invalid document: ${errors.map((e) => e.message).join('; ')}\n${deferred.query}`);
  return deferred;
}

/** A router bug the check finds, told by what its payloads show; the lead fixes the router, then the entry goes. */
export interface DeferBug {
  readonly name: string;
  readonly what: string;
  /** Which default run shows it (the differential test's seed 13, the fixtures' CASES_DEFER_SEED): there, not seeing it any more fails. None: found by a larger run. */
  readonly seenBy: readonly ('differential' | 'fixtures')[];
  /** The smallest query found that shows it, what the answer without `@defer` is, and what the merged payloads are. */
  readonly smallest: { query: string; variables?: Record<string, unknown>; expected: string; got: string };
}

/**
 * The router bugs the check knows today, by name, each with its smallest query. A mismatch they fully explain is
 * counted, not failed (`explainDeferMismatch` applies each one's workaround, then nothing else may differ). The default
 * runs fail when a bug they show (`seenBy`) is no longer seen, so the list cannot outlive the bugs.
 * Empty: the five bugs this check found in issue 26 are fixed in the router (a part losing the request's variables, a
 * stream not ending on `hasNext: false`, unmasked errors in later payloads, a part with introspection lost, and an
 * entity's failure reported at one field only, so a payload without that field got a bare non-null error).
 */
export const KNOWN_DEFER_BUGS: Readonly<Record<string, DeferBug>> = {};

export type DeferBugName = string;

/** The known bugs a default run shows (`seenBy`) that it did not meet: fixed, or hiding behind another one. */
export function staleDeferBugs(run: DeferBug['seenBy'][number], met: ReadonlyMap<DeferBugName, unknown>): DeferBugName[] {
  return (Object.keys(KNOWN_DEFER_BUGS) as DeferBugName[]).filter((bug) => KNOWN_DEFER_BUGS[bug].seenBy.includes(run) && !met.has(bug));
}

/**
 * Which known bugs explain a mismatch entirely, or undefined when something else differs too: a bug added to
 * KNOWN_DEFER_BUGS gets its workaround here (read the merged answer as the bug's absence would have it), and the
 * answer so corrected must then equal the one without `@defer`. None today.
 */
export async function explainDeferMismatch(_plain: DeferComparable, _asked: AskedDeferred): Promise<DeferBugName[] | undefined> {
  return undefined;
}
