// Unit tests of the in-process token buckets: refill, debt, and which buckets the bound keeps.
import { describe, expect, it } from 'vitest';
import { memoryBuckets, type BucketDraw } from './token-buckets.js';

const ONE_POINT = { ratePerSecond: 1, burst: 1 };

/** The in-process store answers synchronously. */
function inProcess(options: Parameters<typeof memoryBuckets>[0]) {
  const buckets = memoryBuckets(options);
  return { draw: (key: string, cost: number, limits: typeof ONE_POINT) => buckets.draw(key, cost, limits) as BucketDraw };
}

describe('memoryBuckets', () => {
  it('refuses a drained bucket until it refills', () => {
    let now = 0;
    const buckets = inProcess({ now: () => now });
    expect(buckets.draw('a', 1, ONE_POINT)).toEqual({ admitted: true, tokens: 0 });
    expect(buckets.draw('a', 1, ONE_POINT)).toEqual({ admitted: false, tokens: 0 });
    now = 1_000;
    expect(buckets.draw('a', 1, ONE_POINT)).toEqual({ admitted: true, tokens: 0 });
  });

  it('keeps at most maxBuckets, dropping the least recently drawn: the callers still drawing keep their debt', () => {
    const buckets = inProcess({ maxBuckets: 2, now: () => 0 });
    buckets.draw('a', 1, ONE_POINT);
    buckets.draw('b', 1, ONE_POINT);
    expect(buckets.draw('a', 1, ONE_POINT).admitted).toBe(false); // a is drawn again: b is now the least recent
    buckets.draw('c', 1, ONE_POINT); // over the bound: b goes
    expect(buckets.draw('a', 1, ONE_POINT).admitted).toBe(false);
    expect(buckets.draw('c', 1, ONE_POINT).admitted).toBe(false);
    expect(buckets.draw('b', 1, ONE_POINT)).toEqual({ admitted: true, tokens: 0 }); // came back full
  });
});
