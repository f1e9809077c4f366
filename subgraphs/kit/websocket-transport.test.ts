// The kit's subscription transports around any subgraph with a Subscription type: router tokens over WebSocket and SSE, fault switch, close/restart, heartbeat.
import { once } from 'node:events';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createInventorySubgraph } from '../inventory/index.js';
import { createProductSubgraph } from '../product/index.js';
import { createDemoSubgraph } from './create-demo-subgraph.js';
import { createServerPool, postAdmin, readStats, waitForStats } from './test-client.js';
import { openSseClient, openWsClient, waitForSubscriptions, webSocketUrl, type TestWsClient } from './test-subscription-clients.js';
import { startTestTokenIssuer, type TestTokenIssuer } from './test-token-issuer.js';
import type { CallerContext, RunningSubgraph } from './types.js';
import { WEBSOCKET_CLOSE } from './websocket-transport.js';

const CHANGES = /* GraphQL */ `subscription ($productId: ID) { inventoryChanged(productId: $productId) { productId inStock } }`;

let router: TestTokenIssuer;
beforeAll(async () => {
  router = await startTestTokenIssuer();
});
afterAll(() => router?.close());

const pool = createServerPool();
const clients: TestWsClient[] = [];
afterEach(async () => {
  for (const { client } of clients.splice(0)) await client.dispose();
  await pool.closeAll();
});

function wsClient(running: RunningSubgraph, options: Parameters<typeof openWsClient>[1] = {}): TestWsClient {
  const client = openWsClient(running, options);
  clients.push(client);
  return client;
}

/** Subscribes to product `productId`, waits until the subgraph counts `open` subscriptions, pushes a change and answers the first event. */
async function pushAndReceive(running: RunningSubgraph, stream: AsyncIterator<unknown>, productId: string, inStock: number, open = 1): Promise<unknown> {
  const first = stream.next();
  await waitForSubscriptions(running, (counters) => counters.open === open);
  await postAdmin(running, '/admin/inventory', { productId, inStock });
  return (await first).value;
}

describe('router tokens over WebSocket', () => {
  async function guardedInventory() {
    const subgraph = createInventorySubgraph({ env: {}, tickMs: 0, requireTokens: { jwksUrl: router.jwksUrl } });
    return { subgraph, running: await pool.start(subgraph) };
  }

  it('accepts the token from the connection_init payload', async () => {
    const { running } = await guardedInventory();
    const token = await router.mint('inventory');
    const { client } = wsClient(running, { connectionParams: { authorization: `Bearer ${token}` } });
    const stream = client.iterate({ query: CHANGES, variables: { productId: '2' } });
    expect(await pushAndReceive(running, stream, '2', 9)).toEqual({ data: { inventoryChanged: { productId: '2', inStock: 9 } } });
  });

  it('accepts the token from the upgrade request Authorization header', async () => {
    const { running } = await guardedInventory();
    const { client } = wsClient(running, { headers: { authorization: `Bearer ${await router.mint('inventory')}` } });
    const stream = client.iterate({ query: CHANGES, variables: { productId: '3' } });
    expect(await pushAndReceive(running, stream, '3', 4)).toEqual({ data: { inventoryChanged: { productId: '3', inStock: 4 } } });
  });

  it.each([
    ['no token', async () => ({}), 'inventory subgraph: missing bearer token'],
    ['a token for another subgraph', async () => ({ authorization: `Bearer ${await router.mint('product')}` }), 'inventory subgraph: token is not for inventory'],
    ['an expired token', async () => ({ authorization: `Bearer ${await router.mint('inventory', { issuedAt: Date.now() - 300_000 })}` }), 'inventory subgraph: token expired'],
    ['a token that is not Bearer', async () => ({ authorization: 'Basic dXNlcjpwYXNz' }), 'inventory subgraph: malformed authorization header'],
  ])('closes with 4403 and the reason for %s, counting it in stats.unauthorized', async (_, params, reason) => {
    const { running } = await guardedInventory();
    const connection = wsClient(running, { connectionParams: await params() });
    const closed = connection.nextClose();
    const stream = connection.client.iterate({ query: CHANGES });
    await expect(stream.next()).rejects.toMatchObject({ code: WEBSOCKET_CLOSE.TOKEN_REFUSED, reason });
    expect(await closed).toEqual({ code: 4403, reason });
    expect(await readStats(running)).toMatchObject({ unauthorized: 1, subscriptions: { open: 0, started: 0 } });
  });

  it('closes with 1013 (try again later) when the router keys cannot be fetched', async () => {
    const jwks = await startTestTokenIssuer();
    try {
      const running = await pool.start(createInventorySubgraph({ env: {}, tickMs: 0, requireTokens: { jwksUrl: jwks.jwksUrl } }));
      const token = await jwks.mint('inventory');
      jwks.mode = 'error';
      const connection = wsClient(running, { connectionParams: { authorization: `Bearer ${token}` } });
      const closed = connection.nextClose();
      void connection.client.iterate({ query: CHANGES }).next().catch(() => undefined);
      expect(await closed).toEqual({ code: 1013, reason: 'inventory subgraph: router keys unavailable' });
    } finally {
      await jwks.close();
    }
  });

  it('closes an open connection with 4401 "token expired" when its token expires', async () => {
    const { running } = await guardedInventory();
    // exp lands 1 to 2 s from now (whole seconds): valid now, expired soon.
    const token = await router.mint('inventory', { issuedAt: Date.now() - 58_000, lifetimeSeconds: 60 });
    const connection = wsClient(running, { connectionParams: { authorization: `Bearer ${token}` } });
    const stream = connection.client.iterate({ query: CHANGES, variables: { productId: '2' } });
    expect(await pushAndReceive(running, stream, '2', 1)).toEqual({ data: { inventoryChanged: { productId: '2', inStock: 1 } } });
    expect(await connection.nextClose()).toEqual({ code: WEBSOCKET_CLOSE.TOKEN_EXPIRED, reason: 'token expired' });
    expect(await waitForSubscriptions(running, (counters) => counters.open === 0 && counters.connections === 0)).toMatchObject({ open: 0, connections: 0 });
  });

  it('puts the connection token\'s caller in context.caller, as over HTTP', async () => {
    const subgraph = createDemoSubgraph<object>(
      {
        name: 'inventory',
        defaultPort: 0,
        setup: () => ({
          createContext: () => ({}),
          resolvers: {
            Subscription: {
              inventoryChanged: {
                subscribe: async function* whoIsWatching(_: unknown, __: unknown, context: CallerContext) {
                  yield { productId: '1', inStock: 0, warehouse: context.caller === undefined ? 'nobody' : `${context.caller.subject} [${context.caller.scopes.join(',')}]` };
                },
                resolve: (row: unknown) => row,
              },
            },
          },
        }),
      },
      { env: {}, requireTokens: { jwksUrl: router.jwksUrl } },
    );
    const running = await pool.start(subgraph);
    const token = await router.mint('inventory', { subject: 'user-9', scopes: ['stock:read'] });
    const { client } = wsClient(running, { connectionParams: { authorization: `Bearer ${token}` } });
    const answer = await client.iterate({ query: `subscription { inventoryChanged { warehouse } }` }).next();
    expect(answer.value).toEqual({ data: { inventoryChanged: { warehouse: 'user-9 [stock:read]' } } });
  });

  it('runs the authenticate option on the upgrade request, answering its refusal in HTTP', async () => {
    const running = await pool.start(createInventorySubgraph({ env: {}, tickMs: 0, authenticate: async (req) => req.headers['x-team'] === 'stock' || { status: 403, message: 'not today' } }));
    const refused = new WebSocket(webSocketUrl(running), 'graphql-transport-ws');
    refused.on('error', () => undefined);
    const [, response] = (await once(refused, 'unexpected-response')) as [unknown, import('node:http').IncomingMessage];
    expect(response.statusCode).toBe(403);
    response.resume();
    refused.terminate();
    const { client } = wsClient(running, { headers: { 'x-team': 'stock' } });
    const stream = client.iterate({ query: CHANGES, variables: { productId: '7' } });
    expect(await pushAndReceive(running, stream, '7', 7)).toEqual({ data: { inventoryChanged: { productId: '7', inStock: 7 } } });
    expect((await readStats(running)).unauthorized).toBe(1);
  });
});

describe('router tokens over SSE', () => {
  it('goes through the same gate as any /graphql request', async () => {
    const running = await pool.start(createInventorySubgraph({ env: {}, tickMs: 0, requireTokens: { jwksUrl: router.jwksUrl } }));
    const refused = openSseClient(running);
    await expect(refused.iterate({ query: CHANGES }).next()).rejects.toMatchObject({ response: { status: 401 } });
    refused.dispose();
    const client = openSseClient(running, { authorization: `Bearer ${await router.mint('inventory')}` });
    try {
      const stream = client.iterate({ query: CHANGES, variables: { productId: '8' } });
      expect(await pushAndReceive(running, stream, '8', 8)).toEqual({ data: { inventoryChanged: { productId: '8', inStock: 8 } } });
      await stream.return!();
    } finally {
      client.dispose();
    }
    expect((await readStats(running)).unauthorized).toBe(1);
  });
});

describe('fault switch and subscriptions', () => {
  it('down: terminates open WebSocket connections and SSE streams and refuses new upgrades; ok serves again', async () => {
    const subgraph = createInventorySubgraph({ env: {}, tickMs: 0 });
    const running = await pool.start(subgraph);
    const connection = wsClient(running);
    const wsStream = connection.client.iterate({ query: CHANGES });
    const sse = openSseClient(running);
    try {
      const sseStream = sse.iterate({ query: CHANGES });
      const [wsEnd, sseEnd] = [wsStream.next(), sseStream.next()];
      await waitForSubscriptions(running, (counters) => counters.open === 2);
      const closed = connection.nextClose();
      await postAdmin(running, '/admin/faults', { mode: 'down' });
      expect((await closed).code).toBe(1006);
      await expect(wsEnd).rejects.toMatchObject({ code: 1006 });
      await expect(sseEnd).rejects.toThrow();
      expect(await waitForSubscriptions(running, (counters) => counters.open === 0 && counters.connections === 0)).toMatchObject({ open: 0, connections: 0 });

      const raw = new WebSocket(webSocketUrl(running), 'graphql-transport-ws');
      raw.on('error', () => undefined);
      expect(await closeCode(raw)).toBe(1006);

      subgraph.faults.set({ mode: 'ok' });
      const again = wsClient(running).client.iterate({ query: CHANGES, variables: { productId: '2' } });
      expect(await pushAndReceive(running, again, '2', 2)).toEqual({ data: { inventoryChanged: { productId: '2', inStock: 2 } } });
      expect((await readStats(running)).aborted).toBe(0);
    } finally {
      sse.dispose();
    }
  });

  it('hang: an SSE subscribe the client gives up on before it streams counts as aborted', async () => {
    const running = await pool.start(createInventorySubgraph({ env: {}, tickMs: 0, faults: { mode: 'hang' } }));
    const client = openSseClient(running);
    try {
      const stream = client.iterate({ query: CHANGES });
      const next = stream.next().catch(() => undefined);
      await waitForStats(running, (stats) => stats.inFlight === 1);
      await stream.return!();
      await next;
      expect(await waitForStats(running, (stats) => stats.aborted === 1)).toMatchObject({ aborted: 1, inFlight: 0 });
    } finally {
      client.dispose();
    }
  });

  it('hang: never answers an upgrade; close() releases it', async () => {
    const subgraph = createInventorySubgraph({ env: {}, tickMs: 0, faults: { mode: 'hang' } });
    const running = await subgraph.listen(0);
    const raw = new WebSocket(webSocketUrl(running), 'graphql-transport-ws');
    raw.on('error', () => undefined);
    const closed = closeCode(raw);
    // The upgrade is one request, the poll's own read another.
    await waitForStats(running, (stats) => stats.requests >= 2);
    expect(raw.readyState).toBe(WebSocket.CONNECTING);
    await running.close();
    expect(await closed).toBe(1006);
  });
});

/** The close code of a raw socket (events.once would reject on the 'error' a refused handshake emits first). */
function closeCode(socket: WebSocket): Promise<number> {
  return new Promise((resolve) => socket.once('close', (code: number) => resolve(code)));
}

describe('close and restart', () => {
  it('close() terminates every WebSocket; listen() on the same port serves again and a retrying client resubscribes', async () => {
    const subgraph = createInventorySubgraph({ env: {}, tickMs: 0 });
    let running = await subgraph.listen(0);
    let restarted!: () => void;
    const restart = new Promise<void>((resolve) => (restarted = resolve));
    // The client retries once the subgraph is back: its wait between attempts is the restart itself, not a timer.
    const connection = openWsClient(running, { retryAttempts: 5, retryWait: () => restart, shouldRetry: () => true });
    try {
      const stream = connection.client.iterate({ query: CHANGES, variables: { productId: '3' } });
      expect(await pushAndReceive(running, stream, '3', 30)).toEqual({ data: { inventoryChanged: { productId: '3', inStock: 30 } } });
      const closed = connection.nextClose();
      await running.close();
      expect((await closed).code).toBe(1006);
      expect(subgraph.stats.subscriptions).toMatchObject({ open: 0, connections: 0 });

      const port = running.port;
      running = await subgraph.listen(port);
      expect(running.port).toBe(port);
      const reconnected = connection.nextConnected();
      restarted();
      await reconnected;
      expect(await pushAndReceive(running, stream, '3', 31)).toEqual({ data: { inventoryChanged: { productId: '3', inStock: 31 } } });
      expect(subgraph.stats.subscriptions).toMatchObject({ open: 1, connections: 1, started: 2 });
    } finally {
      await connection.client.dispose();
      await running.close();
    }
    expect(await waitForCounters(subgraph.stats.subscriptions, (counters) => counters.open === 0 && counters.connections === 0)).toBe(true);
  });
});

/** Awaits the counters on the event loop (each turn is an awaited `setImmediate`, not a fixed sleep) until `accept` holds. */
async function waitForCounters<T>(counters: T, accept: (counters: T) => boolean, turns = 10_000): Promise<boolean> {
  for (let turn = 0; turn < turns; turn++) {
    if (accept(counters)) return true;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return false;
}

describe('heartbeat', () => {
  it('pings WebSocket clients and terminates one that does not pong', async () => {
    const running = await pool.start(createInventorySubgraph({ env: {}, tickMs: 0, webSocketKeepAliveMs: 40 }));
    const silent = new WebSocket(webSocketUrl(running), 'graphql-transport-ws', { autoPong: false });
    const polite = new WebSocket(webSocketUrl(running), 'graphql-transport-ws');
    await Promise.all([once(silent, 'open'), once(polite, 'open')]);
    silent.send(JSON.stringify({ type: 'connection_init' }));
    polite.send(JSON.stringify({ type: 'connection_init' }));
    await once(silent, 'ping');
    const [code] = (await once(silent, 'close')) as [number];
    expect(code).toBe(1006);
    // The polite client answered every ping in the meantime and is still connected.
    await once(polite, 'ping');
    expect(polite.readyState).toBe(WebSocket.OPEN);
    polite.close();
    await once(polite, 'close');
  });

  it('refuses a bad webSocketKeepAliveMs at creation', () => {
    expect(() => createInventorySubgraph({ env: {}, webSocketKeepAliveMs: -1 })).toThrow(/webSocketKeepAliveMs/);
  });
});

describe('WebSocket routes', () => {
  it('answers 404 to an upgrade elsewhere than /graphql, or at a subgraph without a Subscription type', async () => {
    const inventory = await pool.start(createInventorySubgraph({ env: {}, tickMs: 0 }));
    const product = await pool.start(createProductSubgraph({ env: {} }));
    for (const url of [webSocketUrl(inventory).replace('/graphql', '/admin/stats'), webSocketUrl(product)]) {
      const raw = new WebSocket(url, 'graphql-transport-ws');
      raw.on('error', () => undefined);
      const [, response] = (await once(raw, 'unexpected-response')) as [unknown, import('node:http').IncomingMessage];
      expect(response.statusCode).toBe(404);
      response.resume();
      raw.terminate();
    }
  });
});
