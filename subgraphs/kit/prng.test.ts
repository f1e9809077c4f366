// Pins the seeded generator: a change here would silently change every demo subgraph's data.
import { describe, expect, it } from 'vitest';
import { hashSeed, intBetween, mulberry32, randomFor } from './prng.js';

describe('seeded random numbers', () => {
  it('repeats the same sequence for the same seed', () => {
    const a = mulberry32(42);
    const b = mulberry32(42);
    const first = [a(), a(), a()];
    expect([b(), b(), b()]).toEqual(first);
    expect(first.every((value) => value >= 0 && value < 1)).toBe(true);
  });

  it('keeps its known values (mulberry32 and FNV-1a)', () => {
    expect(hashSeed('')).toBe(0x811c9dc5);
    expect(hashSeed('a')).toBe(0xe40c292c);
    expect(mulberry32(1)()).toBeCloseTo(0.6270739405881613, 15);
  });

  it('gives each record its own stream, independent of the order records are generated in', () => {
    expect(randomFor('product', '7')()).toBe(randomFor('product', '7')());
    expect(randomFor('product', '7')()).not.toBe(randomFor('reviews', '7')());
  });

  it('draws integers within inclusive bounds', () => {
    const random = mulberry32(3);
    const draws = Array.from({ length: 2_000 }, () => intBetween(random, 0, 20));
    expect(Math.min(...draws)).toBe(0);
    expect(Math.max(...draws)).toBe(20);
  });
});
