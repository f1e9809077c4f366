// The Redis value format: a round trip, values of the previous format, and refusal of anything else.
import { describe, expect, it } from 'vitest';
import type { CachedSection } from './cached-section.js';
import { decodeSection, encodeSection } from './redis-section-format.js';

function section(json: string, overrides: Partial<CachedSection> = {}): CachedSection {
  return { json, fetchedAt: Date.now(), maxAgeMs: 60_000, staleMs: 30_000, purgeSeq: 4, ...overrides };
}

describe('Redis value format', () => {
  it('round-trips a section without encoding its JSON text twice', () => {
    const value = section('{"name":"Chair","note":"line\\nbreak"}');
    const encoded = encodeSection(value);
    expect(encoded.split('\n')[1]).toBe(value.json);
    expect(decodeSection(encoded)).toEqual(value);
  });

  it('reads values of the format that carried purge tags (a router of the previous version wrote them), without the tags', () => {
    expect(decodeSection('[1,5,60000,30000,4,["s:products"]]\n{"upc":"1"}')).toEqual({ json: '{"upc":"1"}', fetchedAt: 5, maxAgeMs: 60_000, staleMs: 30_000, purgeSeq: 4 });
  });

  it('refuses what it did not write', () => {
    for (const bad of ['garbage', '[2,2]\n{}', 'not json\n{}', '[3,1,1,1,1]\n{}', '[2,1,1,1,1,[]]\n{}', '[1,1,1,1,1]\n{}', '[2,1,1,1,"x"]\n{}', '[2,1,1,1,1]\n']) {
      expect(() => decodeSection(bad), bad).toThrow(/cached section in Redis/);
    }
  });
});
