// The purge index: a section is purged by a later purge naming one of its tags, or by a later purge of everything.
import { describe, expect, it } from 'vitest';
import { PurgeIndex } from './purge-index.js';
import { entityTag, subgraphTag, typeTag } from './tags.js';

/** Whether the index purges the section, its tags made on demand as the section cache makes them. */
function purged(index: PurgeIndex, section: { tags: readonly string[]; purgeSeq: number }): boolean {
  return index.isPurged(section, () => section.tags);
}

const product1 = { tags: [subgraphTag('products'), typeTag('Product'), entityTag('Product', { upc: '1' })], purgeSeq: 5 };

describe('purge index', () => {
  it('purges a section only through a purge numbered after its fetch began, naming one of its tags', () => {
    const index = new PurgeIndex();
    expect(purged(index, product1)).toBe(false);
    index.apply([{ seq: 5, tags: [typeTag('Product')] }]);
    expect(purged(index, product1)).toBe(false); // known when the fetch began: the section is newer
    index.apply([{ seq: 6, tags: [typeTag('User')] }]);
    expect(purged(index, product1)).toBe(false);
    index.apply([{ seq: 7, tags: [subgraphTag('products')] }]);
    expect(purged(index, product1)).toBe(true);
    expect(purged(index, { ...product1, purgeSeq: 7 })).toBe(false);
    expect(index.latestSeq).toBe(7);
  });

  it('matches entity tags canonically (a purge by numeric id hits a section keyed by string id)', () => {
    const index = new PurgeIndex();
    index.apply([{ seq: 6, tags: [entityTag('Product', { upc: 1, __typename: 'Product' })] }]);
    expect(purged(index, product1)).toBe(true);
    expect(purged(index, { ...product1, tags: [entityTag('Product', { upc: '2' })] })).toBe(false);
  });

  it("purges every older section with 'all', and none fetched after it", () => {
    const index = new PurgeIndex();
    index.apply([{ seq: 9, tags: 'all' }]);
    expect(purged(index, product1)).toBe(true);
    expect(purged(index, { tags: [], purgeSeq: 8 })).toBe(true);
    expect(purged(index, { tags: [], purgeSeq: 9 })).toBe(false);
  });

  it('ends the same whatever the order purges arrive in, and however often', () => {
    const purges = [
      { seq: 3, tags: ['t:A'] },
      { seq: 8, tags: ['t:A', 't:B'] },
      { seq: 6, tags: 'all' as const },
      { seq: 4, tags: ['t:C'] },
    ];
    const sections = [0, 2, 3, 4, 5, 6, 7, 8, 9].flatMap((purgeSeq) => [['t:A'], ['t:B'], ['t:C'], []].map((tags) => ({ tags, purgeSeq })));
    const inOrder = new PurgeIndex();
    inOrder.apply([...purges].sort((a, b) => a.seq - b.seq));
    const shuffled = new PurgeIndex();
    shuffled.apply([purges[1], purges[3]]);
    shuffled.apply([purges[0], purges[2], purges[1]]);
    shuffled.apply(purges);
    expect(sections.map((s) => purged(shuffled, s))).toEqual(sections.map((s) => purged(inOrder, s)));
    expect(shuffled.latestSeq).toBe(8);
    expect(purged(shuffled, { tags: ['t:B'], purgeSeq: 7 })).toBe(true);
    expect(purged(shuffled, { tags: ['t:C'], purgeSeq: 6 })).toBe(false); // seq 4 < 6, and 'all' 6 is not after 6
  });

  it('forgets old tags without ever un-purging a section', () => {
    const index = new PurgeIndex();
    index.apply([
      { seq: 2, tags: ['t:A'] },
      { seq: 5, tags: ['t:B'] },
    ]);
    index.forgetBefore(3);
    expect(index.size).toBe(1);
    expect(purged(index, { tags: ['t:A'], purgeSeq: 1 })).toBe(true);
    expect(purged(index, { tags: ['t:C'], purgeSeq: 2 })).toBe(true); // conservatively: too old to tell
    expect(purged(index, { tags: ['t:A'], purgeSeq: 3 })).toBe(false);
    expect(purged(index, { tags: ['t:B'], purgeSeq: 4 })).toBe(true);
    index.forgetBefore(100); // capped at latestSeq: a fetch starting now stays usable
    expect(purged(index, { tags: ['t:C'], purgeSeq: index.latestSeq })).toBe(false);
  });

  it('does not ask for the tags of a section fetched after every tag purge (writes need not make them)', () => {
    const index = new PurgeIndex();
    let asked = 0;
    const tagsOf = () => {
      asked += 1;
      return ['t:A'];
    };
    expect(index.isPurged({ purgeSeq: 0 }, tagsOf)).toBe(false);
    index.apply([{ seq: 4, tags: ['t:B'] }]);
    expect(index.isPurged({ purgeSeq: 4 }, tagsOf)).toBe(false);
    expect(asked).toBe(0);
    expect(index.isPurged({ purgeSeq: 3 }, tagsOf)).toBe(false); // a newer purge, of another tag: the tags are read
    expect(asked).toBe(1);
    index.apply([{ seq: 5, tags: ['t:A'] }]);
    expect(index.isPurged({ purgeSeq: 3 }, tagsOf)).toBe(true);
  });
});
