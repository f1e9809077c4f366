// Tests of the audit log's day partitions: the migration of an existing log, partitions made ahead and dropped at retention (fake clock), on the embedded database or TEST_DATABASE_URL.
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestStore, openMigrated, type TestStore } from '../../test/helpers/database.js';
import type { Database, Queryable } from './database.js';
import { loadMigrations, migrate } from './migrate.js';
import { listAuditPartitions, maintainAuditPartitions } from './audit-partitions.js';
import { insertAuditRows, queryAudit } from './audit-store.js';
import { toRow, type AuditEntry } from './audit-row.js';
import { createAuditWriter } from './audit-writer.js';

const DAY = 86_400_000;
/** Day 0 of the fake clock: midnight UTC. */
const D0 = Date.parse('2025-03-10T00:00:00.000Z');
const day = (n: number) => new Date(D0 + n * DAY).toISOString().slice(0, 10);
const at = (n: number, hours = 12) => new Date(D0 + n * DAY + hours * 3_600_000);

function entry(requestId: string, when: Date): AuditEntry {
  return { at: when, requestId, client: 'web', operationName: 'ProductPage', subgraphs: ['product'], status: 200, durationMs: 1, errorCodes: [], complete: true };
}

async function partitionDays(db: Queryable): Promise<string[]> {
  return (await listAuditPartitions(db)).map((start) => new Date(start).toISOString().slice(0, 10));
}

/** Which table holds each request id: a day partition or `audit_log_default`. */
async function homes(db: Queryable): Promise<Record<string, string>> {
  const { rows } = await db.query<{ request_id: string; home: string }>('select request_id, tableoid::regclass::text as home from audit_log');
  return Object.fromEntries(rows.map((row) => [row.request_id, row.home.replace(/^.*\./, '')]));
}

/** Everything a row holds, in id order, as one digest: equal before and after means no row lost or changed. */
const DIGEST = `select count(*)::int as rows, md5(coalesce(string_agg(concat_ws('|', id, extract(epoch from at), request_id, trace_id, client, subject, operation_name,
  operation_hash, subgraphs::text, status, duration_ms, error_codes::text, complete, writer_id, writer_seq, detail::text), E'\\n' order by id), '')) as digest from audit_log`;

describe('audit log partitions', () => {
  describe('the migration of an existing log', () => {
    let store: TestStore;
    let db: Database;
    beforeAll(async () => {
      store = await createTestStore();
      db = await store.open();
    });
    afterAll(async () => {
      await db?.close();
      await store?.destroy();
    });

    it('moves every row of the unpartitioned log into a partition of its day, ids and keys kept', async () => {
      const all = await loadMigrations();
      expect(all.find((m) => m.version === 11)?.name).toBe('audit_log_partitions');
      await migrate(db, all.filter((m) => m.version < 11));

      // 3,000 rows in the old shape over five days, with nulls, arrays and a note's detail; and one row of another writer.
      const writer = randomUUID();
      await db.query(
        `insert into audit_log (at, request_id, trace_id, client, subject, operation_name, operation_hash, subgraphs, status, duration_ms, error_codes, complete, writer_id, writer_seq, detail)
         select $1::timestamptz + (i % 5) * interval '1 day' + (i * interval '7 seconds'), 'r-' || i, case when i % 3 = 0 then null else 't-' || i end,
                'web', case when i % 2 = 0 then null else 'user-' || i end, case when i % 4 = 0 then null else 'Op' || (i % 7) end, md5(i::text),
                array['product', 'reviews'], 200 + (i % 3), i / 10.0, case when i % 50 = 0 then array['TIMEOUT'] else '{}' end, i % 50 <> 0,
                $2::uuid, i, case when i % 500 = 0 then jsonb_build_object('broken', array['Op' || i]) else null end
           from generate_series(1, 3000) as i`,
        [new Date(D0).toISOString(), writer],
      );
      await db.query(`insert into audit_log (at, request_id, status, duration_ms, complete, writer_id, writer_seq) values ($1, 'other-writer', 0, 0, true, $2, 1)`, [at(2).toISOString(), randomUUID()]);
      const before = (await db.query<{ rows: number; digest: string }>(DIGEST)).rows[0];
      const maxId = Number((await db.query<{ max: string }>('select max(id) as max from audit_log')).rows[0].max);
      expect(before.rows).toBe(3001);

      expect(await migrate(db)).toEqual(all.filter((m) => m.version >= 11).map((m) => m.version));

      expect((await db.query<{ rows: number; digest: string }>(DIGEST)).rows[0]).toEqual(before);
      expect((await db.query<{ partitioned: boolean }>(`select relkind = 'p' as partitioned from pg_class where oid = 'audit_log'::regclass`)).rows[0].partitioned).toBe(true);
      expect(await partitionDays(db)).toEqual([day(0), day(1), day(2), day(3), day(4)]);
      expect((await db.query('select 1 from audit_log_default')).rowCount).toBe(0);
      expect((await db.query(`select 1 from pg_class where relname = 'audit_log_unpartitioned'`)).rowCount).toBe(0);

      // New rows go on numbering from the old sequence, and a replay of an old row's key is still a no-op.
      const old = (await db.query<{ at: Date; writer_seq: string }>(`select at, writer_seq from audit_log where writer_id = $1 and writer_seq = 42`, [writer])).rows[0];
      const replay = { ...toRow(entry('replayed', old.at), writer, 42), at: old.at.toISOString() };
      const fresh = toRow(entry('fresh', at(1)), writer, 3001);
      expect(await insertAuditRows(db, [replay, fresh], undefined, () => {})).toBe(1);
      const { rows } = await db.query<{ id: string; request_id: string }>(`select id, request_id from audit_log where writer_id = $1 and writer_seq in (42, 3001) order by writer_seq`, [writer]);
      expect(rows.map((row) => row.request_id)).toEqual(['r-42', 'fresh']);
      expect(Number(rows[1].id)).toBeGreaterThan(maxId);
      // `switchyard audit` reads the parent: every partition, newest first.
      expect((await queryAudit(db, { limit: 3 })).map((row) => row.at.getTime())).toEqual([...(await db.query<{ at: Date }>('select at from audit_log order by at desc, id desc limit 3')).rows.map((row) => row.at.getTime())]);
    });
  });

  describe('maintenance', () => {
    let store: TestStore;
    let db: Database;
    let spills = 0;
    beforeAll(async () => {
      store = await createTestStore();
      db = await openMigrated(store);
    });
    beforeEach(async () => {
      for (const start of await listAuditPartitions(db)) await db.query(`drop table audit_log_p${new Date(start).toISOString().slice(0, 10).replaceAll('-', '')}`);
      await db.query('truncate audit_log');
    });
    afterAll(async () => {
      await db?.close();
      await store?.destroy();
    });

    async function write(...entries: AuditEntry[]): Promise<void> {
      const writer = createAuditWriter({ db, spillDir: path.join(store.dataDir, `spill-${(spills += 1)}`) });
      for (const e of entries) writer.record(e);
      await writer.close();
      expect(writer.stats()).toMatchObject({ written: entries.length, spilled: 0, rejected: 0 });
    }

    it('makes today and the days ahead, and drops a day once all of it is past retention', async () => {
      expect(await maintainAuditPartitions(db, { now: at(0, 15), retentionDays: 30, aheadDays: 3 })).toEqual({ skipped: false, created: [day(0), day(1), day(2), day(3)], dropped: [], moved: 0, deleted: 0 });
      // Running again the same day changes nothing.
      expect(await maintainAuditPartitions(db, { now: at(0, 16), retentionDays: 30, aheadDays: 3 })).toMatchObject({ created: [], dropped: [] });
      await write(entry('d0-a', at(0, 1)), entry('d0-b', at(0, 23)), entry('d1', at(1)), entry('d3', at(3)));
      expect(await homes(db)).toEqual({ 'd0-a': `audit_log_p${day(0).replaceAll('-', '')}`, 'd0-b': `audit_log_p${day(0).replaceAll('-', '')}`, d1: `audit_log_p${day(1).replaceAll('-', '')}`, d3: `audit_log_p${day(3).replaceAll('-', '')}` });

      // 30 days on (the router ran meanwhile, say, but made nothing in between): day 0 is kept while any of it is younger than 30 days.
      expect(await maintainAuditPartitions(db, { now: at(30, 23.99), retentionDays: 30, aheadDays: 3 })).toMatchObject({ created: [day(30), day(31), day(32), day(33)], dropped: [] });
      expect((await queryAudit(db)).map((row) => row.requestId)).toEqual(['d3', 'd1', 'd0-b', 'd0-a']);
      // Midnight of day 31: all of day 0 is 30 days old; its partition goes whole, the rest stays.
      expect(await maintainAuditPartitions(db, { now: at(31, 0), retentionDays: 30, aheadDays: 3 })).toMatchObject({ created: [day(34)], dropped: [day(0)], deleted: 0 });
      expect((await queryAudit(db)).map((row) => row.requestId)).toEqual(['d3', 'd1']);
      expect(await partitionDays(db)).toEqual([day(1), day(2), day(3), day(30), day(31), day(32), day(33), day(34)]);
      // A long pause: everything before the horizon goes in one run.
      expect(await maintainAuditPartitions(db, { now: at(40, 6), retentionDays: 7, aheadDays: 0 })).toMatchObject({ created: [day(40)], dropped: [day(1), day(2), day(3), day(30), day(31), day(32)] });
      expect(await queryAudit(db)).toEqual([]);
    });

    it('files rows that met no partition of their day, and deletes those past retention', async () => {
      await maintainAuditPartitions(db, { now: at(0), retentionDays: 30, aheadDays: 1 });
      // Day 5 and day 400 have no partition yet; day -40 is past retention: all three land in the default partition.
      await write(entry('day0', at(0)), entry('day5', at(5)), entry('day5-late', at(5, 23)), entry('day400', at(400)), entry('day-40', at(-40)));
      expect(await homes(db)).toMatchObject({ day5: 'audit_log_default', 'day5-late': 'audit_log_default', day400: 'audit_log_default', 'day-40': 'audit_log_default' });

      expect(await maintainAuditPartitions(db, { now: at(7), retentionDays: 30, aheadDays: 1 })).toEqual({ skipped: false, created: [day(5), day(7), day(8)], dropped: [], moved: 2, deleted: 1 });
      const p5 = `audit_log_p${day(5).replaceAll('-', '')}`;
      expect(await homes(db)).toEqual({ day0: `audit_log_p${day(0).replaceAll('-', '')}`, day5: p5, 'day5-late': p5, day400: 'audit_log_default' });
      // The moved rows keep their key: a replay of one is still a no-op.
      const { rows } = await db.query<{ writer_id: string; writer_seq: string; at: Date }>(`select writer_id, writer_seq, at from audit_log where request_id = 'day5'`);
      const replay = { ...toRow(entry('day5', rows[0].at), rows[0].writer_id, Number(rows[0].writer_seq)), at: rows[0].at.toISOString() };
      expect(await insertAuditRows(db, [replay], undefined, () => {})).toBe(0);
      // Day 400's row waits in the default partition until its day comes within the days made ahead.
      expect(await maintainAuditPartitions(db, { now: at(399), retentionDays: 30, aheadDays: 1 })).toMatchObject({ created: [day(399), day(400)], moved: 1, dropped: [day(0), day(1), day(5), day(7), day(8)] });
      expect(await homes(db)).toEqual({ day400: `audit_log_p${day(400).replaceAll('-', '')}` });
    });

    it('lets several routers run it at once: one does the work, the others find it done or skip', async () => {
      const others = await Promise.all([store.open(), store.open()]);
      try {
        const reports = await Promise.all([db, ...others, db, ...others].map((pool) => maintainAuditPartitions(pool, { now: at(0), retentionDays: 30, aheadDays: 3 })));
        expect(reports.flatMap((report) => report.created).sort()).toEqual([day(0), day(1), day(2), day(3)]);
        expect(await partitionDays(db)).toEqual([day(0), day(1), day(2), day(3)]);
      } finally {
        await Promise.all(others.map((other) => other.close()));
      }
    });

    it('refuses a retention under a day', async () => {
      await expect(maintainAuditPartitions(db, { now: at(0), retentionDays: 0 })).rejects.toThrow(RangeError);
    });
  });
});
