// The embedded database: PGlite in the process that owns the data folder, served to `pg` clients on a local socket.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** Written into the data folder while a process serves the embedded database; other processes connect through it. */
export interface EmbeddedServerInfo {
  pid: number;
  host: string;
  port: number;
  startedAt: string;
}

export interface EmbeddedServer {
  readonly info: EmbeddedServerInfo;
  readonly connectionString: string;
  stop(): Promise<void>;
}

const SERVER_FILE = 'server.json';

export function connectionStringFor(info: Pick<EmbeddedServerInfo, 'host' | 'port'>): string {
  return `postgres://postgres@${info.host}:${info.port}/postgres?sslmode=disable`;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The server a live process (this one included) runs on this data folder, if any. */
export async function findEmbeddedServer(dataDir: string): Promise<EmbeddedServerInfo | undefined> {
  let text: string;
  try {
    text = await readFile(path.join(dataDir, SERVER_FILE), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const info = JSON.parse(text) as EmbeddedServerInfo;
    if (typeof info.pid !== 'number' || typeof info.port !== 'number') return undefined;
    // Our own pid is fine: a second pool in the owning process connects through the socket like anyone.
    if (!isAlive(info.pid)) return undefined;
    return info;
  } catch {
    return undefined;
  }
}

/**
 * Opens PGlite on `<dataDir>/pgdata` and serves it on 127.0.0.1 (ephemeral port), recording where
 * in `<dataDir>/server.json`. PGlite is one Postgres session; the socket server's multiplexer keeps a
 * transaction's statements together, so every user (this process included) goes through the socket
 * and transactions from different connections never interleave.
 */
export async function startEmbeddedServer(dataDir: string): Promise<EmbeddedServer> {
  // Loaded lazily: a router on a real PostgreSQL never pays for the WebAssembly build.
  const [{ PGlite }, { PGLiteSocketServer }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('@electric-sql/pglite-socket'),
  ]);
  await mkdir(dataDir, { recursive: true });
  const db = await PGlite.create(path.join(dataDir, 'pgdata'));
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 64 });
  try {
    await server.start();
  } catch (error) {
    await db.close();
    throw error;
  }
  const address = (server as unknown as { port: number }).port;
  const info: EmbeddedServerInfo = { pid: process.pid, host: '127.0.0.1', port: address, startedAt: new Date().toISOString() };
  const serverFile = path.join(dataDir, SERVER_FILE);
  await writeFile(serverFile, JSON.stringify(info, null, 2) + '\n');
  let stopped = false;
  return {
    info,
    connectionString: connectionStringFor(info),
    async stop() {
      if (stopped) return;
      stopped = true;
      await rm(serverFile, { force: true });
      await server.stop();
      await db.close();
    },
  };
}
