// Process entry: one SubscriptionFleet, driven by the bench over a small HTTP control API on 127.0.0.1 (its URL on one stdout line).
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SUBSCRIPTION_CLIENTS_LABEL, SubscriptionFleet, type OpenOrder, type Push } from './subscription-clients.js';

async function readJson<T>(request: IncomingMessage): Promise<T> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return (chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {}) as T;
}

const fleet = new SubscriptionFleet();
let opening: Promise<void> | undefined;

/**
 * - `POST /open` (an OpenOrder): starts opening the clients and answers at once; `GET /status` shows progress.
 * - `POST /clear`: forgets the arrival log and counts. `POST /report` `{ from, to, pushes }`: the FleetReport.
 * - `POST /close`: every client leaves; answers when their sockets are closed.
 * Only the bench talks to it, on loopback: the bodies are trusted.
 */
const server = createServer(function control(request, response) {
  const reply = (status: number, body: unknown) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  };
  const route = `${request.method} ${request.url}`;
  const handle = async () => {
    switch (route) {
      case 'POST /open': {
        const order = await readJson<OpenOrder>(request);
        opening = fleet.open(order);
        opening.catch((error: unknown) => console.error(`subscription clients: opening failed: ${String(error)}`));
        return reply(202, { clients: order.productIds.length });
      }
      case 'GET /status':
        return reply(200, fleet.status());
      case 'POST /clear':
        fleet.clear();
        return reply(200, {});
      case 'POST /report': {
        const { from, to, pushes } = await readJson<{ from: number; to: number; pushes: Push[] }>(request);
        return reply(200, fleet.report(from, to, pushes));
      }
      case 'POST /close':
        await fleet.close();
        await opening?.catch(() => undefined);
        return reply(200, {});
      default:
        return reply(404, { error: `no route ${route}` });
    }
  };
  handle().catch((error: unknown) => reply(500, { error: String(error) }));
});

server.listen(0, '127.0.0.1', () => {
  console.log(`${SUBSCRIPTION_CLIENTS_LABEL} http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});

function stop(): void {
  void fleet.close().finally(() => server.close(() => process.exit(0)));
  // Sockets that do not close in time must not keep the bench waiting.
  setTimeout(() => process.exit(0), 3_000).unref();
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
