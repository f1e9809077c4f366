// The section store in memory alone: an LRU bounded in bytes, entries dropped past maxAge + stale.
import { describe, expect, it, vi } from 'vitest';
import { createSectionStore, type CachedSection } from './section-store.js';

/** What the store counts for an entry: 64 bytes of overhead, its key, its JSON and its tags. */
const entryBytes = (key: string, value: CachedSection) => 64 + key.length + value.json.length + (value.tags ?? []).reduce((sum, tag) => sum + tag.length, 0);

function section(json: string, overrides: Partial<CachedSection> = {}): CachedSection {
  return { json, fetchedAt: 1_000, maxAgeMs: 100, staleMs: 50, tags: ['s:products'], purgeSeq: 0, ...overrides };
}

/** A clock the test moves by hand. */
function clock(start = 1_000) {
  let time = start;
  return { now: () => time, advance: (ms: number) => void (time += ms) };
}

describe('section store in memory', () => {
  it('answers in the order asked, with misses as undefined', async () => {
    const store = createSectionStore({ now: clock().now });
    store.setMany([
      ['a', section('{"a":1}')],
      ['b', section('{"b":2}')],
    ]);
    const [b, missing, a] = await store.getMany(['b', 'nope', 'a']);
    expect(b?.json).toBe('{"b":2}');
    expect(missing).toBeUndefined();
    expect(a?.json).toBe('{"a":1}');
  });

  it('counts bytes as key + json + tags + a fixed overhead, and gives them back on delete', async () => {
    const store = createSectionStore({ now: clock().now });
    const value = section('{"a":1}');
    store.setMany([['a', value]]);
    expect(store.bytes).toBe(entryBytes('a', value));
    expect(entryBytes('a', value)).toBe(64 + 1 + 7 + 's:products'.length);
    store.setMany([['a', value]]); // replacing counts once
    expect(store.bytes).toBe(entryBytes('a', value));
    store.deleteMany(['a', 'never-set']);
    expect(store.bytes).toBe(0);
    expect(await store.getMany(['a'])).toEqual([undefined]);
  });

  it('evicts the least recently used entries until the bytes fit, a read counting as a use', async () => {
    const one = entryBytes('k0', section('x'.repeat(36)));
    expect(one).toBe(64 + 2 + 36 + 10); // 112 bytes per entry
    const keys = Array.from({ length: 8 }, (_, i) => `k${i}`);
    const store = createSectionStore({ maxBytes: one * 8, now: clock().now });
    store.setMany(keys.map((key) => [key, section('x'.repeat(36))] as const));
    expect(store.bytes).toBe(one * 8);
    await store.getMany(['k0']); // k0 is now the most recently used; k1 the least
    store.setMany([['k8', section('x'.repeat(36))]]);
    expect(store.bytes).toBe(one * 8);
    const present = async (asked: string[]) => (await store.getMany(asked)).map((s) => s !== undefined);
    expect(await present(['k0', 'k1', 'k2', 'k8'])).toEqual([true, false, true, true]);
    // Recency is now k3, k4, k5, k6, k7, k0, k2, k8 (oldest first): however small, a new entry pushes out the oldest.
    store.setMany([['small', section('{}')]]);
    expect(store.bytes).toBe(one * 7 + entryBytes('small', section('{}')));
    expect(await present(['k3', 'k4', 'k0', 'k8', 'small'])).toEqual([false, true, true, true, true]);
  });

  it('does not keep an entry bigger than an eighth of the bound (it would flush the cache), and drops the copy it replaces', async () => {
    const store = createSectionStore({ maxBytes: 8_000, now: clock().now });
    store.setMany([['a', section('{}')]]);
    store.setMany([['huge', section('x'.repeat(1_000))]]);
    store.setMany([['a', section('y'.repeat(1_000))]]);
    expect(await store.getMany(['a', 'huge'])).toEqual([undefined, undefined]);
    expect(store.bytes).toBe(0);
  });

  it('serves an entry until fetchedAt + maxAge + stale, then misses and frees its bytes', async () => {
    const time = clock(1_000);
    const store = createSectionStore({ now: time.now });
    store.setMany([['a', section('{"a":1}', { fetchedAt: 1_000, maxAgeMs: 100, staleMs: 50 })]]);
    time.advance(149); // stale but kept: the caller decides whether stale is served
    expect((await store.getMany(['a']))[0]?.fetchedAt).toBe(1_000);
    time.advance(1);
    expect(await store.getMany(['a'])).toEqual([undefined]);
    expect(store.bytes).toBe(0);
  });

  it('does not store an entry already past its life', async () => {
    const store = createSectionStore({ now: clock(10_000).now });
    store.setMany([['old', section('{}', { fetchedAt: 1_000 })]]);
    expect(store.bytes).toBe(0);
  });

  it('never throws, reporting an unexpected failure as a memory error', async () => {
    const onError = vi.fn();
    const store = createSectionStore({
      onError,
      now: () => {
        throw new Error('clock broke');
      },
    });
    expect(store.getMany(['a'])).toEqual([undefined]); // memory alone answers at once, even when it fails
    expect(() => store.setMany([['a', section('{}')]])).not.toThrow();
    expect(onError).toHaveBeenCalledWith('memory', expect.objectContaining({ message: 'clock broke' }));
    await store.flush();
    await store.close();
  });
});
