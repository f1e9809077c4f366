// The @defer check: a query asked with random `@defer`s must, its payloads merged, answer as without them; and the router bugs it knows today.
import { Kind, parse, print, validate, visit, type FragmentSpreadNode, type GraphQLSchema, type InlineFragmentNode, type SelectionSetNode } from 'graphql';
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
 * The router bugs the check has found (issue 26), by name. A mismatch they fully explain is counted, not failed: once
 * each bug's workaround is applied (below, `explainDeferMismatch`), nothing else may differ. The default runs fail when
 * a bug they show (`seenBy`) is no longer seen, so the list cannot outlive the bugs: remove an entry once it is fixed.
 */
export const KNOWN_DEFER_BUGS = {
  partWithoutVariables: {
    name: 'a deferred part is projected without the request variables',
    seenBy: ['differential', 'fixtures'],
    what: '`@skip`/`@include(if: $v)` inside a deferred fragment fails when the part is delivered: "Argument "if" of required type "Boolean!" was provided the variable "$v" which was not provided a runtime value." Where the part sits on a root field\'s object, the stream ends with a payload of that error alone (no `hasNext`, no `incremental`); deeper, the part comes as `data: null` with the error, no `extensions.code`. Variables in field arguments are fine (the fetches have them).',
    smallest: {
      query: 'query ($v: Boolean!) { provUser(id: "r1") { ... @defer { id @include(if: $v) } } }',
      variables: { v: true },
      expected: '{"data":{"provUser":{"id":"r1"}}}',
      got: 'payload 1: {"data":{"provUser":{}},"hasNext":true}; payload 2: {"errors":[{"message":"Argument \\"if\\" of required type \\"Boolean!\\" was provided the variable \\"$v\\" which was not provided a runtime value."}]} and the stream ends',
    },
  },
  noFinalPayload: {
    name: 'a stream with no deferred part to deliver ends on hasNext: true',
    seenBy: ['differential', 'fixtures'],
    what: 'when the initial payload announces no deferred part (each one under a null, an empty list, a type that did not match, or a skipped field), the stream ends after it, and its `hasNext` is true: no payload ever says the answer is complete (RFC: the last payload has `hasNext: false`).',
    smallest: {
      query: '{ search(term: "") { ... @defer { __typename } } }',
      expected: '{"data":{"search":[]}}',
      got: 'one payload {"data":{"search":[]},"hasNext":true}, then the end of the multipart body',
    },
  },
  laterErrorsUnformatted: {
    name: "errors of later payloads are not masked and carry no code",
    seenBy: ['differential', 'fixtures'],
    what: "an error in `incremental[].errors` (a deferred part's non-null field that came back null) reaches the client as graphql-js wrote it: the original message and no `extensions.code`, where the same error without `@defer` is masked as \"Unexpected error.\" with INTERNAL_SERVER_ERROR (STYLE.md 5: mask by default). The payload's `extensions.completeness` does say INTERNAL_SERVER_ERROR. Subgraph errors (SUBGRAPH_ERROR) do keep their code.",
    smallest: {
      query: '{ srchTrending { ... on SrchVideo @defer { score } } }',
      expected: '{"data":null,"errors":[{"message":"Unexpected error.","path":["srchTrending",1,"score"],"extensions":{"code":"INTERNAL_SERVER_ERROR"}}]}',
      got: 'payload 2: {"incremental":[{"data":null,"path":["srchTrending",1],"errors":[{"message":"Cannot return null for non-nullable field SrchVideo.score.","path":["srchTrending",1,"score"]}]}],"hasNext":false}',
    },
  },
  introspectionPartLost: {
    name: 'a deferred part holding introspection fields comes as data: null, without an error',
    seenBy: ['fixtures'],
    what: 'a deferred fragment that selects `__schema` or `__type` is delivered as `{"data":null,"path":[...]}` with no error and `completeness.complete: true`: the introspection answer is silently lost (and a client bubbles the null). The compiled projection cannot shape introspection (incremental-delivery.ts falls back to one answer when the initial part has some), and a part whose projection is undefined becomes `{ data: null }`. Introspection outside the deferred parts, or under a `@defer` inside `__schema`, is answered whole. Found by the fixtures run with CASES_DEFER_SEED=2 or 3 (operation-shapes); the generator never selects introspection fields.',
    smallest: {
      query: '{ ... @defer { __schema { queryType { name } } } }',
      expected: '{"data":{"__schema":{"queryType":{"name":"Query"}}}}',
      got: 'payload 1: {"data":{},"hasNext":true}; payload 2: {"incremental":[{"data":null,"path":[]}],"hasNext":false,"extensions":{"completeness":{"complete":true,"missing":[]}}}',
    },
  },
  subgraphErrorGivenOnce: {
    name: "a subgraph's error reaches one payload only; the same failure elsewhere is a bare non-null error",
    // Seed 13's queries #1088 and #1383 (DIFF_COUNT=1500): not among the default 300.
    seenBy: [],
    what: "hid-warehouse fails `stock` and `stockValueCents` of h3 (one fetch). Without `@defer` the answer reports the subgraph's error, SUBGRAPH_ERROR with `extensions.subgraph`. With a deferred fragment, only one payload gets the subgraph's error: when the deferred field comes first in the document, the initial payload's `stock` is reported as a plain non-null violation (masked: \"Unexpected error.\", INTERNAL_SERVER_ERROR); when two parts fail on the same fetch, the second one's error is \"Cannot return null for non-nullable field HidProduct.stockValueCents.\" with no code (and no subgraph). Swapping the order (`stock ... @defer { stockValueCents }`) gives SUBGRAPH_ERROR.",
    smallest: {
      query: '{ hidProduct(id: "h3") { ... @defer { stockValueCents } stock } }',
      expected: 'hidProduct null, its error SUBGRAPH_ERROR (subgraph hid-warehouse), as `{ hidProduct(id: "h3") { stock ... @defer { stockValueCents } } }` answers',
      got: 'initial payload {"errors":[{"message":"Unexpected error.","path":["hidProduct","stock"],"extensions":{"code":"INTERNAL_SERVER_ERROR"}}],"data":{"hidProduct":null},"hasNext":true} (and the stream ends: noFinalPayload)',
    },
  },
} as const satisfies Record<string, DeferBug>;

export type DeferBugName = keyof typeof KNOWN_DEFER_BUGS;

/** The known bugs a default run shows (`seenBy`) that it did not meet: fixed, or hiding behind another one. */
export function staleDeferBugs(run: DeferBug['seenBy'][number], met: ReadonlyMap<DeferBugName, unknown>): DeferBugName[] {
  return (Object.keys(KNOWN_DEFER_BUGS) as DeferBugName[]).filter((bug) => (KNOWN_DEFER_BUGS[bug] as DeferBug).seenBy.includes(run) && !met.has(bug));
}

const UNPROVIDED_VARIABLE = /which was not provided a runtime value/;
const LAST_HAS_NEXT = /^payload (\d+) of (\d+) has hasNext: true$/;

/**
 * Which known bugs explain a mismatch entirely, or undefined when something else differs too.
 * 0. introspectionPartLost: an `incremental` entry is `data: null` without errors. The query is asked again with no
 *    `@defer` on a fragment that holds `__schema` or `__type` (`undeferIntrospection`), and the rest goes on with that.
 * 1. partWithoutVariables: a payload's error says a variable had no value. The query is asked again with its
 *    `@skip`/`@include`/`@defer` variables written as literals (`inlineConditions`), and the rest goes on with that answer.
 * 2. noFinalPayload: the last payload says `hasNext: true`; that problem is set aside.
 * 3. laterErrorsUnformatted: an error of an `incremental` entry has no code; such errors are read as INTERNAL_SERVER_ERROR.
 * 4. subgraphErrorGivenOnce: an INTERNAL_SERVER_ERROR nulls a position the answer without `@defer` nulls with a
 *    SUBGRAPH_ERROR; it is read as that SUBGRAPH_ERROR.
 * The answer so corrected must then equal the one without `@defer`.
 */
export async function explainDeferMismatch(
  plain: DeferComparable,
  asked: AskedDeferred,
  candidate: Candidate,
  /** Asks a query again (absent: it may not be, a mutation; a bug whose workaround asks again then explains nothing). */
  askAgain: ((candidate: Candidate) => Promise<AskedDeferred>) | undefined,
): Promise<DeferBugName[] | undefined> {
  const bugs = new Set<DeferBugName>();
  let { answer, payloads } = asked;
  let current = candidate;
  const again = async (bug: DeferBugName, workaround: (query: string) => string) => {
    bugs.add(bug);
    if (!askAgain) return false;
    current = { query: workaround(current.query), variables: current.variables };
    ({ answer, payloads } = await askAgain(current));
    return true;
  };
  const messages = () => payloads.flatMap((p) => [...(p.errors ?? []), ...(p.incremental ?? []).flatMap((i) => i.errors ?? [])]).map((e) => e.message ?? '');
  const silentNull = () => payloads.some((p) => (p.incremental ?? []).some((i) => i.data === null && !i.errors?.length));
  if (silentNull()) {
    if (!(await again('introspectionPartLost', undeferIntrospection)) || silentNull()) return undefined;
  }
  if (messages().some((m) => UNPROVIDED_VARIABLE.test(m))) {
    if (!(await again('partWithoutVariables', (query) => inlineConditions(query, current.variables))) || messages().some((m) => UNPROVIDED_VARIABLE.test(m))) return undefined;
  }
  const problems = answer.problems.filter((problem) => {
    const last = LAST_HAS_NEXT.exec(problem);
    if (!last || Number(last[1]) !== Number(last[2]) - 1) return true;
    bugs.add('noFinalPayload');
    return false;
  });
  let pairs = answer.nulled;
  const uncoded = payloads.some((p) => (p.incremental ?? []).some((i) => (i.errors ?? []).some((e) => e.extensions?.code === undefined)));
  if (uncoded && pairs.some((e) => e.code === '')) {
    bugs.add('laterErrorsUnformatted');
    pairs = pairs.map((e) => (e.code === '' ? { ...e, code: 'INTERNAL_SERVER_ERROR' } : e));
  }
  const fromSubgraph = new Set(plain.nulled.filter((e) => e.code === 'SUBGRAPH_ERROR').map((e) => e.nulled));
  if (pairs.some((e) => e.code === 'INTERNAL_SERVER_ERROR' && fromSubgraph.has(e.nulled))) {
    bugs.add('subgraphErrorGivenOnce');
    pairs = pairs.map((e) => (e.code === 'INTERNAL_SERVER_ERROR' && fromSubgraph.has(e.nulled) ? { ...e, code: 'SUBGRAPH_ERROR' } : e));
  }
  const unique = sortPairs([...new Map(pairs.map((e) => [`${e.nulled}\u0000${e.code}`, e])).values()]);
  const corrected: DeferComparable = { ...answer, nulled: unique, problems };
  return bugs.size > 0 && sameAnswer(corrected, plain) ? [...bugs] : undefined;
}

/** The query with each `if:` variable of `@skip`, `@include` and `@defer` written as its value (or its default), and the variables no longer used undeclared. */
export function inlineConditions(query: string, variables: Record<string, unknown>): string {
  const conditional = new Set(['skip', 'include', 'defer']);
  const document = parse(query);
  const values = new Map<string, boolean>();
  visit(document, {
    VariableDefinition(node) {
      const name = node.variable.name.value;
      if (typeof variables[name] === 'boolean') values.set(name, variables[name] as boolean);
      else if (!(name in variables) && node.defaultValue?.kind === Kind.BOOLEAN) values.set(name, node.defaultValue.value);
    },
  });
  const inlined = visit(document, {
    Directive(node) {
      if (!conditional.has(node.name.value)) return undefined;
      const args = node.arguments?.map((arg) => {
        const value = arg.name.value === 'if' && arg.value.kind === Kind.VARIABLE ? values.get(arg.value.name.value) : undefined;
        return value === undefined ? arg : { ...arg, value: { kind: Kind.BOOLEAN, value } };
      });
      return { ...node, arguments: args };
    },
  });
  const used = new Set<string>();
  visit(inlined, { VariableDefinition: () => false, Variable: (node) => void used.add(node.name.value) });
  return print(visit(inlined, { VariableDefinition: (node) => (used.has(node.variable.name.value) ? undefined : null) }));
}

/** The query without `@defer` on any fragment (inline or spread) that selects `__schema` or `__type`, at any depth. */
export function undeferIntrospection(query: string): string {
  const document = parse(query);
  const fragments = new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])));
  const holds = (set: SelectionSetNode | undefined, seen: Set<string>): boolean =>
    !!set &&
    set.selections.some((s) => {
      if (s.kind === Kind.FIELD) return s.name.value === '__schema' || s.name.value === '__type' || holds(s.selectionSet, seen);
      if (s.kind === Kind.INLINE_FRAGMENT) return holds(s.selectionSet, seen);
      if (seen.has(s.name.value)) return false;
      return holds(fragments.get(s.name.value)?.selectionSet, new Set(seen).add(s.name.value));
    });
  const undefer = <T extends InlineFragmentNode | FragmentSpreadNode>(node: T, set: SelectionSetNode | undefined): T | undefined =>
    node.directives?.some((d) => d.name.value === 'defer') && holds(set, new Set()) ? { ...node, directives: node.directives.filter((d) => d.name.value !== 'defer') } : undefined;
  return print(
    visit(document, {
      InlineFragment: (node) => undefer(node, node.selectionSet),
      FragmentSpread: (node) => undefer(node, fragments.get(node.name.value)?.selectionSet),
    }),
  );
}
