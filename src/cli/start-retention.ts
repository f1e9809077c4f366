// The router's retention task (decision 030): the audit log's day partitions and the operation registry's pruning, at start and every hour.
import type { Config } from '../config/schema.js';
import type { Database } from '../registry/database.js';
import { maintainAuditPartitions } from '../registry/audit-partitions.js';
import { pruneOperations } from '../registry/operation-retention.js';
import type { Logger } from '../telemetry/logger.js';

/**
 * How often each router runs it, in ms. Every router does (no leader to elect): the audit partitions
 * change under a lock the others skip, and the registry's deletes are idempotent. Hourly keeps the
 * days made ahead three days ahead of need, and drops a day within the hour it passes retention.
 */
const RETENTION_EVERY_MS = 60 * 60_000;

export interface RetentionSetup {
  database: Database;
  config: Pick<Config, 'auditRetentionDays' | 'operationRetentionDays'>;
  logger: Logger;
  /** The clock the task acts for. Default: the system's (tests pass a fake one). */
  now?: () => Date;
  /** Default RETENTION_EVERY_MS. */
  everyMs?: number;
}

export interface RetentionTask {
  /** Runs once more now, or joins the run under way. Never rejects: failures are logged and retried at the next tick. */
  run(): Promise<void>;
  /** Clears the timer and waits for a run under way, so the database can be closed after it. */
  stop(): Promise<void>;
}

/**
 * Starts the task: a first run (awaited, so a new router finds today's partition made; a failure is
 * logged and does not stop the start: rows meeting no partition land in the default one), then one
 * run every `everyMs` on a timer that keeps no process alive. A run never overlaps another; each half
 * (audit, operations) fails on its own.
 */
export async function startRetention(setup: RetentionSetup): Promise<RetentionTask> {
  const { database, config, logger } = setup;
  const now = setup.now ?? (() => new Date());
  let running: Promise<void> | undefined;
  let stopped = false;

  async function runOnce(): Promise<void> {
    try {
      const audit = await maintainAuditPartitions(database, { now: now(), retentionDays: config.auditRetentionDays });
      if (audit.created.length > 0 || audit.dropped.length > 0 || audit.moved > 0 || audit.deleted > 0) {
        logger.info({ created: audit.created, dropped: audit.dropped, moved: audit.moved, deleted: audit.deleted }, 'audit log: day partitions made and dropped');
      }
    } catch (error) {
      logger.warn({ err: error }, 'audit log: day partitions could not be made or dropped; trying again at the next run');
    }
    try {
      const pruned = await pruneOperations(database, { now: now(), retentionDays: config.operationRetentionDays });
      if (pruned.operations > 0 || pruned.counts > 0) logger.info(pruned, 'operation registry: operations and counts past retention deleted');
    } catch (error) {
      logger.warn({ err: error }, 'operation registry: operations past retention could not be deleted; trying again at the next run');
    }
  }

  function run(): Promise<void> {
    if (stopped) return Promise.resolve();
    return (running ??= runOnce().finally(() => (running = undefined)));
  }

  await run();
  const timer = setInterval(function applyRetention() {
    void run();
  }, setup.everyMs ?? RETENTION_EVERY_MS);
  timer.unref();
  return {
    run,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
