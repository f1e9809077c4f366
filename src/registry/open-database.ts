// openDatabase(): the one way to reach the metadata store, whichever database serves it.
import { openPoolDatabase, type Database } from './database.js';
import { connectionStringFor, findEmbeddedServer, startEmbeddedServer } from './embedded-server.js';

export interface OpenDatabaseOptions {
  /** A real PostgreSQL. Unset: the embedded database in `dataDir`. */
  databaseUrl?: string | undefined;
  /** Folder of the embedded database. */
  dataDir: string;
  maxConnections?: number;
}

/**
 * 1. With a URL: a pool on that PostgreSQL.
 * 2. Without: if another live process already serves the embedded database of `dataDir` (the demo,
 *    say), connect to its socket, so the CLI works while the demo runs.
 * 3. Otherwise this process becomes the owner: it opens PGlite, serves it, and stops it on close.
 */
export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  const common = { maxConnections: options.maxConnections };
  if (options.databaseUrl) {
    return openPoolDatabase({ ...common, connectionString: options.databaseUrl, kind: 'postgres' });
  }
  const running = await findEmbeddedServer(options.dataDir);
  if (running) {
    try {
      return await openPoolDatabase({ ...common, connectionString: connectionStringFor(running), kind: 'embedded' });
    } catch (error) {
      throw new Error(
        `the embedded database in ${options.dataDir} is served by process ${running.pid} on port ${running.port}, but it does not answer: ${(error as Error).message}`,
      );
    }
  }
  const server = await startEmbeddedServer(options.dataDir);
  try {
    return await openPoolDatabase({ ...common, connectionString: server.connectionString, kind: 'embedded', onClose: () => server.stop() });
  } catch (error) {
    await server.stop();
    throw error;
  }
}
