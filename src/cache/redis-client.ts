// Redis clients, with ioredis loaded on first use: the one place their connection options are written.
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';

const require = createRequire(import.meta.url);

export interface FailFastRedisOptions {
  /** A command not answered within this fails, in ms. */
  commandTimeoutMs: number;
  /** A connection attempt not established within this fails (and is retried), in ms. */
  connectTimeoutMs: number;
}

/** The backoff between reconnection attempts grows by this per attempt, in ms, ... */
const RECONNECT_STEP_MS = 200;
/** ... up to this. */
const RECONNECT_MAX_MS = 2_000;

/**
 * A new ioredis client for a router's own use (rate-limit buckets, section cache), where Redis is an
 * aid that must never hold a request up:
 * 1. No offline queue and no retries per request: a command while disconnected fails at once instead
 *    of waiting for a reconnection; the caller falls back to what it has in this process.
 * 2. Reconnection goes on for ever in the background, with a backoff growing to 2 s.
 * 3. Errors are the caller's to report (per command, or once per outage): the client gets a listener
 *    that ignores them, without which ioredis prints each one.
 * The package is loaded here, on the first client, not when the router starts: a router without
 * `REDIS_URL` never loads it (about 25 MB of resident memory). ioredis is CommonJS, so a synchronous
 * require keeps the callers synchronous.
 */
export function newFailFastRedisClient(url: string, options: FailFastRedisOptions): Redis {
  const { Redis: RedisClient } = require('ioredis') as typeof import('ioredis');
  const client = new RedisClient(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: options.commandTimeoutMs,
    connectTimeout: options.connectTimeoutMs,
    retryStrategy: (attempt) => Math.min(attempt * RECONNECT_STEP_MS, RECONNECT_MAX_MS),
  });
  client.on('error', () => {});
  return client;
}
