// A TCP proxy in front of a shared service (PostgreSQL, Redis) that a fault drill can take down and bring back without touching the service.
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  /** The loopback port the proxy listens on; the same after every `start()`, so clients keep their URL. */
  readonly port: number;
  /** Connections open through the proxy now (each client connection counts once). */
  openConnections(): number;
  /** Client connections accepted since the proxy was created. */
  acceptedConnections(): number;
  /** The service "goes down": every open connection is destroyed and new ones are refused (nothing listens). */
  stop(): Promise<void>;
  /** The service "comes back": listening again on the same port. */
  start(): Promise<void>;
  /** stop(), for good. */
  close(): Promise<void>;
}

/**
 * Forwards each connection to `target` byte for byte. Stopping it is what the clients behind it see of a
 * service that crashed or restarted: established connections end at once (RST on both sides) and new
 * ones are refused until `start()`. The service itself, shared with whoever else uses it, never notices
 * more than clients disconnecting.
 */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<Socket>();
  let accepted = 0;
  let server: Server | undefined;
  let port = 0;

  function accept(client: Socket): void {
    accepted += 1;
    const upstream = connect(target.port, target.host);
    pairs.add(client);
    client.on('close', () => pairs.delete(client));
    for (const [socket, other] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      socket.on('error', () => other.destroy());
      socket.on('close', () => other.destroy());
    }
    client.pipe(upstream).pipe(client);
  }

  async function listen(): Promise<void> {
    const next = createServer(accept);
    await new Promise<void>((resolve, reject) => {
      next.once('error', reject);
      next.listen(port, '127.0.0.1', () => {
        next.off('error', reject);
        resolve();
      });
    });
    port = (next.address() as { port: number }).port;
    server = next;
  }

  async function stop(): Promise<void> {
    const current = server;
    server = undefined;
    for (const client of pairs) client.resetAndDestroy();
    pairs.clear();
    if (current) await new Promise<void>((resolve) => current.close(() => resolve()));
  }

  await listen();
  return {
    get port() {
      return port;
    },
    openConnections: () => pairs.size,
    acceptedConnections: () => accepted,
    stop,
    async start() {
      if (!server) await listen();
    },
    close: stop,
  };
}
