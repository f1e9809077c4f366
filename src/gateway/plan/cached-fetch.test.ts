import { describe, expect, it, vi } from 'vitest';
import { GraphQLError, type ExecutionResult } from 'graphql';
import type { Fetch, FetchStep } from './build-plan.js';
import { withSectionCache, type FetchSections } from './cached-fetch.js';
import type { SectionRead, UsablePart } from './section-cache.js';
import type { FetchAnswer, FetchCall, FetchFn } from './subgraph-fetch.js';

type Data = Record<string, unknown>;

const step = { entityType: 'Product', representationsVariable: 'representations' } as unknown as FetchStep;
const rootStep = {} as unknown as FetchStep;
const entityFetch = { subgraph: 'inventory', graph: 'INVENTORY', steps: [step] } as unknown as Fetch;
const rootFetch = { subgraph: 'products', graph: 'PRODUCTS', steps: [rootStep] } as unknown as Fetch;
const part = { policy: { maxAgeMs: 60_000 }, scopeKey: 'public' } as unknown as UsablePart;
const product = (upc: string): Data => ({ __typename: 'Product', upc });

/** A request's cache over a map of key to what it holds, recording writes and stale notes. */
function fakeSections(held: Record<string, SectionRead>, options: { async?: boolean } = {}) {
  const writes: (readonly [string, unknown])[][] = [];
  const stale: { count: number; oldestMs: number; failureCode: string }[] = [];
  const sections: FetchSections = {
    usable: () => part,
    keyOf: (_fetch, _part, representation) => (representation ? String(representation.upc) : 'root'),
    read: (_fetch, _step, _part, keys) => {
      const reads = keys.map((key) => held[key] ?? {});
      return options.async ? Promise.resolve(reads) : reads;
    },
    write: (_part, entries) => void writes.push([...entries]),
    noteFetched: () => undefined,
    noteStale: (_fetch, _step, count, oldestMs, failureCode) => void stale.push({ count, oldestMs, failureCode }),
    staleAllowed: () => true,
  };
  return { sections, writes, stale };
}

function entityCall(...upcs: string[]): FetchCall {
  return { fetch: entityFetch, variables: {}, lookups: [{ step, representations: upcs.map(product) }] };
}

/** A subgraph that answers with `answer` and records what it was sent. */
function subgraph(answer: (call: FetchCall) => ExecutionResult) {
  const sent: FetchCall[] = [];
  const next: FetchFn = vi.fn(async (call: FetchCall) => {
    sent.push(call);
    return answer(call);
  });
  return { next, sent };
}

const unavailable = (path?: (string | number)[]) => new GraphQLError('subgraph "inventory" is unavailable', { path, extensions: { code: 'SUBGRAPH_UNAVAILABLE' } });
const sentUpcs = (call: FetchCall) => call.lookups![0].representations.map((r) => r.upc);
const pathsOf = (answer: FetchAnswer) => answer.errors?.map((error) => error.path);

describe('the section cache around a fetch', () => {
  it('sends only the misses and answers in the runner order, storing what came back', async () => {
    const { sections, writes } = fakeSections({ b: { fresh: { upc: 'b', inStock: true } } });
    const { next, sent } = subgraph((call) => ({ data: { _entities: call.lookups![0].representations.map((r) => ({ upc: r.upc, inStock: false })) } }));
    const answer = await withSectionCache(sections)(next)(entityCall('a', 'b', 'c'));
    expect(sent.map(sentUpcs)).toEqual([['a', 'c']]);
    const entities = (answer.data as Data)._entities as unknown[];
    expect(entities[0]).toEqual({ upc: 'a', inStock: false });
    expect(entities[1]).toBeUndefined();
    expect(entities[2]).toEqual({ upc: 'c', inStock: false });
    expect(answer.settled?.get(step)).toEqual(new Map([[1, { upc: 'b', inStock: true }]]));
    expect(writes).toEqual([[['a', { upc: 'a', inStock: false }], ['c', { upc: 'c', inStock: false }]]]);
  });

  it('moves error paths from the index sent to the runner index, and stores nothing after an error', async () => {
    const { sections, writes } = fakeSections({ a: { fresh: { upc: 'a' } } });
    const { next } = subgraph(() => ({
      data: { _entities: [{ upc: 'b' }, null] },
      errors: [new GraphQLError('no such product', { path: ['_entities', 1, 'inStock'], extensions: { code: 'NOT_FOUND' } }), new GraphQLError('pathless')],
    }));
    const answer = await withSectionCache(sections)(next)(entityCall('a', 'b', 'c'));
    expect(pathsOf(answer)).toEqual([['_entities', 2, 'inStock'], undefined]);
    expect(answer.errors![0].message).toBe('no such product');
    expect(answer.errors![0].extensions).toEqual({ code: 'NOT_FOUND' });
    expect(writes).toEqual([]);
  });

  it('answers from memory without a promise and without calling the subgraph when every entity is fresh', () => {
    const { sections } = fakeSections({ a: { fresh: { upc: 'a' } }, b: { fresh: null } });
    const { next } = subgraph(() => ({ data: null }));
    const answer = withSectionCache(sections)(next)(entityCall('a', 'b'));
    expect(answer).not.toBeInstanceOf(Promise);
    expect(next).not.toHaveBeenCalled();
    expect((answer as FetchAnswer).settled?.get(step)).toEqual(new Map<number, unknown>([[0, { upc: 'a' }], [1, null]]));
  });

  it('waits for a store that must ask elsewhere, with the same answer', async () => {
    const { sections } = fakeSections({ a: { fresh: { upc: 'a' } } }, { async: true });
    const { next } = subgraph(() => ({ data: null }));
    const answer = withSectionCache(sections)(next)(entityCall('a'));
    expect(answer).toBeInstanceOf(Promise);
    expect((await answer).settled?.get(step)).toEqual(new Map([[0, { upc: 'a' }]]));
    expect(next).not.toHaveBeenCalled();
  });

  it('stands stale copies in for the entities that have one when the subgraph could not answer, dropping their errors', async () => {
    const { sections, writes, stale } = fakeSections({
      a: { stale: { json: '{"upc":"a","inStock":true}', ageMs: 5_000 } },
      b: { fresh: { upc: 'b' } },
      d: { stale: { json: '{"upc":"d"}', ageMs: 9_000 } },
      e: { stale: { json: 'not json', ageMs: 1_000 } },
    });
    const { next, sent } = subgraph((call) => ({ data: null, errors: [...call.lookups![0].representations.map((_, index) => unavailable(['_entities', index])), unavailable()] }));
    const answer = await withSectionCache(sections)(next)(entityCall('a', 'b', 'c', 'd', 'e'));
    expect(sent.map(sentUpcs)).toEqual([['a', 'c', 'd', 'e']]);
    // a and d answered stale: their errors go; c (no copy) and e (unreadable copy) keep theirs, at the runner's indices.
    expect(pathsOf(answer)).toEqual([['_entities', 2], ['_entities', 4], undefined]);
    expect(answer.settled?.get(step)).toEqual(
      new Map<number, unknown>([
        [1, { upc: 'b' }],
        [0, { upc: 'a', inStock: true }],
        [3, { upc: 'd' }],
      ]),
    );
    expect(stale).toEqual([{ count: 2, oldestMs: 9_000, failureCode: 'SUBGRAPH_UNAVAILABLE' }]);
    expect(writes).toEqual([]);
    // No answer without data: the errors say what failed.
    expect((answer.data as Data)._entities).toEqual([]);
  });

  it('keeps stale copies out when the subgraph answered with its own error', async () => {
    const { sections, stale } = fakeSections({ a: { stale: { json: '{"upc":"a"}', ageMs: 5_000 } } });
    const { next } = subgraph(() => ({ data: { _entities: [null] }, errors: [new GraphQLError('boom', { path: ['_entities', 0] })] }));
    const answer = await withSectionCache(sections)(next)(entityCall('a'));
    expect(pathsOf(answer)).toEqual([['_entities', 0]]);
    expect(answer.settled?.get(step)).toBeUndefined();
    expect(stale).toEqual([]);
  });

  it('answers a root fetch whole: from memory at once, or fetched and stored, or stale after a failure', async () => {
    const fresh = fakeSections({ root: { fresh: { topProducts: [] } } });
    const { next } = subgraph(() => ({ data: { topProducts: [{ upc: 'a' }] } }));
    const hit = withSectionCache(fresh.sections)(next)({ fetch: rootFetch, variables: {} });
    expect(hit).toEqual({ data: { topProducts: [] } });
    expect(next).not.toHaveBeenCalled();

    const miss = fakeSections({});
    expect(await withSectionCache(miss.sections)(next)({ fetch: rootFetch, variables: {} })).toEqual({ data: { topProducts: [{ upc: 'a' }] } });
    expect(miss.writes).toEqual([[['root', { topProducts: [{ upc: 'a' }] }]]]);

    const old = fakeSections({ root: { stale: { json: '{"topProducts":[]}', ageMs: 3_000 } } });
    const failing = subgraph(() => ({ errors: [unavailable()] }));
    expect(await withSectionCache(old.sections)(failing.next)({ fetch: rootFetch, variables: {} })).toEqual({ data: { topProducts: [] } });
    expect(old.stale).toEqual([{ count: 1, oldestMs: 3_000, failureCode: 'SUBGRAPH_UNAVAILABLE' }]);
    expect(old.writes).toEqual([]);
  });
});
