// Seeded pseudo-random numbers (mulberry32) so the demo data is identical in every run and every process.

/** A source of numbers in [0, 1), like `Math.random`, but reproducible from its seed. */
export type Random = () => number;

/**
 * mulberry32: a tiny 32-bit generator, plenty for demo data and the same on every platform
 * because it only uses 32-bit integer arithmetic (`Math.imul`, `>>>`).
 */
export function mulberry32(seed: number): Random {
  let state = seed >>> 0;
  return function nextRandom(): number {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** FNV-1a, 32 bits: turns a text key into a seed, so each record gets its own independent stream. */
export function hashSeed(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/**
 * The generator for one record of one subgraph. Seeding per record (not one stream per table) is
 * what lets separate processes agree: a record's data depends only on its scope and key.
 */
export function randomFor(scope: string, key: string): Random {
  return mulberry32(hashSeed(`${scope}:${key}`));
}

/** An integer from `min` to `max`, both inclusive. */
export function intBetween(random: Random, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

/** One element of a non-empty list. */
export function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)];
}
