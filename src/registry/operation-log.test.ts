// Unit tests of the operation recorder and listOperations, on the embedded database or TEST_DATABASE_URL.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestStore, openMigrated, type TestStore } from '../../test/helpers/database.js';
import type { Database } from './database.js';
import { createOperationRecorder, listOperations, mostUsedOperations, topOperationsByClient, type OperationSighting } from './operation-log.js';

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
    expect(recorder.stats()).toMatchObject({ recorded: 7, pending: 3 });
    await recorder.flush();
    expect(recorder.stats().pending).toBe(0);
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
    expect(recorder.stats()).toEqual({ recorded: 2, pending: 1, dropped: 1 });
    await recorder.close();
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
});
