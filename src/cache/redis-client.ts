// Redis clients, with ioredis loaded on first use.
import { createRequire } from 'node:module';
import type { Redis, RedisOptions } from 'ioredis';

const require = createRequire(import.meta.url);

/**
 * A new ioredis client. The package is loaded here, on the first client, not when the router
 * starts: a router without `REDIS_URL` never loads it (about 25 MB of resident memory). ioredis is
 * CommonJS, so a synchronous require keeps the callers synchronous.
 */
export function newRedisClient(url: string, options: RedisOptions): Redis {
  const { Redis: RedisClient } = require('ioredis') as typeof import('ioredis');
  return new RedisClient(url, options);
}
