// The audit writer's options: their defaults, units and limits, checked once when the writer is created.
import path from 'node:path';
import type { Queryable } from './database.js';

export interface AuditWriterOptions {
  /** The metadata store (a `Database`). The writer runs only INSERTs and a `select 1` probe on it, and never closes it. */
  db: Queryable;
  /** Folder of the spill files, created when first needed. A router uses `defaultSpillDir(dataDir)`, `<dataDir>/audit-spill`. */
  spillDir: string;
  /** Rows per INSERT, and the number of buffered entries that starts a write without waiting for the interval. Default 500; 1 to 5,000. */
  batchSize?: number;
  /** Longest time, in ms, an entry waits in memory before a write starts. Default 200. */
  flushIntervalMs?: number;
  /** Entries held in memory; when full, the oldest are appended to the spill file synchronously (never dropped). Default 10,000. */
  bufferCapacity?: number;
  /** Delay, in ms, before the first probe of an unreachable database; it doubles after each failure up to `probeMaxIntervalMs`. Default 1,000. */
  probeIntervalMs?: number;
  /** Longest delay, in ms, between probes (never less than `probeIntervalMs`). Default 10,000. */
  probeMaxIntervalMs?: number;
  /**
   * How long, in ms, `close` waits for the database. Past it, what is still in memory is appended to the
   * spill file and `close` resolves; an INSERT still in flight finishes or fails on its own (its rows are
   * on disk either way). Keep it below the shutdown grace period. Default 5,000.
   */
  closeTimeoutMs?: number;
  /** Told about outages (once each), spill-folder I/O errors and rejected rows. Called synchronously; what it throws is ignored. Default: none. */
  onError?: (error: Error) => void;
}

/** Where a router keeps the audit spill files: `<dataDir>/audit-spill`. */
export function defaultSpillDir(dataDir: string): string {
  return path.join(dataDir, 'audit-spill');
}

const DEFAULTS = {
  batchSize: 500,
  flushIntervalMs: 200,
  bufferCapacity: 10_000,
  probeIntervalMs: 1_000,
  probeMaxIntervalMs: 10_000,
  closeTimeoutMs: 5_000,
};

/** Beyond this, one batch's JSON becomes a large single parameter for little gain. */
const MAX_BATCH_SIZE = 5_000;

/** The options with defaults filled in; throws a RangeError naming every invalid option at once. */
export function resolveOptions(options: AuditWriterOptions): Required<Omit<AuditWriterOptions, 'onError'>> {
  const resolved = { ...DEFAULTS, ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) } as Required<Omit<AuditWriterOptions, 'onError'>>;
  const problems: string[] = [];
  if (!resolved.db || typeof resolved.db.query !== 'function') problems.push('db must be a Database');
  if (typeof resolved.spillDir !== 'string' || resolved.spillDir === '') problems.push('spillDir must be a folder path');
  const ranges: [keyof typeof DEFAULTS, number, number][] = [
    ['batchSize', 1, MAX_BATCH_SIZE],
    ['flushIntervalMs', 1, 60_000],
    ['bufferCapacity', 1, 10_000_000],
    ['probeIntervalMs', 1, 3_600_000],
    ['probeMaxIntervalMs', 1, 3_600_000],
    ['closeTimeoutMs', 1, 3_600_000],
  ];
  for (const [key, min, max] of ranges) {
    const value = resolved[key];
    if (!Number.isInteger(value) || value < min || value > max) problems.push(`${key} must be an integer from ${min} to ${max} (got ${value})`);
  }
  if (problems.length > 0) throw new RangeError(`invalid audit writer options: ${problems.join('; ')}`);
  resolved.probeMaxIntervalMs = Math.max(resolved.probeMaxIntervalMs, resolved.probeIntervalMs);
  return resolved;
}
