import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HeartbeatWheel } from './heartbeat-wheel.js';

describe('HeartbeatWheel', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('beats every item once per period, a slot per tick, never all of them at once', () => {
    const beats: number[][] = [];
    let tick: number[] = [];
    const wheel = new HeartbeatWheel<number>(1_000, (item) => tick.push(item), 10);
    for (let i = 0; i < 100; i++) wheel.add(i);
    for (let t = 0; t < 10; t++) {
      vi.advanceTimersByTime(100);
      beats.push(tick);
      tick = [];
    }
    expect(beats.every((slot) => slot.length === 10)).toBe(true);
    expect(beats.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i));
  });

  it('an item deleted is not beaten again, and an empty wheel holds no timer', () => {
    const beaten: string[] = [];
    const wheel = new HeartbeatWheel<string>(100, (item) => beaten.push(item), 2);
    wheel.add('a');
    wheel.add('b');
    wheel.delete('a');
    vi.advanceTimersByTime(100);
    expect(beaten).toEqual(['b']);
    wheel.delete('b');
    expect(wheel.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });
});
