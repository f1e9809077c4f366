// Retention of the operation registry: deletes the operations no longer seen and the counts of days past the horizon (run by cli/start-retention.ts).
import type { Queryable } from './database.js';

export interface OperationPruneOptions {
  /** The time the pruning acts for (tests pass a fake clock). */
  now: Date;
  /** Operations last seen longer ago than this many days are deleted, with their counts of days before it. At least 1. */
  retentionDays: number;
}

/**
 * Deletes what the registry no longer needs to keep: operations not seen for `retentionDays` (their
 * hash, text and client), and counts of whole UTC days before the horizon (the warm-up, `operations
 * list --since` and the ops page read the last day or week). Trusted documents are configuration, not
 * traffic: `trusted_documents` is never touched, and `subgraph check` reads them from there. Every
 * router may run it: the deletes are idempotent. Returns the rows deleted.
 */
export async function pruneOperations(db: Queryable, options: OperationPruneOptions): Promise<{ operations: number; counts: number }> {
  const { retentionDays } = options;
  if (!Number.isInteger(retentionDays) || retentionDays < 1) throw new RangeError(`retentionDays must be a whole number of days, at least 1 (got ${retentionDays})`);
  const horizon = new Date(options.now.getTime() - retentionDays * 86_400_000).toISOString();
  const counts = await db.query(`delete from operation_counts where day < ($1::timestamptz at time zone 'UTC')::date`, [horizon]);
  const operations = await db.query('delete from operations where last_seen < $1::timestamptz', [horizon]);
  return { operations: operations.rowCount ?? 0, counts: counts.rowCount ?? 0 };
}
