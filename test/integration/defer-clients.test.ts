// @defer as the clients teams use read it (Apollo Client 4 in both formats, graphql-tools' HTTP executor, graphql-sse, meros on the wire), each answer compared with the same query without @defer.
import { ApolloClient, CombinedGraphQLErrors, HttpLink, InMemoryCache, gql, type ObservableQuery } from '@apollo/client';
import { Defer20220824Handler, GraphQL17Alpha9Handler, type Incremental } from '@apollo/client/incremental';
import { buildHTTPExecutor } from '@graphql-tools/executor-http';
import { mergeIncrementalResult } from '@graphql-tools/utils';
import { parse, print, visit } from 'graphql';
import { createClient } from 'graphql-sse';
import { meros } from 'meros/browser';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_FAULT_SETTINGS } from '../../subgraphs/index.js';
import { setPolicy } from '../../src/registry/policy-store.js';
import { databaseKind } from '../helpers/database.js';
import { eventually, postGraphQL } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/stack.js';

type Data = Record<string, any>;
/** A response path; `'*'` stands for every item of a list. */
type Path = readonly (string | number)[];

interface ClientError {
  message: string;
  path?: readonly (string | number)[];
  extensions?: Record<string, any>;
}

/** The request a client made, as it made it (its own additions included: Apollo's `__typename`, the v0.2 handler's labels), and the answer's media type. */
interface Sent {
  query: string;
  variables: Data | undefined;
  accept: string;
  contentType: string;
}

/** What a client showed of one query: its data after each payload it read, in order, and where it ended. */
interface Reading {
  steps: Data[];
  data: Data | null | undefined;
  errors: readonly ClientError[];
  sent: Sent;
  /** Apollo Client's `dataState` at each step (other clients have none). */
  states?: string[];
}

interface Client {
  name: string;
  /** The Accept header the client sends for a query with `@defer` (its own, not ours). */
  asks: RegExp;
  /** The format that Accept gets: the router's Content-Type must name it. */
  answeredAs: RegExp;
  read(query: string, variables?: Data): Promise<Reading>;
}

/** A fetch that remembers each request (query, variables, Accept) and the response's Content-Type. */
function recordingFetch(): { fetch: typeof fetch; sent: Sent[] } {
  const sent: Sent[] = [];
  return {
    sent,
    fetch: async function recordedFetch(input, init) {
      const body = JSON.parse(String(init?.body ?? '{}')) as { query: string; variables?: Data };
      const response = await fetch(input, init);
      sent.push({ query: body.query, variables: body.variables, accept: new Headers(init?.headers).get('accept') ?? '', contentType: response.headers.get('content-type') ?? '' });
      return response;
    },
  };
}

/** A deep copy through JSON: a client's live object (graphql-tools mutates one result in place), GraphQLError instances as their JSON. */
function snapshot<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/**
 * Apollo Client 4 with the incremental handler of one format (the handler adds its media type to
 * Accept). Reads through `watchQuery` until the query is no longer loading: one emission per
 * payload (`dataState: 'streaming'`), the last one `complete`. A fresh client and cache per query,
 * so no answer is read from an earlier one.
 */
function apolloClient(name: string, handler: () => Incremental.Handler<any>, format: RegExp): Client {
  return {
    name,
    asks: new RegExp(`^multipart/mixed;${format.source}`),
    answeredAs: new RegExp(`^multipart/mixed;.*${format.source}`),
    async read(query, variables) {
      const recorder = recordingFetch();
      const client = new ApolloClient({ link: new HttpLink({ uri: stack.router.url, fetch: recorder.fetch }), cache: new InMemoryCache(), incrementalHandler: handler() });
      try {
        const results = await untilSettled(client.watchQuery<Data>({ query: gql(query), variables, errorPolicy: 'all' }));
        const withData = results.filter((result) => result.data !== undefined);
        const last = results.at(-1)!;
        if (last.error && !CombinedGraphQLErrors.is(last.error)) throw last.error;
        return {
          steps: withData.map((result) => snapshot(result.data as Data)),
          states: withData.map((result) => result.dataState),
          data: snapshot(last.data as Data | undefined),
          errors: last.error ? snapshot(last.error.errors) : [],
          sent: recorder.sent[0]!,
        };
      } finally {
        client.stop();
      }
    },
  };
}

/** Every result an ObservableQuery emits until one is no longer loading (the stream has ended). */
function untilSettled(observable: ObservableQuery<Data>): Promise<ObservableQuery.Result<Data>[]> {
  return new Promise((resolve, reject) => {
    const results: ObservableQuery.Result<Data>[] = [];
    let settled = false;
    const subscription = observable.subscribe({
      next(result) {
        results.push(result);
        if (result.loading || settled) return;
        settled = true;
        queueMicrotask(() => subscription.unsubscribe());
        resolve(results);
      },
      error: reject,
    });
  });
}

/** graphql-tools' HTTP executor (what gateways built on it use): it asks for `multipart/mixed` and yields its merged result after each payload. */
const graphqlToolsExecutor: Client = {
  name: "graphql-tools' HTTP executor (multipart/mixed)",
  asks: /multipart\/mixed(,|$)/,
  answeredAs: /^multipart\/mixed;.*deferSpec=20220824/,
  async read(query, variables) {
    const recorder = recordingFetch();
    const executor = buildHTTPExecutor({ endpoint: stack.router.url, fetch: recorder.fetch });
    const result = await executor({ document: parse(query), variables });
    const results: Data[] = [];
    if (Symbol.asyncIterator in result) for await (const merged of result) results.push(snapshot(merged));
    else results.push(snapshot(result));
    const last = results.at(-1)!;
    return { steps: results.map((step) => step.data), data: last.data, errors: last.errors ?? [], sent: recorder.sent[0]! };
  },
};

/** graphql-sse's client in distinct connections mode (one POST per operation, `Accept: text/event-stream`); it yields the raw payloads, merged here by graphql-tools. */
const graphqlSseClient: Client = {
  name: 'graphql-sse (text/event-stream)',
  asks: /^text\/event-stream$/,
  answeredAs: /^text\/event-stream/,
  async read(query, variables) {
    const recorder = recordingFetch();
    const client = createClient({ url: stack.router.url, fetchFn: recorder.fetch, retryAttempts: 0 });
    try {
      const merged: Data = {};
      const steps: Data[] = [];
      for await (const payload of client.iterate({ query, variables })) {
        mergeIncrementalResult({ incrementalResult: payload as Data, executionResult: merged });
        steps.push(snapshot(merged.data));
      }
      return { steps, data: merged.data, errors: snapshot(merged.errors ?? []), sent: recorder.sent[0]! };
    } finally {
      client.dispose();
    }
  },
};

const CLIENTS: Client[] = [
  apolloClient('Apollo Client 4, deferSpec=20220824 (Defer20220824Handler)', () => new Defer20220824Handler(), /deferSpec=20220824/),
  apolloClient('Apollo Client 4, incrementalSpec=v0.2 (GraphQL17Alpha9Handler)', () => new GraphQL17Alpha9Handler(), /incrementalSpec=v0\.2/),
  graphqlToolsExecutor,
  graphqlSseClient,
];

/** The query without its `@defer` directives (and the variables only their `if` used): what a client that reads no incremental format would ask. */
function withoutDefer(query: string): string {
  const stripped = visit(parse(query), { Directive: (node) => (node.name.value === 'defer' ? null : undefined) });
  const used = new Set<string>();
  visit(stripped, { VariableDefinition: () => false, Variable: (node) => void used.add(node.name.value) });
  return print(visit(stripped, { VariableDefinition: (node) => (used.has(node.variable.name.value) ? undefined : null) }));
}

/** The whole answer of the request a client made, with its `@defer`s taken out, as one JSON answer. */
async function wholeAnswerOf(sent: Sent) {
  const { body } = await postGraphQL(stack.router.url, withoutDefer(sent.query), { variables: sent.variables, accept: 'application/json' });
  return body;
}

/** `value` without the field at `path` (`'*'`: in every item of a list): what an answer lacks before a deferred part arrives. */
function without(value: unknown, path: Path): unknown {
  if (value === null || typeof value !== 'object' || path.length === 0) return value;
  const [head, ...rest] = path;
  if (Array.isArray(value)) return head === '*' ? value.map((item) => without(item, rest)) : value;
  const object = value as Data;
  if (!(head! in object)) return object;
  if (rest.length === 0) return Object.fromEntries(Object.entries(object).filter(([key]) => key !== head));
  return { ...object, [head!]: without(object[head!], rest) };
}

/** An error as the assertions compare it: where it stands and what code it has. */
function located(errors: readonly ClientError[] | undefined) {
  return (errors ?? []).map((error) => ({ path: error.path, code: error.extensions?.code }));
}

interface DeferCase {
  name: string;
  query: string;
  variables?: Data;
  /** The fields the first payload lacks: those of every deferred fragment. */
  deferred: Path[];
}

/** Valid against the demo supergraph (schema/*.graphql): product owns Product and its list, reviews adds Product.reviews and Review, inventory adds Product.inventory. */
const CASES: DeferCase[] = [
  { name: 'a deferred root field', query: '{ ... @defer { product(id: "2") { name } } }', deferred: [['product']] },
  { name: 'a deferred root field of another subgraph beside a required one', query: '{ products(first: 2) { id } ... @defer { review(id: "r-1") { id rating } } }', deferred: [['review']] },
  { name: 'fields of a nested object', query: '{ review(id: "r-1") { id product { id ... @defer { name price } } } }', deferred: [['review', 'product', 'name'], ['review', 'product', 'price']] },
  {
    name: 'entities of two other subgraphs (product → reviews, product → inventory)',
    query: '{ product(id: "2") { id name ... @defer { reviews { id rating author } } ... @defer { inventory { inStock warehouse } } } }',
    deferred: [['product', 'reviews'], ['product', 'inventory']],
  },
  {
    name: 'an entity chain under a deferred fragment (review → product → inventory)',
    query: '{ review(id: "r-3") { id body ... @defer { product { name price inventory { inStock } } } } }',
    deferred: [['review', 'product']],
  },
  {
    name: 'a fragment in each item of a list of products',
    query: '{ products(first: 4) { id name ... @defer { reviews { id rating } inventory { inStock } } } }',
    deferred: [['products', '*', 'reviews'], ['products', '*', 'inventory']],
  },
  {
    name: 'a fragment in each item of a list of reviews',
    query: '{ product(id: "1") { id reviews { id ... @defer { body author product { name } } } } }',
    deferred: [['product', 'reviews', '*', 'body'], ['product', 'reviews', '*', 'author'], ['product', 'reviews', '*', 'product']],
  },
  {
    name: 'labelled fragments',
    query: '{ product(id: "3") { id ... @defer(label: "reviews") { reviews { rating } } ... @defer(label: "stock") { inventory { inStock } } } }',
    deferred: [['product', 'reviews'], ['product', 'inventory']],
  },
  {
    name: 'a nested @defer',
    query: '{ product(id: "2") { id ... @defer { name reviews { id ... @defer { body author } } } } }',
    deferred: [['product', 'name'], ['product', 'reviews']],
  },
  {
    name: 'a deferred fragment spread',
    query: '{ product(id: "4") { id ...Stock @defer } } fragment Stock on Product { price inventory { inStock } }',
    deferred: [['product', 'price'], ['product', 'inventory']],
  },
  {
    name: '@defer(if: $defer) with $defer true',
    query: 'query Page($defer: Boolean!) { product(id: "5") { id ... @defer(if: $defer) { name reviews { rating } } } }',
    variables: { defer: true },
    deferred: [['product', 'name'], ['product', 'reviews']],
  },
];

/** A deferred section of the reviews subgraph, nullable: its failure nulls `reviews` only. */
const REVIEWS_LATER = 'query ReviewsLater { product(id: "2") { id name ... @defer { reviews { id rating } } } }';
/** The same under the operation whose deferred parts have a 200 ms budget (policy set in beforeAll). */
const SLOW_REVIEWS = 'query SlowReviews { product(id: "2") { id name ... @defer { reviews { id rating } } } }';
const DEFER_BUDGET_MS = 200;
/** The reviews subgraph's delay in the deadline cases: far beyond the budget, so the cut is plain. */
const REVIEWS_DELAY_MS = 3_000;
/**
 * A deferred part that cannot be answered: `name` is `String!`, so when the product subgraph fails
 * the part has no nullable field to absorb it and arrives as `data: null` (incremental delivery RFC:
 * a deferred fragment is a null boundary; the `product` delivered at first stays).
 */
const NAME_LATER = '{ review(id: "r-1") { id body product { id ... @defer { name price } } } }';

// One stack for the file: every describe below reads from it.
let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
  await setPolicy(stack.db, 'SlowReviews', { deferDeadlineMs: DEFER_BUDGET_MS });
  await eventually(() => stack.router.policies.resolve('SlowReviews').deferDeadlineMs === DEFER_BUDGET_MS, { what: 'the SlowReviews policy to reach the router' });
});
afterAll(async () => {
  await stack?.close();
});
afterEach(() => {
  for (const { subgraph } of Object.values(stack.subgraphs)) subgraph.faults.set(DEFAULT_FAULT_SETTINGS);
});

describe(`@defer read by real clients (${databaseKind} database)`, () => {
  describe.each(CLIENTS)('$name', (client) => {
    it.each(CASES)('$name: first without the deferred fields, last equal to the query without @defer', async ({ query, variables, deferred }) => {
      const reading = await client.read(query, variables);
      expect(reading.sent.accept).toMatch(client.asks);
      expect(reading.sent.contentType).toMatch(client.answeredAs);
      const whole = await wholeAnswerOf(reading.sent);
      expect(whole.errors).toBeUndefined();
      expect(reading.steps.length).toBeGreaterThanOrEqual(2);
      expect(reading.steps[0]).toEqual(deferred.reduce<unknown>(without, whole.data));
      expect(reading.data).toEqual(whole.data);
      expect(reading.errors).toEqual([]);
      if (reading.states) {
        expect(reading.states[0]).toBe('streaming');
        expect(reading.states.at(-1)).toBe('complete');
      }
    });

    it('@defer(if: false), written or by a variable: one answer, equal to the query without @defer', async () => {
      for (const [query, variables] of [
        ['{ product(id: "2") { id ... @defer(if: false) { name reviews { rating } } } }', undefined],
        ['query Page($defer: Boolean!) { product(id: "5") { id ... @defer(if: $defer) { name reviews { rating } } } }', { defer: false }],
      ] as const) {
        const reading = await client.read(query, variables);
        const whole = await wholeAnswerOf(reading.sent);
        expect(reading.steps).toEqual([whole.data]);
        expect(reading.data).toEqual(whole.data);
        expect(reading.data?.product.reviews.length).toBeGreaterThan(0);
      }
    });

    it('a deferred section whose subgraph fails: the rest arrives first, the section ends null with its error at its path', async () => {
      stack.subgraphs.reviews.subgraph.faults.set({ mode: 'error' });
      const reading = await client.read(REVIEWS_LATER);
      // The same failure without @defer: the same data and the same errors, only later.
      const whole = await wholeAnswerOf(reading.sent);
      expect(reading.steps[0]).toEqual(without(whole.data, ['product', 'reviews']));
      expect(reading.data).toEqual(whole.data);
      expect(reading.data?.product).toMatchObject({ id: '2', name: expect.any(String), reviews: null });
      expect(located(reading.errors)).toEqual([{ path: ['product', 'reviews'], code: 'SUBGRAPH_ERROR' }]);
      expect(located(reading.errors)).toEqual(located(whole.errors));
    });

    it('a deferred part whose required field fails: the part is dropped with its error, what came before stays', async () => {
      stack.subgraphs.product.subgraph.faults.set({ mode: 'error' });
      const reading = await client.read(NAME_LATER);
      expect(reading.steps[0]?.review).toMatchObject({ id: 'r-1', body: expect.any(String), product: { id: '1' } });
      // Unlike the query without @defer (where `review.product` is null), the part is its own null boundary.
      expect(reading.data?.review.product).not.toHaveProperty('name');
      expect(reading.data?.review.product).toMatchObject({ id: '1' });
      expect(located(reading.errors)).toEqual([{ path: ['review', 'product', 'name'], code: 'SUBGRAPH_ERROR' }]);
    });

    it('a deferred part cut by its budget (deferDeadlineMs): null with DEADLINE_EXCEEDED, and the stream ends', async () => {
      stack.subgraphs.reviews.subgraph.faults.set({ latencyMs: REVIEWS_DELAY_MS });
      const reading = await client.read(SLOW_REVIEWS);
      expect(reading.steps[0]?.product).toMatchObject({ id: '2', name: expect.any(String) });
      expect(reading.steps[0]?.product).not.toHaveProperty('reviews');
      expect(reading.data?.product).toMatchObject({ id: '2', name: expect.any(String), reviews: null });
      expect(located(reading.errors)).toEqual([{ path: ['product', 'reviews'], code: 'DEADLINE_EXCEEDED' }]);
    });
  });
});

interface Wire {
  status: number;
  contentType: string;
  /** Each payload as the server wrote it. */
  payloads: Data[];
  /** When each payload was read, in ms from the request. */
  at: number[];
  /** When the body ended, in ms from the request. */
  endedAt: number;
}

/** One request whose multipart body meros splits into payloads (a body that is not multipart: its one JSON answer). */
async function readWire(query: string, options: { accept: string; variables?: Data; headers?: Record<string, string> }): Promise<Wire> {
  const started = performance.now();
  const response = await fetch(stack.router.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: options.accept, ...options.headers },
    body: JSON.stringify({ query, variables: options.variables }),
  });
  const payloads: Data[] = [];
  const at: number[] = [];
  const parts = await meros<Data>(response);
  if (Symbol.asyncIterator in parts) {
    for await (const part of parts) {
      if (!part.json) throw new Error(`a part that is not JSON: ${String(part.body)}`);
      payloads.push(part.body);
      at.push(performance.now() - started);
    }
  } else {
    payloads.push((await parts.json()) as Data);
    at.push(performance.now() - started);
  }
  return { status: response.status, contentType: response.headers.get('content-type') ?? '', payloads, at, endedAt: performance.now() - started };
}

/** Every `incremental` entry of a stream, in the order they came, with the index of the payload that carried it. */
function incrementalEntries(wire: Wire): (Data & { payload: number })[] {
  return wire.payloads.flatMap((payload, index) => ((payload.incremental ?? []) as Data[]).map((entry) => ({ ...entry, payload: index })));
}

const DEFER_20220824 = 'multipart/mixed;deferSpec=20220824';
const INCREMENTAL_V02 = 'multipart/mixed;incrementalSpec=v0.2';

describe(`@defer on the wire, split by meros (${databaseKind} database)`, () => {
  it('names the format in Content-Type, and only the last payload says hasNext: false', async () => {
    for (const [accept, contentType] of [
      [DEFER_20220824, 'multipart/mixed; boundary="-"; deferSpec=20220824'],
      // GraphiQL's fetcher names no format: Apollo's is the default.
      ['multipart/mixed', 'multipart/mixed; boundary="-"; deferSpec=20220824'],
      [INCREMENTAL_V02, 'multipart/mixed; boundary="-"; incrementalSpec=v0.2'],
    ]) {
      const wire = await readWire('{ product(id: "2") { id ... @defer { name } ... @defer { reviews { id ... @defer { body } } } } }', { accept });
      expect(wire.status).toBe(200);
      expect(wire.contentType).toBe(contentType);
      expect(wire.payloads.length).toBeGreaterThanOrEqual(3);
      expect(wire.payloads.map((payload) => payload.hasNext)).toEqual([...wire.payloads.slice(1).map(() => true), false]);
    }
  });

  it('delivers a fragment in a list once per item, at its index', async () => {
    const query = '{ products(first: 4) { id ... @defer { reviews { id } } } }';
    const items = [0, 1, 2, 3].map((index) => ['products', index]);
    // Items may be delivered in any order (each when its fetches are done); each exactly once.
    const sorted = (list: unknown[]) => list.map((value) => JSON.stringify(value)).sort();
    const apollo = await readWire(query, { accept: DEFER_20220824 });
    expect(sorted(incrementalEntries(apollo).map((entry) => entry.path))).toEqual(sorted(items));

    const v02 = await readWire(query, { accept: INCREMENTAL_V02 });
    const pending = v02.payloads[0]!.pending as Data[];
    expect(pending.map((entry) => entry.path)).toEqual(items);
    const ids = pending.map((entry) => entry.id);
    expect(new Set(ids).size).toBe(4);
    expect(sorted(incrementalEntries(v02).map((entry) => entry.id))).toEqual(sorted(ids));
    expect(sorted(v02.payloads.flatMap((payload) => (payload.completed ?? []) as Data[]).map((entry) => entry.id))).toEqual(sorted(ids));
  });

  it('carries each label with its part', async () => {
    const query = '{ product(id: "3") { id ... @defer(label: "reviews") { reviews { rating } } ... @defer(label: "stock") { inventory { inStock } } } }';
    const apollo = await readWire(query, { accept: DEFER_20220824 });
    const byLabel = Object.fromEntries(incrementalEntries(apollo).map((entry) => [entry.label, entry]));
    expect(byLabel.reviews).toMatchObject({ path: ['product'], data: { reviews: expect.any(Array) } });
    expect(byLabel.stock).toMatchObject({ path: ['product'], data: { inventory: { inStock: expect.any(Number) } } });

    const v02 = await readWire(query, { accept: INCREMENTAL_V02 });
    const pending = v02.payloads[0]!.pending as Data[];
    expect(pending.map(({ path, label }) => ({ path, label }))).toEqual([
      { path: ['product'], label: 'reviews' },
      { path: ['product'], label: 'stock' },
    ]);
    const idOf = (label: string) => pending.find((entry) => entry.label === label)!.id;
    const dataOf = Object.fromEntries(incrementalEntries(v02).map((entry) => [entry.id, entry.data]));
    expect(dataOf[idOf('reviews')]).toEqual({ reviews: expect.any(Array) });
    expect(dataOf[idOf('stock')]).toEqual({ inventory: { inStock: expect.any(Number) } });
  });

  it('announces and delivers a nested part after the part around it', async () => {
    const query = '{ product(id: "2") { id ... @defer { reviews { id ... @defer { body } } } } }';
    const apollo = incrementalEntries(await readWire(query, { accept: DEFER_20220824 }));
    const outer = apollo.findIndex((entry) => entry.path.length === 1);
    const inner = apollo.map((entry, index) => ({ entry, index })).filter(({ entry }) => entry.path.length === 3);
    expect(apollo[outer]!.path).toEqual(['product']);
    expect(inner.map(({ entry }) => entry.path)).toEqual([
      ['product', 'reviews', 0],
      ['product', 'reviews', 1],
    ]);
    for (const { index } of inner) expect(index).toBeGreaterThan(outer);

    const v02 = await readWire(query, { accept: INCREMENTAL_V02 });
    expect(v02.payloads[0]!.pending).toEqual([{ id: '0', path: ['product'] }]);
    // The payload completing the outer part announces the inner ones it found.
    const completingOuter = v02.payloads.find((payload) => (payload.completed as Data[] | undefined)?.some((entry) => entry.id === '0'))!;
    expect((completingOuter.pending as Data[]).map((entry) => entry.path)).toEqual([
      ['product', 'reviews', 0],
      ['product', 'reviews', 1],
    ]);
  });

  it('a failed deferred section: the initial payload is whole, the part carries its error at its path, completeness names what is missing', async () => {
    stack.subgraphs.reviews.subgraph.faults.set({ mode: 'error' });
    const error = { path: ['product', 'reviews'], message: 'reviews subgraph failed (injected fault)', extensions: expect.objectContaining({ code: 'SUBGRAPH_ERROR', subgraph: 'reviews' }) };
    const missing = { complete: false, missing: [{ path: ['product', 'reviews'], subgraph: 'reviews', code: 'SUBGRAPH_ERROR' }] };
    for (const accept of [DEFER_20220824, INCREMENTAL_V02]) {
      const wire = await readWire(REVIEWS_LATER, { accept });
      const [first, ...later] = wire.payloads;
      expect(first).toMatchObject({ data: { product: { id: '2', name: expect.any(String) } }, hasNext: true, extensions: { completeness: { complete: true, missing: [] } } });
      expect(first).not.toHaveProperty('errors');
      expect(later.at(-1)).toMatchObject({ hasNext: false, extensions: { completeness: missing } });
      const [entry, ...others] = incrementalEntries(wire);
      expect(others).toEqual([]);
      expect(entry).toMatchObject({ data: { reviews: null }, errors: [expect.objectContaining(error)] });
      if (accept === DEFER_20220824) expect(entry!.path).toEqual(['product']);
      else expect(later.at(-1)!.completed).toEqual([{ id: entry!.id }]);
    }
  });

  it('a deferred part whose required field fails: data null (deferSpec=20220824) or completed with its errors (v0.2)', async () => {
    stack.subgraphs.product.subgraph.faults.set({ mode: 'error' });
    const error = expect.objectContaining({ path: ['review', 'product', 'name'], extensions: expect.objectContaining({ code: 'SUBGRAPH_ERROR', subgraph: 'product' }) });

    const apollo = await readWire(NAME_LATER, { accept: DEFER_20220824 });
    expect(apollo.payloads[0]!.data).toEqual({ review: { id: 'r-1', body: expect.any(String), product: { id: '1' } } });
    expect(incrementalEntries(apollo)).toEqual([{ data: null, path: ['review', 'product'], errors: [error], payload: 1 }]);

    const v02 = await readWire(NAME_LATER, { accept: INCREMENTAL_V02 });
    const [{ id }] = v02.payloads[0]!.pending as Data[];
    expect(incrementalEntries(v02)).toEqual([]);
    expect(v02.payloads.at(-1)).toMatchObject({ completed: [{ id, errors: [error] }], hasNext: false });
    expect(v02.payloads.at(-1)!.extensions.completeness).toMatchObject({ complete: false, missing: [expect.objectContaining({ path: ['review', 'product', 'name'], subgraph: 'product' })] });
  });

  it('a deferred part past its budget arrives null with DEADLINE_EXCEEDED; neither the first payload nor the end waits for the slow subgraph', async () => {
    const reviews = stack.subgraphs.reviews.subgraph;
    reviews.faults.set({ latencyMs: REVIEWS_DELAY_MS });
    reviews.stats.reset();
    const wire = await readWire(SLOW_REVIEWS, { accept: DEFER_20220824 });
    expect(wire.payloads).toHaveLength(2);
    expect(wire.payloads[0]).toMatchObject({ data: { product: { id: '2', name: expect.any(String) } }, hasNext: true, extensions: { completeness: { complete: true } } });
    expect(wire.payloads[1]).toMatchObject({
      incremental: [{ data: { reviews: null }, path: ['product'], errors: [expect.objectContaining({ path: ['product', 'reviews'], extensions: expect.objectContaining({ code: 'DEADLINE_EXCEEDED', subgraph: 'reviews' }) })] }],
      hasNext: false,
      extensions: { completeness: { complete: false, missing: [{ path: ['product', 'reviews'], subgraph: 'reviews', code: 'DEADLINE_EXCEEDED' }] } },
    });
    // The only timed assertions of this file: both come long before the reviews subgraph would have answered.
    expect(wire.at[0]).toBeLessThan(REVIEWS_DELAY_MS);
    expect(wire.endedAt).toBeLessThan(REVIEWS_DELAY_MS);
    await eventually(() => reviews.stats.snapshot().aborted >= 1, { what: 'the reviews subgraph to see its call closed' });
  });

  it('the request deadline bounds the first payload only: a deferred part may take longer', async () => {
    stack.subgraphs.reviews.subgraph.faults.set({ latencyMs: 600 });
    // 300 ms for the request, the default 10 s for its deferred parts.
    const wire = await readWire(REVIEWS_LATER, { accept: DEFER_20220824, headers: { 'switchyard-deadline-ms': '300' } });
    expect(incrementalEntries(wire)).toEqual([{ data: { reviews: [expect.objectContaining({ id: 'r-8' }), expect.objectContaining({ id: 'r-9' })] }, path: ['product'], payload: 1 }]);
    expect(wire.payloads.at(-1)!.extensions.completeness).toEqual({ complete: true, missing: [] });
  });

  it('@defer(if: false): one payload, nothing incremental', async () => {
    for (const accept of [DEFER_20220824, INCREMENTAL_V02]) {
      const wire = await readWire('{ product(id: "2") { id ... @defer(if: false) { name } } }', { accept });
      expect(wire.payloads).toEqual([{ data: { product: { id: '2', name: expect.any(String) } } }]);
    }
  });

  // When no deferred fragment applies (its parent is null or an empty list, or `@skip` leaves it out), the first
  // payload is the last: Apollo Client would otherwise stay `loading` forever.
  it('a deferred fragment that applies nowhere: the stream still ends with hasNext: false', async () => {
    for (const query of [
      '{ products(first: 0) { id ... @defer { name } } }',
      '{ product(id: "no-such-product") { id ... @defer { name } } }',
      '{ product(id: "2") { id ... @defer @skip(if: true) { name } } }',
    ]) {
      const whole = await postGraphQL(stack.router.url, withoutDefer(query), { accept: 'application/json' });
      for (const accept of [DEFER_20220824, INCREMENTAL_V02]) {
        const wire = await readWire(query, { accept });
        expect(wire.payloads[0]!.data).toEqual(whole.body.data);
        expect(incrementalEntries(wire)).toEqual([]);
        expect(wire.payloads.at(-1)!.hasNext ?? false).toBe(false);
      }
    }
  });

  it('server-sent events in graphql-js 17 format (text/event-stream;incrementalSpec=v0.2), read by graphql-sse', async () => {
    // graphql-sse always asks for plain text/event-stream; its fetch names the format, as a client of this format would.
    const asksV02: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), accept: 'text/event-stream;incrementalSpec=v0.2' } });
    const client = createClient({ url: stack.router.url, fetchFn: asksV02, retryAttempts: 0 });
    try {
      const payloads: Data[] = [];
      for await (const payload of client.iterate({ query: REVIEWS_LATER })) payloads.push(payload as Data);
      expect(payloads).toEqual([
        expect.objectContaining({ data: { product: { id: '2', name: expect.any(String) } }, pending: [{ id: '0', path: ['product'] }], hasNext: true }),
        expect.objectContaining({ incremental: [{ id: '0', data: { reviews: expect.any(Array) } }], completed: [{ id: '0' }], hasNext: false }),
      ]);
    } finally {
      client.dispose();
    }
  });
});

describe(`a client that reads no incremental format (${databaseKind} database)`, () => {
  it.each(['application/json', 'application/graphql-response+json', '*/*'])('%s: one whole answer, equal to the query without @defer', async (accept) => {
    for (const { query, variables } of CASES) {
      const deferred = await postGraphQL(stack.router.url, query, { variables, accept });
      const whole = await postGraphQL(stack.router.url, withoutDefer(query), { variables, accept });
      expect(deferred.status).toBe(200);
      expect(deferred.headers.get('content-type')).toMatch(accept === '*/*' ? /^application\/(graphql-response\+)?json/ : new RegExp(`^${accept.replace('+', '\\+')}`));
      expect(deferred.body).not.toHaveProperty('hasNext');
      expect(deferred.body.data).toEqual(whole.body.data);
      expect(deferred.body.errors).toBeUndefined();
    }
  });
});
