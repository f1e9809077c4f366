// Unit tests of the latency tracker: percentiles, the minimum sample count, the ring buffer, caching.
import { describe, expect, it } from 'vitest';
import { LatencyTracker } from './latency-tracker.js';

function observeAll(tracker: LatencyTracker, values: number[]): void {
  for (const value of values) tracker.observe(value);
}

const oneToHundred = Array.from({ length: 100 }, (_, i) => i + 1);

describe('LatencyTracker', () => {
  it('knows nothing until minSamples observations are kept', () => {
    const tracker = new LatencyTracker({ minSamples: 20 });
    observeAll(tracker, oneToHundred.slice(0, 19));
    expect(tracker.count).toBe(19);
    expect(tracker.percentile(50)).toBeUndefined();
    tracker.observe(20);
    expect(tracker.percentile(50)).toBe(10);
  });

  it('computes nearest-rank percentiles in milliseconds, whatever the order of arrival', () => {
    const tracker = new LatencyTracker();
    observeAll(tracker, [...oneToHundred].reverse());
    expect(tracker.percentile(50)).toBe(50);
    expect(tracker.percentile(95)).toBe(95);
    expect(tracker.percentile(99)).toBe(99);
    expect(tracker.percentile(0)).toBe(1);
    expect(tracker.percentile(100)).toBe(100);
    expect(tracker.percentile(0.5)).toBe(1);
  });

  it('keeps only the last `capacity` observations', () => {
    const tracker = new LatencyTracker({ capacity: 4, minSamples: 1, recomputeEvery: 1 });
    observeAll(tracker, [1, 2, 3, 4, 100, 200, 300]);
    expect(tracker.count).toBe(4);
    expect(tracker.percentile(0)).toBe(4);
    expect(tracker.percentile(100)).toBe(300);
    tracker.observe(400);
    expect(tracker.percentile(0)).toBe(100);
  });

  it('re-sorts at most once per `recomputeEvery` observations (percentiles may lag a little)', () => {
    const tracker = new LatencyTracker({ minSamples: 20, recomputeEvery: 16 });
    observeAll(tracker, Array(20).fill(10));
    expect(tracker.percentile(95)).toBe(10);
    observeAll(tracker, Array(15).fill(1000));
    expect(tracker.percentile(95)).toBe(10); // cached snapshot of the first 20
    tracker.observe(1000);
    expect(tracker.percentile(95)).toBe(1000); // 16 new observations: recomputed over 36
    expect(tracker.percentile(50)).toBe(10);
  });

  it('ignores values that are not durations', () => {
    const tracker = new LatencyTracker({ minSamples: 1 });
    observeAll(tracker, [-1, Number.NaN, Infinity]);
    expect(tracker.count).toBe(0);
    tracker.observe(0);
    expect(tracker.percentile(50)).toBe(0);
  });

  it('rejects percentiles outside 0..100 and impossible options', () => {
    const tracker = new LatencyTracker();
    expect(() => tracker.percentile(101)).toThrow(RangeError);
    expect(() => tracker.percentile(-1)).toThrow(RangeError);
    expect(() => new LatencyTracker({ capacity: 0 })).toThrow(RangeError);
    expect(() => new LatencyTracker({ capacity: 10, minSamples: 11 })).toThrow(RangeError);
    expect(() => new LatencyTracker({ recomputeEvery: 0.5 })).toThrow(RangeError);
  });
});
