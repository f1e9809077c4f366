// After a drill: every answered request checked against the audit log, router by router.
import pg from 'pg';
import type { Attempt } from './balanced-load.js';

export interface RouterAudit {
  /** Attempts that got an HTTP answer from this router. */
  answered: number;
  /** Of those, with exactly one audit row (by `request_id`). */
  withRow: number;
  /** Answered, but no row: lost. */
  missing: number;
  /** How long before the kill the earliest missing row's request was answered, in ms (killed router only; 0 when none is missing). */
  missingOldestBeforeKillMs: number;
  /** Missing rows answered after the killed process's exit, or more than `bufferWindowMs` before its kill: lost by something else than the memory buffer. */
  missingOutsideBuffer: number;
}

export interface AuditAccount {
  routers: RouterAudit[];
  /** Request ids with more than one row (a replay that was not idempotent). */
  duplicates: number;
  /** Attempts without an answer (in flight on the killed router) that still have a row. */
  unansweredWithRow: number;
  /** Ids that were in the killed router's spill files at the kill, and how many of them reached the table. */
  spilledAtKill: number;
  spilledReplayed: number;
}

/**
 * Reads every row of this run (`request_id` starting with the run's prefix) and matches them to the
 * attempts. A row belongs to the router the attempt went to. On the killed router, a missing row is
 * expected only for requests answered in the last `bufferWindowMs` before the kill: what was in memory.
 */
export async function accountAudit(options: {
  databaseUrl: string;
  requestIdPrefix: string;
  attempts: readonly Attempt[];
  routers: number;
  /** The router killed: when the signal went, when its exit was seen here, and how long entries may wait in its memory. */
  killed: { router: number; at: number; exitSeenAt: number; bufferWindowMs: number } | undefined;
  spilledAtKill: readonly string[];
}): Promise<AuditAccount> {
  const client = new pg.Client({ connectionString: options.databaseUrl });
  await client.connect();
  let counts: Map<string, number>;
  try {
    const { rows } = await client.query<{ request_id: string; n: string }>("select request_id, count(*) as n from audit_log where request_id like $1 || '-%' group by 1", [options.requestIdPrefix]);
    counts = new Map(rows.map((row) => [row.request_id, Number(row.n)]));
  } finally {
    await client.end();
  }
  const routers: RouterAudit[] = Array.from({ length: options.routers }, () => ({ answered: 0, withRow: 0, missing: 0, missingOldestBeforeKillMs: 0, missingOutsideBuffer: 0 }));
  let unansweredWithRow = 0;
  for (const attempt of options.attempts) {
    if (attempt.outcome === 'refused') continue;
    const rows = counts.get(attempt.requestId) ?? 0;
    if (attempt.status === undefined) {
      if (rows > 0) unansweredWithRow += 1;
      continue;
    }
    const account = routers[attempt.router]!;
    account.answered += 1;
    if (rows > 0) {
      account.withRow += 1;
      continue;
    }
    account.missing += 1;
    const killed = options.killed;
    // An answer can still arrive between the signal and the exit seen here: it was written before the process died.
    if (killed && killed.router === attempt.router && attempt.doneAt <= killed.exitSeenAt) {
      const beforeKill = killed.at - attempt.doneAt;
      account.missingOldestBeforeKillMs = Math.max(account.missingOldestBeforeKillMs, beforeKill);
      if (beforeKill > killed.bufferWindowMs) account.missingOutsideBuffer += 1;
    } else {
      account.missingOutsideBuffer += 1;
    }
  }
  return {
    routers,
    duplicates: [...counts.values()].filter((n) => n > 1).length,
    unansweredWithRow,
    spilledAtKill: options.spilledAtKill.length,
    spilledReplayed: options.spilledAtKill.filter((id) => counts.has(id)).length,
  };
}
