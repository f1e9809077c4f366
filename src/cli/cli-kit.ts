// What every CLI command shares and that costs nothing to load: its error type, the store it opens, composition errors as text.
import { InvalidArgumentError } from 'commander';
import type { Config } from '../config/schema.js';
import type { Database } from '../registry/database.js';
import { migrate } from '../registry/migrate.js';
import { openDatabase } from '../registry/open-database.js';
import type { CompositionRejectedError } from '../registry/subgraph-store.js';

/** A failure the CLI reports as one message and a non-zero exit, without a stack trace. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** Opens the store named by the config (the running demo's socket, or the embedded files), migrated. */
export async function withDatabase<T>(config: Config, fn: (db: Database) => Promise<T>): Promise<T> {
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, maxConnections: 2 });
  try {
    await migrate(db);
    return await fn(db);
  } finally {
    await db.close();
  }
}

export function formatCompositionErrors(error: CompositionRejectedError): string {
  return [error.message + ':', ...error.errors.map((e) => `  [${e.code}] ${e.message}`)].join('\n');
}

export function integer(name: string, min = 0) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`${name} must be an integer >= ${min}`);
    return n;
  };
}

/** Runs until SIGINT or SIGTERM, then closes what `close` owns and exits. */
export function untilSignal(close: () => Promise<void>): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.error(`received ${signal}, shutting down`);
    close().then(
      () => process.exit(0),
      (error: Error) => {
        console.error(error.message);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}
