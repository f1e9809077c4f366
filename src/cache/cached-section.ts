// One cached section as the stores keep it (memory and Redis alike).

/** A subgraph's answer for one part of a plan, with its freshness and the purge it may predate. */
export interface CachedSection {
  /** The section's JSON text: parsed per hit by the caller, so nobody can change a cached value. */
  json: string;
  /** When its data was fetched: epoch ms on the storing router's clock. */
  fetchedAt: number;
  /** Fresh for this long after fetchedAt, in ms. */
  maxAgeMs: number;
  /** Then kept this much longer as a stale fallback (served only while the subgraph fails), in ms. */
  staleMs: number;
  /**
   * Tags a purge can name: `s:<subgraph>`, `t:<Type>`, `e:<Type>:<canonical key>` (see tags.ts). Not
   * stored: the reader makes them from the value, and only when a purge newer than the section asks
   * (purge-index.ts); a copy in memory keeps them once made.
   */
  tags?: readonly string[];
  /** The highest purge sequence number the storing router knew when the fetch began. */
  purgeSeq: number;
}
