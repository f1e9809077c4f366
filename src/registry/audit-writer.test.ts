// Unit tests of the audit writer (buffering, outages, spill and replay, close), on the embedded database or TEST_DATABASE_URL.
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createTestStore, openMigrated, TEST_DATABASE_URL, type TestStore } from '../../test/helpers/database.js';
import { openPoolDatabase, type Database, type Queryable } from './database.js';
import type { AuditEntry } from './audit-row.js';
import { queryAudit } from './audit-store.js';
import { createAuditWriter, type AuditWriter } from './audit-writer.js';
import { defaultSpillDir } from './audit-writer-options.js';

const T0 = Date.parse('2025-03-01T12:00:00.000Z');

function entry(i: number, overrides: Partial<AuditEntry> = {}): AuditEntry {
  return {
    at: new Date(T0 + i),
    requestId: `r-${i}`,
    traceId: null,
    client: 'web',
    subject: null,
    operationName: 'ProductPage',
    operationHash: 'abc',
    subgraphs: ['product'],
    status: 200,
    durationMs: 1.5,
    errorCodes: [],
    complete: true,
    ...overrides,
  };
}

const ids = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `r-${from + i}`);
/**
 * The writer's timers run on a fake clock where a test says so (`useFakeClock`); the database answers in
 * real time. One tick moves the fake clock on `ms` (when it is on), then lets one real turn of the
 * event loop pass, in which the database's answers arrive.
 */
async function tick(ms = 5): Promise<void> {
  if (vi.isFakeTimers()) await vi.advanceTimersByTimeAsync(ms);
  await new Promise((resolve) => setImmediate(resolve));
}

/** Only the writer's timers are faked: `setImmediate` (the event loop's turns) and `Date` stay real. */
const useFakeClock = () => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });

/**
 * Not test/helpers' `eventually`: that one waits on a real `setTimeout`, which the fake clock holds; this one
 * moves the fake clock a few ms per event-loop turn, so the writer's own timers fire while it waits.
 */
async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await tick();
  }
}

function connectionRefused(): Error {
  return Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
}

/** The real database behind a switch: while `down`, every query fails as a refused connection would; while `held`, queries wait. */
function switchable(db: Queryable) {
  const state = { down: false, calls: 0, held: undefined as Promise<void> | undefined };
  const wrapped: Queryable = {
    async query(sql: string, params?: unknown[]) {
      state.calls += 1;
      if (state.held) await state.held;
      if (state.down) throw connectionRefused();
      return db.query(sql, params);
    },
  };
  return { db: wrapped, state };
}

describe('audit log', () => {
  let store: TestStore;
  let db: Database;
  let spillCount = 0;
  const writers: AuditWriter[] = [];
  const newSpillDir = () => path.join(store.dataDir, `spill-${(spillCount += 1)}`);
  const track = (writer: AuditWriter) => (writers.push(writer), writer);

  async function storedIds(): Promise<string[]> {
    const { rows } = await db.query<{ request_id: string }>('select request_id from audit_log order by id');
    return rows.map((row) => row.request_id);
  }

  beforeAll(async () => {
    store = await createTestStore();
    db = await openMigrated(store);
  });
  beforeEach(async () => {
    await db.query('truncate audit_log restart identity');
  });
  afterEach(async () => {
    await Promise.all(writers.splice(0).map((writer) => writer.close().catch(() => {})));
    vi.useRealTimers();
  });
  afterAll(async () => {
    await db?.close();
    await store?.destroy();
  });

  describe('writing off the request path', () => {
    beforeEach(useFakeClock);

    it('records 1,000 entries without touching the database, then writes each exactly once, in order', async () => {
      const { db: counted, state } = switchable(db);
      const writer = track(createAuditWriter({ db: counted, spillDir: newSpillDir() }));
      const started = performance.now();
      for (let i = 0; i < 1_000; i += 1) writer.record(entry(i));
      const elapsedMs = performance.now() - started;
      expect(state.calls).toBe(0);
      expect(elapsedMs).toBeLessThan(250); // about 0.1 ms when the machine is idle; the bound only catches gross regressions
      expect(writer.stats().buffered).toBe(1_000);
      await writer.flush();
      expect(await storedIds()).toEqual(ids(0, 1_000));
      expect(writer.stats()).toEqual({ buffered: 0, written: 1_000, spilled: 0, replayed: 0, rejected: 0, dropped: 0, spilling: false });
    });

    it('writes a full batch without waiting for the interval, and the rest when the interval passes', async () => {
      const writer = track(createAuditWriter({ db, spillDir: newSpillDir(), batchSize: 10, flushIntervalMs: 60_000 }));
      for (let i = 0; i < 11; i += 1) writer.record(entry(i));
      await waitFor(async () => (await storedIds()).length === 10); // moves the fake clock a few ms per turn
      await vi.advanceTimersByTimeAsync(50_000);
      expect(writer.stats()).toMatchObject({ buffered: 1, written: 10 });
      await vi.advanceTimersByTimeAsync(10_000); // the interval has passed since the first entry
      await waitFor(() => writer.stats().written === 11);
      expect(await storedIds()).toEqual(ids(0, 11));
    });

    it('stores every column, and replaces values the table cannot hold rather than losing the row', async () => {
      const writer = track(createAuditWriter({ db, spillDir: newSpillDir() }));
      writer.record(entry(0, { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', subject: 'user-1', subgraphs: ['product', 'reviews'], status: 502, durationMs: 12.25, errorCodes: ['SUBGRAPH_ERROR'], complete: false }));
      writer.record(entry(1, { client: 'bad\u0000client', operationName: 'lone\ud800', at: new Date(Number.NaN), durationMs: Number.NaN, status: 1e12, operationHash: null }));
      await writer.flush();
      const [second, first] = await queryAudit(db, { limit: 2 }).then((rows) => rows.sort((a, b) => Number(b.id) - Number(a.id)));
      expect(first).toMatchObject({ at: new Date(T0), requestId: 'r-0', traceId: '4bf92f3577b34da6a3ce929d0e0e4736', client: 'web', subject: 'user-1', operationName: 'ProductPage', operationHash: 'abc', subgraphs: ['product', 'reviews'], status: 502, durationMs: 12.25, errorCodes: ['SUBGRAPH_ERROR'], complete: false });
      expect(second).toMatchObject({ requestId: 'r-1', client: 'bad\ufffdclient', operationName: 'lone\ufffd', operationHash: null, durationMs: 0, status: 0 });
      expect(Math.abs(second.at.getTime() - Date.now())).toBeLessThan(60_000);
    });

    it('sets aside a row the database refuses, and writes the others of its batch in order', async () => {
      // A data error (SQLSTATE 22P02) for any statement carrying r-5, as a value the table cannot take would raise.
      const picky: Queryable = {
        query(sql: string, params?: unknown[]) {
          if (String(params?.[0] ?? '').includes('"r-5"')) return Promise.reject(Object.assign(new Error('invalid input syntax'), { code: '22P02' }));
          return db.query(sql, params);
        },
      };
      const spillDir = newSpillDir();
      const errors: Error[] = [];
      const writer = track(createAuditWriter({ db: picky, spillDir, onError: (error) => errors.push(error) }));
      for (let i = 0; i < 10; i += 1) writer.record(entry(i));
      await writer.flush();
      expect(await storedIds()).toEqual(ids(0, 10).filter((id) => id !== 'r-5'));
      expect(writer.stats()).toMatchObject({ written: 9, rejected: 1, spilling: false });
      expect(readFileSync(path.join(spillDir, 'rejected.jsonl'), 'utf8')).toContain('"r-5');
      expect(errors.map((error) => error.message)).toEqual([expect.stringContaining('set aside')]);
    });

    it('rejects invalid options, naming each', () => {
      expect(() => createAuditWriter({ db, spillDir: '', batchSize: 0, flushIntervalMs: 1.5 })).toThrow(/spillDir.*batchSize.*flushIntervalMs/);
      expect(defaultSpillDir('/var/lib/switchyard')).toBe(path.join('/var/lib/switchyard', 'audit-spill'));
    });
  });

  describe('database outage', () => {
    beforeEach(useFakeClock);

    it('spills during an outage and replays after it: every entry once, in order', async () => {
      const { db: flaky, state } = switchable(db);
      const spillDir = newSpillDir();
      const errors: Error[] = [];
      const writer = track(createAuditWriter({ db: flaky, spillDir, batchSize: 25, flushIntervalMs: 5, probeIntervalMs: 20, probeMaxIntervalMs: 40, onError: (error) => errors.push(error) }));
      const recordSome = async (from: number, to: number) => {
        for (let i = from; i < to; i += 1) {
          writer.record(entry(i));
          if (i % 20 === 0) await tick(2);
        }
      };
      await recordSome(0, 200);
      state.down = true;
      await recordSome(200, 400);
      await waitFor(() => writer.stats().spilled > 0 && writer.stats().buffered === 0);
      expect(writer.stats().spilling).toBe(true);
      expect(readdirSync(spillDir).some((name) => name.endsWith('.jsonl'))).toBe(true);
      state.down = false;
      await recordSome(400, 600);
      await waitFor(() => !writer.stats().spilling);
      await writer.flush();
      expect(await storedIds()).toEqual(ids(0, 600));
      const stats = writer.stats();
      expect(stats.written + stats.replayed).toBe(600);
      expect(stats.spilled).toBe(stats.replayed);
      expect(readdirSync(spillDir)).toEqual([]);
      expect(errors).toHaveLength(1);
      expect(errors[0].message).toMatch(/spilling/);
    });

    it('resumes a replay interrupted by a second outage without losing or duplicating entries', async () => {
      const { db: flaky, state } = switchable(db);
      const spillDir = newSpillDir();
      const writer = track(createAuditWriter({ db: flaky, spillDir, batchSize: 10, flushIntervalMs: 5, probeIntervalMs: 10, probeMaxIntervalMs: 20 }));
      state.down = true;
      for (let i = 0; i < 300; i += 1) writer.record(entry(i));
      await writer.flush();
      expect(writer.stats().spilled).toBe(300);
      // Let the replay start, then fail it after a few batches, while entries keep coming.
      let inserts = 0;
      const original = flaky.query.bind(flaky);
      flaky.query = (sql: string, params?: unknown[]) => {
        if (sql.startsWith('insert') && !state.down && (inserts += 1) === 5) state.down = true;
        return original(sql, params);
      };
      state.down = false;
      for (let i = 300; i < 400; i += 1) {
        writer.record(entry(i));
        if (i % 10 === 0) await tick(2);
      }
      await waitFor(() => inserts >= 5);
      await tick(30); // down for a while: a probe fails and the next one waits longer
      state.down = false;
      await waitFor(() => !writer.stats().spilling);
      await writer.flush();
      expect(await storedIds()).toEqual(ids(0, 400));
    });

    it('replays at start a spill file left by a writer that crashed, setting aside a torn last line', async () => {
      const spillDir = newSpillDir();
      const { db: down, state } = switchable(db);
      state.down = true;
      const crashed = track(createAuditWriter({ db: down, spillDir, probeIntervalMs: 60_000 }));
      for (let i = 0; i < 300; i += 1) crashed.record(entry(i));
      await crashed.flush();
      expect(crashed.stats()).toMatchObject({ spilled: 300, spilling: true });
      const [segment] = readdirSync(spillDir);
      appendFileSync(path.join(spillDir, segment), '{"writer_id":"0b8f', 'utf8'); // killed mid-append

      const next = track(createAuditWriter({ db, spillDir }));
      expect(next.stats().spilling).toBe(true);
      await waitFor(() => !next.stats().spilling);
      expect(await storedIds()).toEqual(ids(0, 300));
      expect(next.stats()).toMatchObject({ replayed: 300, rejected: 1, written: 0 });
      expect(readdirSync(spillDir)).toEqual(['rejected.jsonl']);
    });

    it('spills synchronously when the buffer is full, dropping nothing', async () => {
      const { db: slow, state } = switchable(db);
      let release: () => void = () => {};
      state.held = new Promise<void>((resolve) => (release = resolve));
      const spillDir = newSpillDir();
      const writer = track(createAuditWriter({ db: slow, spillDir, bufferCapacity: 10, batchSize: 5, flushIntervalMs: 5 }));
      for (let i = 0; i < 5; i += 1) writer.record(entry(i));
      await waitFor(() => state.calls > 0); // r-0..r-4 are in flight, and the database does not answer
      for (let i = 5; i < 100; i += 1) writer.record(entry(i));
      expect(writer.stats().buffered).toBeLessThanOrEqual(10);
      expect(writer.stats().dropped).toBe(0);
      const spilledLines = readdirSync(spillDir).flatMap((name) => readFileSync(path.join(spillDir, name), 'utf8').split('\n').filter(Boolean));
      expect(spilledLines.length).toBeGreaterThanOrEqual(90);
      state.held = undefined;
      release();
      await waitFor(() => !writer.stats().spilling && writer.stats().buffered === 0);
      await writer.flush();
      expect(await storedIds()).toEqual(ids(0, 100));
      const stats = writer.stats();
      expect(stats.written + stats.replayed).toBe(100);
      expect(stats.dropped).toBe(0);
    });
  });

  describe.runIf(TEST_DATABASE_URL)('real PostgreSQL outage', () => {
    it('loses nothing when the writer’s connections are terminated while it writes', async () => {
      const applicationName = `switchyard_audit_${randomBytes(4).toString('hex')}`;
      const url = new URL(store.databaseUrl!);
      url.searchParams.set('application_name', applicationName);
      const writerDb = await openPoolDatabase({ connectionString: url.toString(), kind: 'postgres', maxConnections: 2 });
      // The admin session sees the test's schema (its URL's search_path) and has another application name.
      const admin = new pg.Client({ connectionString: store.databaseUrl });
      await admin.connect();
      // Only this test's backends: other test files share the server.
      const terminateWriter = async () =>
        (await admin.query<{ n: number }>(
          'select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where application_name = $1 and pid <> pg_backend_pid()',
          [applicationName],
        )).rows[0].n;
      let n = 0;
      const recordFor = async (ms: number, terminateEvery = 0) => {
        let terminated = 0;
        for (let round = 1, until = Date.now() + ms; Date.now() < until; round += 1) {
          for (let i = 0; i < 10; i += 1) writer.record(entry(n++));
          // Real time on purpose: the sessions are killed at random moments of a real server's work.
          await new Promise((resolve) => setTimeout(resolve, 1));
          if (terminateEvery && round % terminateEvery === 0) terminated += await terminateWriter();
        }
        return terminated;
      };
      const writer = track(createAuditWriter({ db: writerDb, spillDir: newSpillDir(), batchSize: 20, flushIntervalMs: 2, probeIntervalMs: 20, probeMaxIntervalMs: 50 }));
      try {
        await recordFor(100);
        // Certainly mid-INSERT once: hold the table so the writer's INSERT waits, then kill its session.
        await admin.query('begin');
        await admin.query('lock table audit_log in share row exclusive mode');
        await recordFor(20);
        await waitFor(async () => (await admin.query("select 1 from pg_stat_activity where application_name = $1 and wait_event_type = 'Lock'", [applicationName])).rowCount === 1);
        expect(await terminateWriter()).toBeGreaterThan(0);
        await admin.query('commit');
        // And at random moments while it writes and replays.
        expect(await recordFor(600, 10)).toBeGreaterThan(0);
        await waitFor(() => !writer.stats().spilling);
        await writer.flush();
        expect(writer.stats().spilled).toBeGreaterThan(0);
        expect(await storedIds()).toEqual(ids(0, n));
      } finally {
        await admin.end();
        await writer.close();
        await writerDb.close();
      }
    });
  });

  describe('close', () => {
    it('flushes everything', async () => {
      const writer = createAuditWriter({ db, spillDir: newSpillDir(), flushIntervalMs: 60_000 });
      for (let i = 0; i < 50; i += 1) writer.record(entry(i));
      await writer.close();
      expect(await storedIds()).toEqual(ids(0, 50));
      expect(writer.stats().buffered).toBe(0);
    });

    it('spills what the database cannot take, and entries recorded after close, for the next process', async () => {
      const { db: down, state } = switchable(db);
      state.down = true;
      const spillDir = newSpillDir();
      const writer = createAuditWriter({ db: down, spillDir, flushIntervalMs: 60_000 });
      for (let i = 0; i < 50; i += 1) writer.record(entry(i));
      await writer.close();
      writer.record(entry(50));
      expect(writer.stats()).toMatchObject({ buffered: 0, spilled: 51 });
      const next = track(createAuditWriter({ db, spillDir }));
      await waitFor(() => !next.stats().spilling);
      expect(await storedIds()).toEqual(ids(0, 51));
    });

    it('does not wait longer than closeTimeoutMs for a database that hangs, and loses nothing', async () => {
      const { db: hung, state } = switchable(db);
      let release: () => void = () => {};
      state.held = new Promise<void>((resolve) => (release = resolve));
      const spillDir = newSpillDir();
      const writer = createAuditWriter({ db: hung, spillDir, batchSize: 10, closeTimeoutMs: 50 });
      for (let i = 0; i < 25; i += 1) writer.record(entry(i));
      await waitFor(() => state.calls > 0); // r-0..r-9 in flight, never answered
      const started = Date.now();
      await writer.close();
      expect(Date.now() - started).toBeLessThan(1_000);
      // All 25 are on disk; the 10 in flight count as spilled once their INSERT has failed.
      expect(writer.stats()).toMatchObject({ buffered: 0, spilled: 15, dropped: 0 });
      state.down = true;
      release(); // the hung INSERT fails at last; nothing restarts
      await waitFor(() => writer.stats().spilled === 25);
      const next = track(createAuditWriter({ db, spillDir }));
      await waitFor(() => !next.stats().spilling);
      expect(await storedIds()).toEqual(ids(0, 25));
    });

    it('keeps no timer holding the process open, and leaves none behind', async () => {
      const failing: Queryable = { query: () => Promise.reject(connectionRefused()) };
      const setTimeoutSpy = vi.spyOn(globalThis, 'setTimeout');
      const setImmediateSpy = vi.spyOn(globalThis, 'setImmediate');
      const outage = createAuditWriter({ db: failing, spillDir: newSpillDir(), batchSize: 10, flushIntervalMs: 5, probeIntervalMs: 5 });
      try {
        for (let i = 0; i < 25; i += 1) outage.record(entry(i)); // flush timer, full-batch kick, then a probe after the failure
        await outage.flush(); // the INSERT failed: the probe is armed
        expect(outage.stats().spilling).toBe(true);
        // The writer's own timers, told apart by their callbacks' names: every one unref'd.
        const created = (spy: typeof setTimeoutSpy | typeof setImmediateSpy) =>
          spy.mock.calls.map((call, i) => ({ name: (call[0] as () => void).name, handle: spy.mock.results[i].value as { hasRef(): boolean } }));
        const own = [...created(setTimeoutSpy), ...created(setImmediateSpy)].filter(({ name }) => ['flushTick', 'probeTick', 'flushFullBatch'].includes(name));
        expect(new Set(own.map(({ name }) => name))).toEqual(new Set(['flushTick', 'probeTick', 'flushFullBatch']));
        expect(own.filter(({ handle }) => handle.hasRef())).toEqual([]);
      } finally {
        setTimeoutSpy.mockRestore();
        setImmediateSpy.mockRestore();
      }
      await outage.close();

      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate', 'setInterval', 'clearInterval'] });
      try {
        const { db: flaky, state } = switchable(db);
        const writer = createAuditWriter({ db: flaky, spillDir: newSpillDir(), batchSize: 2 });
        writer.record(entry(0));
        writer.record(entry(1));
        expect(vi.getTimerCount()).toBe(2); // the interval flush and the full-batch kick
        state.down = true;
        await writer.flush(); // fails, spills, arms a probe
        expect(vi.getTimerCount()).toBeGreaterThan(0);
        await writer.close();
        expect(vi.getTimerCount()).toBe(0);
      } finally {
        vi.useRealTimers();
      }
    });
  });
});
