// Test databases: a fresh embedded PGlite in a temp folder, or a fresh schema on TEST_DATABASE_URL's PostgreSQL.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { openDatabase } from '../../src/registry/open-database.js';
import type { Database } from '../../src/registry/database.js';
import { migrate } from '../../src/registry/migrate.js';

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined;
export const databaseKind = TEST_DATABASE_URL ? 'postgres' : 'embedded';

export interface TestStore {
  /** Where a second process or router reaches the same store: the URL (its search_path set to the schema), or the data folder. */
  databaseUrl: string | undefined;
  dataDir: string;
  /** Opens another connection pool on the same store (as a second router would). */
  open(): Promise<Database>;
  /** Drops the schema or deletes the folder. */
  destroy(): Promise<void>;
}

/**
 * A private store for one test file. On PostgreSQL each gets its own schema (search_path), so test
 * files can run side by side on one server; the schema is dropped at the end.
 */
export async function createTestStore(): Promise<TestStore> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'switchyard-test-'));
  const schema = `t_${randomBytes(6).toString('hex')}`;
  let databaseUrl: string | undefined;
  if (TEST_DATABASE_URL) {
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    await client.query(`create schema ${schema}`);
    await client.end();
    const url = new URL(TEST_DATABASE_URL);
    url.searchParams.set('options', `-c search_path=${schema}`);
    databaseUrl = url.toString();
  }
  return {
    databaseUrl,
    dataDir,
    open: () => openDatabase({ databaseUrl, dataDir }),
    async destroy() {
      if (TEST_DATABASE_URL) {
        const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
        await client.connect();
        await client.query(`drop schema if exists ${schema} cascade`);
        await client.end();
      }
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Opens and migrates a test store's database. */
export async function openMigrated(store: TestStore): Promise<Database> {
  const db = await store.open();
  await migrate(db);
  return db;
}

/**
 * A store of the describe block's own: made and opened (and migrated, unless `migrated: false`) before
 * its tests, closed and destroyed after them. `ready` gets the database once it is open.
 */
export function useTestDatabase(ready: (db: Database) => void, options: { migrated?: boolean } = {}): void {
  let store: TestStore | undefined;
  let db: Database | undefined;
  beforeAll(async () => {
    store = await createTestStore();
    db = options.migrated === false ? await store.open() : await openMigrated(store);
    ready(db);
  });
  afterAll(async () => {
    await db?.close();
    await store?.destroy();
  });
}
