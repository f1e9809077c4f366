// A database of its own on a shared PostgreSQL server for one drill or soak run, dropped afterwards.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface ScratchDatabase {
  /** e.g. `fleet_3f9a0c1b`. */
  readonly name: string;
  /** The database's URL on the server itself (not through any proxy). */
  readonly url: string;
  /** The URL with another host and port (a proxy in front of the server) and an `application_name`, so its connections can be counted and ended. */
  urlVia(port: number | undefined, applicationName: string): string;
  /** Connections open to the database now, by application name (pg_stat_activity). */
  connectionsByApplication(): Promise<Map<string, number>>;
  /** Ends every backend of these application names, as a PostgreSQL restart does: each client reads a FATAL 57P01 and the connection closes. */
  terminate(applicationNames: readonly string[]): Promise<number>;
  /** Drops the database, ending whatever is still connected to it. */
  drop(): Promise<void>;
}

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Creates `<prefix>_<8 hex digits>` on the server of `serverUrl` (any database there, e.g. postgres://postgres@127.0.0.1:5432/test). */
export async function createScratchDatabase(serverUrl: string, prefix: string): Promise<ScratchDatabase> {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  await withClient(serverUrl, (client) => client.query(`create database ${name}`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const own = url.toString();
  return {
    name,
    url: own,
    urlVia(port, applicationName) {
      const via = new URL(own);
      if (port !== undefined) via.port = String(port);
      via.searchParams.set('application_name', applicationName);
      return via.toString();
    },
    async connectionsByApplication() {
      const { rows } = await withClient(serverUrl, (client) =>
        client.query<{ application_name: string; n: string }>('select application_name, count(*) as n from pg_stat_activity where datname = $1 group by 1', [name]),
      );
      return new Map(rows.map((row) => [row.application_name, Number(row.n)]));
    },
    async terminate(applicationNames) {
      const { rows } = await withClient(serverUrl, (client) =>
        client.query<{ ended: boolean }>('select pg_terminate_backend(pid) as ended from pg_stat_activity where datname = $1 and application_name = any($2)', [name, applicationNames]),
      );
      return rows.filter((row) => row.ended).length;
    },
    async drop() {
      await withClient(serverUrl, (client) => client.query(`drop database if exists ${name} with (force)`));
    },
  };
}
