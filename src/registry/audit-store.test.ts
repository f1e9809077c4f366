// Unit tests of the audit store's reader behind `switchyard audit` (queryAudit), on the embedded database or TEST_DATABASE_URL.
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestStore, openMigrated, type TestStore } from '../../test/helpers/database.js';
import type { Database } from './database.js';
import type { AuditEntry } from './audit-row.js';
import { queryAudit } from './audit-store.js';
import { createAuditWriter } from './audit-writer.js';

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

describe('audit store', () => {
  let store: TestStore;
  let db: Database;
  let spillCount = 0;
  const newSpillDir = () => path.join(store.dataDir, `spill-${(spillCount += 1)}`);

  beforeAll(async () => {
    store = await createTestStore();
    db = await openMigrated(store);
  });
  beforeEach(async () => {
    await db.query('truncate audit_log restart identity');
  });
  afterAll(async () => {
    await db?.close();
    await store?.destroy();
  });

  describe('queryAudit', () => {
    beforeEach(async () => {
      const writer = createAuditWriter({ db, spillDir: newSpillDir() });
      // Recorded out of time order: the query orders by request time, not by insertion.
      for (const i of [3, 0, 4, 1, 2, 5]) writer.record(entry(i, { at: new Date(T0 + i * 60_000), operationName: i % 2 === 0 ? 'ProductPage' : 'Checkout' }));
      writer.record(entry(6, { at: new Date(T0 + 6 * 60_000), operationName: null }));
      await writer.close();
    });

    it('returns the newest first, up to the limit', async () => {
      expect((await queryAudit(db)).map((row) => row.requestId)).toEqual(['r-6', 'r-5', 'r-4', 'r-3', 'r-2', 'r-1', 'r-0']);
      expect((await queryAudit(db, { limit: 2 })).map((row) => row.requestId)).toEqual(['r-6', 'r-5']);
    });

    it('filters by time and by operation', async () => {
      expect((await queryAudit(db, { since: new Date(T0 + 4 * 60_000) })).map((row) => row.requestId)).toEqual(['r-6', 'r-5', 'r-4']);
      expect((await queryAudit(db, { operation: 'Checkout' })).map((row) => row.requestId)).toEqual(['r-5', 'r-3', 'r-1']);
      expect((await queryAudit(db, { operation: 'ProductPage', since: new Date(T0 + 60_000), limit: 1 })).map((row) => row.requestId)).toEqual(['r-4']);
    });

    it('defaults to 50 rows and refuses a bad limit', async () => {
      const writer = createAuditWriter({ db, spillDir: newSpillDir() });
      for (let i = 100; i < 160; i += 1) writer.record(entry(i));
      await writer.close();
      expect(await queryAudit(db)).toHaveLength(50);
      await expect(queryAudit(db, { limit: 0 })).rejects.toThrow(RangeError);
    });
  });
});
