// The retention task a router starts: audit partitions and operation pruning at start and on its timer, released on stop (fake clock and interval).
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { useTestDatabase } from '../../test/helpers/database.js';
import type { Database } from '../registry/database.js';
import { listAuditPartitions } from '../registry/audit-partitions.js';
import { createOperationRecorder } from '../registry/operation-recorder.js';
import { createLogger } from '../telemetry/logger.js';
import { startRetention } from './start-retention.js';

const DAY = 86_400_000;
const D0 = Date.parse('2025-03-10T08:00:00.000Z');
const day = (n: number) => new Date(D0 + n * DAY).toISOString().slice(0, 10);

/** A logger whose lines the test reads. */
function capturedLogger() {
  const lines: { level: number; msg: string }[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as { level: number; msg: string });
      done();
    },
  });
  return { lines, logger: createLogger({ level: 'info', destination }) };
}

describe('the retention task of a running router', () => {
  let db: Database;
  useTestDatabase((opened) => (db = opened));
  afterEach(() => {
    vi.useRealTimers();
  });

  const partitionDays = async () => (await listAuditPartitions(db)).map((start) => new Date(start).toISOString().slice(0, 10));

  it('makes the partitions and prunes the registry at start, again on each tick by its clock, and stops its timer on stop', async () => {
    // Only the interval is faked: the database keeps its own timers.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const recorder = createOperationRecorder({ db, flushIntervalMs: 60_000 });
    recorder.record({ hash: 'a'.repeat(64), normalised: '{ a }', operationName: null, operationType: 'query', clientName: 'web', clientVersion: '', at: new Date(D0 - 40 * DAY) });
    recorder.record({ hash: 'b'.repeat(64), normalised: '{ b }', operationName: null, operationType: 'query', clientName: 'web', clientVersion: '', at: new Date(D0 - DAY) });
    await recorder.close();
    let clock = D0;
    const { lines, logger } = capturedLogger();

    const task = await startRetention({ database: db, config: { auditRetentionDays: 30, operationRetentionDays: 30 }, logger, now: () => new Date(clock) });
    expect(await partitionDays()).toEqual([day(0), day(1), day(2), day(3)]);
    expect((await db.query<{ hash: string }>('select hash from operations')).rows.map((row) => row.hash[0])).toEqual(['b']);
    expect(vi.getTimerCount()).toBe(1);

    clock = D0 + 31 * DAY;
    vi.runOnlyPendingTimers(); // the hourly tick, the one timer faked
    await task.run(); // joins the run the tick started
    expect(await partitionDays()).toEqual([day(1), day(2), day(3), day(31), day(32), day(33), day(34)]);
    expect((await db.query('select hash from operations')).rowCount).toBe(0);
    expect(lines.filter((line) => line.msg === 'audit log: day partitions made and dropped')).toHaveLength(2);

    await task.stop();
    expect(vi.getTimerCount()).toBe(0);
    clock = D0 + 60 * DAY;
    await task.run();
    expect(await partitionDays()).toEqual([day(1), day(2), day(3), day(31), day(32), day(33), day(34)]);
  });

  it('logs a run that fails and still prunes the other half, and does not fail the start', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const broken = { ...db, transaction: () => Promise.reject(new Error('connection lost')) } as unknown as Database;
    const { lines, logger } = capturedLogger();
    const task = await startRetention({ database: broken, config: { auditRetentionDays: 30, operationRetentionDays: 30 }, logger, now: () => new Date(D0) });
    await task.stop();
    expect(lines.filter((line) => line.level === 40).map((line) => line.msg)).toEqual(['audit log: day partitions could not be made or dropped; trying again at the next run']);
  });
});
