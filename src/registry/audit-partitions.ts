// The audit log's partitions (migration 011, decision 030): one per UTC day, made ahead of time and dropped whole past retention.
import type { Database, Queryable } from './database.js';

export interface AuditPartitionOptions {
  /** The time the maintenance acts for (tests pass a fake clock). */
  now: Date;
  /** Days a row is kept: a day's partition is dropped once all of it is older than this. At least 1. */
  retentionDays: number;
  /** Days after today that get their partition now, so rows never wait for the next run. Default AUDIT_PARTITIONS_AHEAD_DAYS. */
  aheadDays?: number;
}

export interface AuditPartitionReport {
  /** Another router held the maintenance lock and did the same work: nothing was done here. */
  skipped: boolean;
  /** Partitions made, by day (YYYY-MM-DD), oldest first. */
  created: string[];
  /** Partitions dropped past retention, by day, oldest first. */
  dropped: string[];
  /** Rows moved from the default partition into a partition made for their day. */
  moved: number;
  /** Rows of the default partition past retention, deleted (the one place rows go one by one; it is empty unless something misfiled them). */
  deleted: number;
}

/**
 * Days ahead made on each run. The router runs the maintenance every hour, so three days ahead leaves
 * three days of failed runs (a lock it could not get, a database down) before a row meets no partition
 * of its day, and even then it lands in the default partition, not on the floor.
 */
export const AUDIT_PARTITIONS_AHEAD_DAYS = 3;

/** Any 64-bit constant of ours, not the migrations': one router at a time changes the partitions. */
const PARTITION_LOCK = 7_428_113_902;

const DAY_MS = 86_400_000;
const PARTITION_NAME = /^audit_log_p(\d{4})(\d{2})(\d{2})$/;

/** Midnight UTC of the day holding `ms`, in ms. */
function dayStart(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/** YYYY-MM-DD of the UTC day starting at `ms`. */
function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** A day's partition: its name, and its bounds as literals of the parent's key type (generated here, never from input). */
function partitionOf(start: number): { name: string; from: string; to: string } {
  const day = dayOf(start);
  return { name: `audit_log_p${day.replaceAll('-', '')}`, from: `'${day} 00:00:00+00'`, to: `'${dayOf(start + DAY_MS)} 00:00:00+00'` };
}

/** The day partitions of `audit_log`, by their first instant (ms), oldest first; the default partition is not listed. */
export async function listAuditPartitions(db: Queryable): Promise<number[]> {
  const { rows } = await db.query<{ name: string }>(
    `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'audit_log'::regclass`,
  );
  const days: number[] = [];
  for (const { name } of rows) {
    const match = PARTITION_NAME.exec(name);
    if (match) days.push(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])));
  }
  return days.sort((a, b) => a - b);
}

/**
 * One maintenance run, in one transaction:
 * 1. Take the maintenance lock without waiting (`pg_try_advisory_xact_lock`): if another router holds it,
 *    it is doing this very work, so skip. The transaction also waits at most 5 s for a table lock
 *    (`lock_timeout`): dropping or attaching a partition needs the parent for a moment, and a long
 *    `switchyard audit` read must not make the writers queue behind the maintenance; it runs again later.
 * 2. Drop every day partition older than the horizon, the UTC midnight `retentionDays` before `now`
 *    (so a row is kept at least `retentionDays` and less than a day more), and delete the default
 *    partition's rows older than it.
 * 3. Make the partitions of today and the `aheadDays` after it, and of any day in between the horizon
 *    and then whose rows wait in the default partition. A day whose rows wait there is made as a table
 *    of its own, the rows moved into it, then attached (a partition cannot be created over rows the
 *    default partition holds for its range); the others are created as partitions straight away.
 * Rows dated beyond the last day made stay in the default partition until their day comes near.
 */
export async function maintainAuditPartitions(db: Database, options: AuditPartitionOptions): Promise<AuditPartitionReport> {
  const { retentionDays } = options;
  const aheadDays = options.aheadDays ?? AUDIT_PARTITIONS_AHEAD_DAYS;
  if (!Number.isInteger(retentionDays) || retentionDays < 1) throw new RangeError(`retentionDays must be a whole number of days, at least 1 (got ${retentionDays})`);
  if (!Number.isInteger(aheadDays) || aheadDays < 0) throw new RangeError(`aheadDays must be a whole number of days (got ${aheadDays})`);
  const now = options.now.getTime();
  const horizon = dayStart(now - retentionDays * DAY_MS);
  const today = dayStart(now);
  const end = today + (aheadDays + 1) * DAY_MS;
  const report: AuditPartitionReport = { skipped: false, created: [], dropped: [], moved: 0, deleted: 0 };

  return db.transaction(async (tx) => {
    const { rows } = await tx.query<{ locked: boolean }>('select pg_try_advisory_xact_lock($1) as locked', [PARTITION_LOCK]);
    if (!rows[0]?.locked) return { ...report, skipped: true };
    await tx.query(`set local lock_timeout = '5s'`);

    const existing = await listAuditPartitions(tx);
    for (const start of existing.filter((day) => day < horizon)) {
      await tx.query(`drop table if exists ${partitionOf(start).name}`);
      report.dropped.push(dayOf(start));
    }
    const horizonLiteral = partitionOf(horizon).from;
    report.deleted = (await tx.query(`delete from audit_log_default where at < ${horizonLiteral}`)).rowCount ?? 0;

    const strays = await tx.query<{ day: string }>(
      `select distinct to_char(at at time zone 'UTC', 'YYYY-MM-DD') as day from audit_log_default where at >= ${horizonLiteral} and at < ${partitionOf(end).from}`,
    );
    const waiting = new Set(strays.rows.map((row) => Date.parse(`${row.day}T00:00:00Z`)));
    const wanted = new Set(waiting);
    for (let day = today; day < end; day += DAY_MS) wanted.add(day);
    const have = new Set(existing);
    for (const start of [...wanted].sort((a, b) => a - b)) {
      if (have.has(start)) continue;
      const { name, from, to } = partitionOf(start);
      if (waiting.has(start)) {
        await tx.query(`create table ${name} (like audit_log including defaults including constraints)`);
        const moved = await tx.query(`with moved as (delete from audit_log_default where at >= ${from} and at < ${to} returning *) insert into ${name} select * from moved`);
        report.moved += moved.rowCount ?? 0;
        await tx.query(`alter table audit_log attach partition ${name} for values from (${from}) to (${to})`);
      } else {
        await tx.query(`create table if not exists ${name} partition of audit_log for values from (${from}) to (${to})`);
      }
      report.created.push(dayOf(start));
    }
    return report;
  });
}
