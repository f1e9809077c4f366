// Which cached sections a purge has made unusable: the highest purge sequence number per tag.
import type { CachedSection } from './section-store.js';

/** One purge as the registry numbers it: every section carrying one of `tags` (or every section) fetched before `seq` is gone. */
export interface Purge {
  seq: number;
  tags: readonly string[] | 'all';
}

/**
 * A purge never deletes sections one by one (they may sit in any router's memory and in Redis);
 * instead each section records the highest purge sequence number its router knew when its fetch
 * began (`purgeSeq`), and a section is purged when a later purge names one of its tags:
 *
 *   purged  ⇔  allSeq > section.purgeSeq  or  some tag t of the section has seq(t) > section.purgeSeq
 *
 * Only the highest seq per tag matters for that test, so the index keeps one number per tag (a Map)
 * plus one for 'all': `isPurged` costs O(tags of the section), whatever the number of purges.
 * Taking maxima makes `apply` idempotent and order-free: purges may arrive twice or out of order
 * (a poll racing a notification) and the index ends the same.
 */
export class PurgeIndex {
  readonly #tagSeq = new Map<string, number>();
  #allSeq = -Infinity;
  #latestSeq = 0;
  /** The highest seq of any tag purge: a section fetched after it needs no look at its tags at all. */
  #latestTagSeq = -Infinity;

  apply(purges: readonly Purge[]): void {
    for (const { seq, tags } of purges) {
      if (!Number.isFinite(seq)) continue;
      if (seq > this.#latestSeq) this.#latestSeq = seq;
      if (tags === 'all') {
        if (seq > this.#allSeq) this.#allSeq = seq;
        continue;
      }
      if (seq > this.#latestTagSeq) this.#latestTagSeq = seq;
      for (const tag of tags) {
        const known = this.#tagSeq.get(tag);
        if (known === undefined || seq > known) this.#tagSeq.set(tag, seq);
      }
    }
  }

  /** The highest purge sequence number applied (0 before any): what a fetch starting now records as its purgeSeq. */
  get latestSeq(): number {
    return this.#latestSeq;
  }

  /** Tags remembered (for a gauge, and to see when `forgetBefore` is due). */
  get size(): number {
    return this.#tagSeq.size;
  }

  /**
   * Whether a purge came after the section's fetch and names one of its tags. `tagsOf` is asked only
   * when some tag purge is newer than the section: in the common case (no purge since the fetch) the
   * tags are never made, so a write need not make them (section-cache.ts makes them from the value).
   */
  isPurged(section: Pick<CachedSection, 'purgeSeq'>, tagsOf: () => Iterable<string>): boolean {
    if (this.#allSeq > section.purgeSeq) return true;
    if (this.#latestTagSeq <= section.purgeSeq) return false;
    for (const tag of tagsOf()) {
      const seq = this.#tagSeq.get(tag);
      if (seq !== undefined && seq > section.purgeSeq) return true;
    }
    return false;
  }

  /**
   * Forgets per-tag purges numbered up to `seq`, so entity tags do not pile up for ever. To stay on
   * the safe side it then treats every section with purgeSeq < `seq` as purged (as if an 'all' purge
   * numbered `seq` had come): a section may be refetched needlessly, never served after its purge.
   * Call it once no section that old can still be cached (e.g. the longest maxAge + stale after `seq` was applied).
   * `seq` is capped at latestSeq: a fetch starting now must not be purged by a purge that never came.
   */
  forgetBefore(seq: number): void {
    seq = Math.min(seq, this.#latestSeq);
    if (seq > this.#allSeq) this.#allSeq = seq;
    for (const [tag, tagSeq] of this.#tagSeq) if (tagSeq <= seq) this.#tagSeq.delete(tag);
  }
}
