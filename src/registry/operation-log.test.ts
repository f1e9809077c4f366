// Unit tests of the operation recorder (its discovery limits too), listOperations and pruning, on the embedded database or TEST_DATABASE_URL.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestStore, openMigrated, type TestStore } from '../../test/helpers/database.js';
import type { Database } from './database.js';
import { listOperations, mostUsedOperations, topOperationsByClient } from './operation-log.js';
import { createOperationRecorder, type OperationSighting, type UnrecordedReason } from './operation-recorder.js';
import { pruneOperations } from './operation-retention.js';

const sighting = (overrides: Partial<OperationSighting> = {}): OperationSighting => ({
  hash: 'a'.repeat(64),
  normalised: '{\n  product(id: "1") {\n    name\n  }\n}',
  operationName: null,
  operationType: 'query',
  clientName: 'web',
  clientVersion: '1.0',
  ...overrides,
});

describe('operation recorder', () => {
  let store: TestStore;
  let db: Database;
  beforeAll(async () => {
    store = await createTestStore();
    db = await openMigrated(store);
  });
  afterAll(async () => {
    await db?.close();
    await store?.destroy();
  });
  beforeEach(async () => {
    await db.query('delete from operation_counts');
    await db.query('delete from operations');
  });

  it('counts sightings in memory and writes one row per document and client, with counts per day', async () => {
    const recorder = createOperationRecorder({ db, flushIntervalMs: 60_000 });
    for (let i = 0; i < 5; i += 1) recorder.record(sighting());
    recorder.record(sighting({ clientName: 'ios', clientVersion: '2.0' }));
    recorder.record(sighting({ at: new Date(Date.now() - 3 * 86_400_000) }));
    expect(recorder.stats()).toMatchObject({ recorded: 0, pending: 3 });
    await recorder.flush();
    expect(recorder.stats()).toMatchObject({ recorded: 7, pending: 0 });
    // A second batch adds to the counts already stored.
    recorder.record(sighting());
    await recorder.close();
    const all = await listOperations(db);
    expect(all.map(({ clientName, clientVersion, count }) => ({ clientName, clientVersion, count }))).toEqual([
      { clientName: 'web', clientVersion: '1.0', count: 7 },
      { clientName: 'ios', clientVersion: '2.0', count: 1 },
    ]);
    // The window counts whole days from its first one: the sighting three days ago falls outside a 1-day window.
    const recent = await listOperations(db, { since: new Date(Date.now() - 86_400_000), client: 'web' });
    expect(recent.map((o) => o.count)).toEqual([6]);
    expect(all[0].firstSeen.getTime()).toBeLessThan(all[0].lastSeen.getTime());
  });

  it('keeps the counts of a failed write and writes them with the next one', async () => {
    let fail = true;
    const flaky = { ...db, transaction: <T,>(fn: Parameters<Database['transaction']>[0]) => (fail ? Promise.reject(new Error('connection lost')) : db.transaction(fn as never)) as Promise<T> } as Database;
    const errors: Error[] = [];
    const recorder = createOperationRecorder({ db: flaky, flushIntervalMs: 60_000, onError: (error) => errors.push(error) });
    recorder.record(sighting());
    recorder.record(sighting());
    await expect(recorder.flush()).rejects.toThrow('connection lost');
    recorder.record(sighting());
    fail = false;
    await recorder.close();
    expect(errors).toHaveLength(1);
    expect((await listOperations(db)).map((o) => o.count)).toEqual([3]);
  });

  it('drops new documents past maxPending but keeps counting the ones it holds', async () => {
    const recorder = createOperationRecorder({ db, flushIntervalMs: 60_000, maxPending: 1 });
    recorder.record(sighting());
    recorder.record(sighting({ hash: 'b'.repeat(64) }));
    recorder.record(sighting());
    expect(recorder.stats()).toEqual({ recorded: 0, pending: 1, dropped: 1, unrecorded: 0 });
    await recorder.close();
    expect(recorder.stats()).toEqual({ recorded: 2, pending: 0, dropped: 1, unrecorded: 0 });
    expect((await listOperations(db)).map((o) => [o.hash[0], o.count])).toEqual([['a', 2]]);
  });

  describe('the most used operations', () => {
    const B = 'b'.repeat(64);
    const C = 'c'.repeat(64);
    async function seed(): Promise<void> {
      const recorder = createOperationRecorder({ db, flushIntervalMs: 60_000 });
      // A: 3 by web 1.0, 2 by web 2.0, 1 by ios; B: 4 by ios; C: 1 by web, and 9 three days ago (outside a day's window).
      for (let i = 0; i < 3; i += 1) recorder.record(sighting({ operationName: 'A' }));
      for (let i = 0; i < 2; i += 1) recorder.record(sighting({ operationName: 'A', clientVersion: '2.0' }));
      recorder.record(sighting({ operationName: 'A', clientName: 'ios' }));
      for (let i = 0; i < 4; i += 1) recorder.record(sighting({ hash: B, normalised: '{ b }', operationName: 'B', clientName: 'ios' }));
      recorder.record(sighting({ hash: C, normalised: '{ c }', operationName: 'C' }));
      for (let i = 0; i < 9; i += 1) recorder.record(sighting({ hash: C, normalised: '{ c }', operationName: 'C', at: new Date(Date.now() - 3 * 86_400_000) }));
      await recorder.close();
    }

    it('sums every client of a document over the window, most used first, at most the limit', async () => {
      await seed();
      const since = new Date(Date.now() - 86_400_000);
      const top = await mostUsedOperations(db, { since, limit: 2 });
      expect(top.map(({ operationName, count }) => ({ operationName, count }))).toEqual([
        { operationName: 'A', count: 6 },
        { operationName: 'B', count: 4 },
      ]);
      expect(top[0]!.normalised).toBe(sighting().normalised);
      expect(await mostUsedOperations(db, { since, limit: 0 })).toEqual([]);
    });

    it('ranks clients by executions, each with its most executed operations, versions summed', async () => {
      await seed();
      const clients = await topOperationsByClient(db, { since: new Date(Date.now() - 86_400_000), clients: 5, perClient: 1 });
      expect(clients.map(({ clientName, total, operations }) => ({ clientName, total, operations: operations.map((o) => [o.operationName, o.count]) }))).toEqual([
        { clientName: 'web', total: 6, operations: [['A', 5]] },
        { clientName: 'ios', total: 5, operations: [['B', 4]] },
      ]);
      expect(await topOperationsByClient(db, { since: new Date(Date.now() - 86_400_000), clients: 1, perClient: 5 })).toHaveLength(1);
    });
  });

  describe('discovery limits', () => {
    /** 10:00 UTC on a fixed day: the hour new documents are counted in. */
    const H = Date.parse('2025-06-01T10:00:00.000Z');
    const doc = (n: number, overrides: Partial<OperationSighting> = {}) =>
      sighting({ hash: n.toString(16).padStart(64, '0'), normalised: `{ product(id: "${n}") { name } }`, at: new Date(H + 60_000), ...overrides });
    const tally = () => {
      const told: Record<string, number> = {};
      const onUnrecorded = (client: string, executions: number, reason: UnrecordedReason) => {
        told[`${client} ${reason}`] = (told[`${client} ${reason}`] ?? 0) + executions;
      };
      return { told, onUnrecorded };
    };
    async function rows(): Promise<{ operations: Record<string, number>; counts: number }> {
      const { rows: operations } = await db.query<{ client_name: string; n: number }>('select client_name, count(*)::int as n from operations group by client_name');
      const { rows: counts } = await db.query<{ n: number }>('select count(*)::int as n from operation_counts');
      return { operations: Object.fromEntries(operations.map((row) => [row.client_name, row.n])), counts: counts[0].n };
    }

    it('records a client’s first new documents of the hour, serves and counts the rest, and keeps counting known ones', async () => {
      const { told, onUnrecorded } = tally();
      const recorder = createOperationRecorder({ db, flushIntervalMs: 60_000, discoveryLimitPerHour: 3, discoveryTotalLimitPerHour: 100, onUnrecorded });
      for (let n = 0; n < 10; n += 1) recorder.record(doc(n, { at: new Date(H + n * 1000) }));
      recorder.record(doc(100, { clientName: 'ios' }));
      await recorder.flush();
      expect(await rows()).toEqual({ operations: { web: 3, ios: 1 }, counts: 4 });
      // The oldest sightings win: documents 0, 1 and 2.
      expect((await listOperations(db, { client: 'web' })).map((o) => o.normalised).sort()).toEqual([0, 1, 2].map((n) => `{ product(id: "${n}") { name } }`));
      expect(recorder.stats()).toMatchObject({ recorded: 4, unrecorded: 7 });
      expect(told).toEqual({ 'web discovery_limit': 7 });

      // Later in the hour: known documents keep counting, a new one is still refused; the next hour admits three more.
      recorder.record(doc(0, { at: new Date(H + 30 * 60_000) }));
      recorder.record(doc(0, { at: new Date(H + 31 * 60_000) }));
      recorder.record(doc(11, { at: new Date(H + 32 * 60_000) }));
      for (let n = 20; n < 25; n += 1) recorder.record(doc(n, { at: new Date(H + 3_600_000 + n) }));
      await recorder.close();
      expect(await rows()).toEqual({ operations: { web: 6, ios: 1 }, counts: 7 });
      expect((await listOperations(db, { client: 'web' })).find((o) => o.hash === doc(0).hash)?.count).toBe(3);
      expect(told).toEqual({ 'web discovery_limit': 7 + 1 + 2 });
    });

    it('leaves the tables within the limits whatever is sent: 20,000 distinct documents under 200 made-up client names', async () => {
      const { told, onUnrecorded } = tally();
      const recorder = createOperationRecorder({ db, flushIntervalMs: 60_000, maxPending: 1_000, discoveryLimitPerHour: 5, discoveryTotalLimitPerHour: 40, onUnrecorded });
      for (let n = 0; n < 20_000; n += 1) {
        recorder.record(doc(n, { clientName: `bot-${n % 200}`, at: new Date(H + (n % 3_600) * 1000) }));
        // The router's interval, every thousand sightings here.
        if (n % 1_000 === 999) await recorder.flush();
      }
      await recorder.close();
      const { operations, counts } = await rows();
      const total = Object.values(operations).reduce((sum, n) => sum + n, 0);
      expect(total).toBe(40);
      expect(Math.max(...Object.values(operations))).toBeLessThanOrEqual(5);
      expect(counts).toBe(40);
      expect(recorder.stats()).toMatchObject({ recorded: 40, unrecorded: 20_000 - 40, dropped: 0 });
      expect(Object.values(told).reduce((sum, n) => sum + n, 0)).toBe(20_000 - 40);
    });

    it('counts what a full backlog turns away, by client', async () => {
      const { told, onUnrecorded } = tally();
      const recorder = createOperationRecorder({ db, flushIntervalMs: 60_000, maxPending: 10, onUnrecorded });
      for (let n = 0; n < 25; n += 1) recorder.record(doc(n, { clientName: n % 2 === 0 ? 'web' : 'ios' }));
      expect(recorder.stats()).toMatchObject({ pending: 10, dropped: 15 });
      expect(told).toEqual({ 'web backlog': 8, 'ios backlog': 7 });
      await recorder.close();
    });

    it('holds across routers writing at once: the hour’s places are taken once', async () => {
      const pools = [db, await store.open(), await store.open()];
      try {
        const recorders = pools.map((pool) => createOperationRecorder({ db: pool, flushIntervalMs: 60_000, discoveryLimitPerHour: 7, discoveryTotalLimitPerHour: 100 }));
        recorders.forEach((recorder, r) => {
          for (let n = 0; n < 20; n += 1) recorder.record(doc(r * 1_000 + n));
        });
        await Promise.all(recorders.map((recorder) => recorder.close()));
        expect(await rows()).toEqual({ operations: { web: 7 }, counts: 7 });
        expect(recorders.reduce((sum, recorder) => sum + recorder.stats().unrecorded, 0)).toBe(60 - 7);
      } finally {
        await Promise.all(pools.slice(1).map((pool) => pool.close()));
      }
    });
  });

  describe('retention', () => {
    const NOW = Date.parse('2025-06-30T12:00:00.000Z');
    const daysAgo = (days: number) => new Date(NOW - days * 86_400_000);

    it('deletes operations not seen within the retention and counts of days before it, never trusted documents', async () => {
      await db.query('delete from trusted_documents');
      await db.query(`insert into trusted_documents (id, document, sha256, client_name) values ('old-doc', '{ old }', $1, 'web')`, ['f'.repeat(64)]);
      const recorder = createOperationRecorder({ db, flushIntervalMs: 60_000 });
      recorder.record(sighting({ hash: 'a'.repeat(64), at: daysAgo(40) }));
      recorder.record(sighting({ hash: 'b'.repeat(64), at: daysAgo(35) }));
      recorder.record(sighting({ hash: 'b'.repeat(64), at: daysAgo(1) }));
      recorder.record(sighting({ hash: 'c'.repeat(64), at: daysAgo(29) }));
      await recorder.close();

      expect(await pruneOperations(db, { now: new Date(NOW), retentionDays: 30 })).toEqual({ operations: 1, counts: 2 });
      const left = await listOperations(db);
      expect(left.map((o) => [o.hash[0], o.count]).sort()).toEqual([['b', 1], ['c', 1]]);
      expect((await db.query('select id from trusted_documents')).rows).toEqual([{ id: 'old-doc' }]);
      // A second run finds nothing more.
      expect(await pruneOperations(db, { now: new Date(NOW), retentionDays: 30 })).toEqual({ operations: 0, counts: 0 });
      await expect(pruneOperations(db, { now: new Date(NOW), retentionDays: 0 })).rejects.toThrow(RangeError);
    });
  });
});
