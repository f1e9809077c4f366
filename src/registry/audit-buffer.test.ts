// Unit tests of the audit writer's ring buffer.
import { describe, expect, it } from 'vitest';
import { RingBuffer } from './audit-buffer.js';

describe('ring buffer', () => {
  it('keeps order and sequence numbers across wrap-around', () => {
    const ring = new RingBuffer<string>(3);
    expect(ring.push('a')).toBe(0);
    ring.push('b');
    ring.push('c');
    expect(ring.full).toBe(true);
    expect(() => ring.push('d')).toThrow(RangeError);
    ring.drop(2);
    expect([ring.headSeq, ring.tailSeq, ring.length]).toEqual([2, 3, 1]);
    expect(ring.push('d')).toBe(3);
    ring.push('e');
    expect(ring.peek(10)).toEqual(['c', 'd', 'e']);
    expect(ring.peek(2)).toEqual(['c', 'd']);
    ring.drop(10);
    expect([ring.headSeq, ring.length, ring.peek(1)]).toEqual([5, 0, []]);
  });

  it('refuses a capacity that is not a positive integer', () => {
    expect(() => new RingBuffer(0)).toThrow(RangeError);
  });
});
