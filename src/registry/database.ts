// The metadata store connection: a `pg` pool, to a real PostgreSQL or to the embedded PGlite served on a local socket.
import pg from 'pg';
import { inlineParameters } from './inline-parameters.js';

/** Anything that runs SQL: the pool, or one client inside a transaction. */
export interface Queryable {
  query<R extends pg.QueryResultRow = any>(sql: string, params?: unknown[]): Promise<pg.QueryResult<R>>;
}

export interface Database extends Queryable {
  /**
   * `postgres`: a real server; LISTEN/NOTIFY reaches every process.
   * `embedded`: PGlite behind its socket multiplexer; NOTIFY does not reliably cross connections
   * there, so change detection polls a version table instead (see docs/decisions/001).
   */
  readonly kind: 'postgres' | 'embedded';
  readonly pool: pg.Pool;
  /** Runs `fn` in one transaction on one connection; rolls back if it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Subscribes to a NOTIFY channel on a dedicated connection (postgres kind only). Returns the release. */
  listen(channel: string, onNotify: (payload: string) => void, onError?: (error: Error) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export interface PoolDatabaseOptions {
  connectionString: string;
  kind: 'postgres' | 'embedded';
  /** Largest number of pooled connections. Default 10. */
  maxConnections?: number;
  /** Runs when the database is closed, after the pool (the embedded server's shutdown). */
  onClose?: () => Promise<void>;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

/** The query function for one connection or pool: parameters inlined on the embedded database. */
function queryFor(target: pg.Pool | pg.PoolClient, kind: Database['kind']): Queryable['query'] {
  if (kind === 'postgres') return (sql, params) => target.query(sql, params as unknown[]);
  return (sql, params) => (params && params.length > 0 ? target.query(inlineParameters(sql, params)) : target.query(sql));
}

/** Opens a pool and checks that it answers. */
export async function openPoolDatabase(options: PoolDatabaseOptions): Promise<Database> {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.maxConnections ?? 10,
    // An idle pooled connection costs the embedded server a handler; let them go after a while.
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 10_000,
  });
  // A broken idle connection must not crash the process: the pool replaces it on the next checkout.
  pool.on('error', function onIdleClientError() {});
  try {
    await pool.query('select 1');
  } catch (error) {
    await pool.end().catch(() => {});
    throw error;
  }
  let closed = false;
  const database: Database = {
    kind: options.kind,
    pool,
    query: queryFor(pool, options.kind),
    async transaction(fn) {
      const client = await pool.connect();
      // While checked out, a client has no error listener of the pool's. When its connection ends
      // between two statements (a PostgreSQL restart ends every backend with FATAL 57P01) or right
      // after the statement that read the error, `pg` emits 'error' on it: with no listener, that
      // ends the process. Kept here instead: the statement in flight or the next one fails anyway,
      // and the client is released as broken, so the pool drops it.
      let broken: Error | undefined;
      const onConnectionError = (error: Error) => {
        broken ??= error;
      };
      client.on('error', onConnectionError);
      try {
        await client.query('begin');
        const result = await fn({ query: queryFor(client, options.kind) });
        await client.query('commit');
        return result;
      } catch (error) {
        await client.query('rollback').catch(() => {});
        throw error;
      } finally {
        client.off('error', onConnectionError);
        client.release(broken);
      }
    },
    async listen(channel, onNotify, onError) {
      if (!IDENTIFIER.test(channel)) throw new Error(`invalid channel name: ${channel}`);
      // A dedicated client outside the pool: LISTEN belongs to one session for its whole life.
      const client = new pg.Client({ connectionString: options.connectionString });
      client.on('error', (error) => onError?.(error));
      client.on('notification', (message) => {
        if (message.channel === channel) onNotify(message.payload ?? '');
      });
      await client.connect();
      await client.query(`listen ${channel}`);
      return async function unlisten() {
        await client.end().catch(() => {});
      };
    },
    async close() {
      if (closed) return;
      closed = true;
      await pool.end();
      await options.onClose?.();
    },
  };
  return database;
}
