// A free TCP port on the loopback, for a gateway that cannot listen on port 0 and tell which port it got.
import { createServer } from 'node:net';

/**
 * Asks the kernel for a free port by listening on port 0, then closes the listener and returns the port.
 * Another process could take it in between; on a bench machine that is rare enough, and the gateway's
 * start then fails loudly rather than measuring the wrong thing.
 */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('no port assigned'))));
    });
  });
}
