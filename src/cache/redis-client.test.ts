// Unit tests of the router's own Redis clients: a Redis that does not answer never holds a caller up.
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { newFailFastRedisClient } from './redis-client.js';

/** A port nothing listens on: bound once, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('newFailFastRedisClient', () => {
  it('fails a command at once while Redis is unreachable, instead of queueing it for a reconnection', async () => {
    const client = newFailFastRedisClient(`redis://127.0.0.1:${await closedPort()}`, { commandTimeoutMs: 60_000, connectTimeoutMs: 60_000 });
    try {
      await expect(client.get('key')).rejects.toThrow(/enableOfflineQueue|writeable/);
    } finally {
      client.disconnect();
    }
  });
});
