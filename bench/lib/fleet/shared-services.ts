// The PostgreSQL server and Redis that the fleet drill and the soak use: the tests' own settings, else the local defaults.
import pg from 'pg';
import { Redis } from 'ioredis';

/** TEST_DATABASE_URL (any database on the server: a run creates its own), else the local server's `postgres` database. */
export function postgresServerUrl(): string {
  return process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
}

/** TEST_REDIS_URL, else REDIS_URL, else the local Redis. */
export function sharedRedisUrl(): string {
  return process.env.TEST_REDIS_URL || process.env.REDIS_URL || 'redis://127.0.0.1:6379';
}

/** Throws one clear line when either does not answer, naming what to set. */
export async function assertServicesAnswer(what: string, postgresUrl: string, redisUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query('select 1');
  } catch (error) {
    throw new Error(`${what} needs a PostgreSQL server where it may create a database: ${postgresUrl} does not answer (${(error as Error).message}); set TEST_DATABASE_URL`);
  } finally {
    await client.end().catch(() => undefined);
  }
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 3_000, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    throw new Error(`${what} needs Redis: ${redisUrl} does not answer (${(error as Error).message}); set TEST_REDIS_URL`);
  } finally {
    redis.disconnect();
  }
}
