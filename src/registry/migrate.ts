// Versioned SQL migrations of the metadata store (schema/db/NNN_name.sql), applied in order, once, under a lock.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { MIGRATIONS_DIR } from '../config/paths.js';
import type { Database } from './database.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Any 64-bit constant unique to us: every router starting at once serialises on it. */
const MIGRATION_LOCK = 7_428_113_901;

/** The migrations in `dir` (default schema/db), in order; tests take the first few to build an older store. */
export async function loadMigrations(dir: string = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d+_[\w-]+\.sql$/.test(f)).sort();
  const migrations: Migration[] = [];
  for (const file of files) {
    const version = Number.parseInt(file, 10);
    if (migrations.some((m) => m.version === version)) throw new Error(`two migrations share version ${version}`);
    migrations.push({ version, name: file.replace(/^\d+_|\.sql$/g, ''), sql: await readFile(path.join(dir, file), 'utf8') });
  }
  return migrations;
}

/**
 * Applies the migrations not yet recorded in `schema_migrations`. Each runs in its own transaction
 * holding a transaction-level advisory lock, so concurrent starts apply each migration exactly once.
 * Returns the versions it applied.
 */
export async function migrate(db: Database, migrations?: Migration[]): Promise<number[]> {
  const all = migrations ?? (await loadMigrations());
  await db.transaction(async (tx) => {
    await tx.query('select pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.query(`create table if not exists schema_migrations (
      version integer primary key, name text not null, applied_at timestamptz not null default now())`);
  });
  const applied: number[] = [];
  for (const migration of all) {
    const done = await db.transaction(async (tx) => {
      await tx.query('select pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      const { rowCount } = await tx.query('select 1 from schema_migrations where version = $1', [migration.version]);
      if (rowCount) return false;
      await tx.query(migration.sql);
      await tx.query('insert into schema_migrations (version, name) values ($1, $2)', [migration.version, migration.name]);
      return true;
    });
    if (done) applied.push(migration.version);
  }
  return applied;
}
