// Unit tests of the database layer: concurrent queries staying apart (parameters inlined on the embedded server), a restart of PostgreSQL during a transaction.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestStore, TEST_DATABASE_URL, type TestStore } from '../../test/helpers/database.js';
import type { Database } from './database.js';

describe('concurrent parameterised queries', () => {
  let store: TestStore;
  const pools: Database[] = [];
  beforeAll(async () => {
    store = await createTestStore();
    pools.push(await store.open(), await store.open(), await store.open());
  });
  afterAll(async () => {
    for (const pool of pools.reverse()) await pool.close();
    await store?.destroy();
  });

  it('never mixes up the queries of different connections, in and out of transactions', async () => {
    // On the embedded server this workload stalled or failed with raw extended-protocol queries.
    const mismatches: number[] = [];
    await Promise.all(
      Array.from({ length: 400 }, async (_, i) => {
        const db = pools[i % pools.length];
        if (i % 4 === 0) {
          await db.transaction(async (tx) => {
            const { rows } = await tx.query<{ n: number }>('select $1::int as n', [i]);
            if (rows[0].n !== i) mismatches.push(i);
            await tx.query('select pg_advisory_xact_lock($1)', [42]);
          });
        } else {
          const { rows } = await db.query<{ n: number; s: string }>('select $1::int as n, $2::text as s', [i, `v${i}`]);
          if (rows[0].n !== i || rows[0].s !== `v${i}`) mismatches.push(i);
        }
      }),
    );
    expect(mismatches).toEqual([]);
  }, 30_000);
});

// pg_terminate_backend is what a PostgreSQL restart does to every connection; the embedded database has no backends to end.
describe.runIf(TEST_DATABASE_URL)('a transaction whose connection PostgreSQL ends', () => {
  let store: TestStore;
  let db: Database;
  let admin: Database;
  beforeAll(async () => {
    store = await createTestStore();
    db = await store.open();
    admin = await store.open();
  });
  afterAll(async () => {
    await db?.close();
    await admin?.close();
    await store?.destroy();
  });

  it('fails, without ending the process, and the pool goes on with a new connection', async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.prependListener('uncaughtException', onUncaught);
    try {
      // Ended between two statements: the FATAL 57P01 arrives while no statement is in flight.
      const outcome = db.transaction(async (tx) => {
        const { rows } = await tx.query<{ pid: number }>('select pg_backend_pid() as pid');
        await admin.query('select pg_terminate_backend($1)', [rows[0].pid]);
        await new Promise((resolve) => setTimeout(resolve, 200));
        await tx.query('select 1');
      });
      await expect(outcome).rejects.toThrow();
      expect(uncaught).toEqual([]);
      expect((await db.query<{ ok: number }>('select 1 as ok')).rows).toEqual([{ ok: 1 }]);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });
});
