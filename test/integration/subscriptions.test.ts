// Federated subscriptions end to end, with the client libraries people use: graphql-ws, graphql-sse and Apollo Client over multipart.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';
import { createClient as createSseClient } from 'graphql-sse';
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';
import type { ExecutionResult } from 'graphql';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/http.js';
import { mintDevToken } from '../../src/security/authentication/dev-token.js';
import { grantPermission, revokePermission } from '../../src/registry/permission-store.js';
import { setPolicy, removePolicy } from '../../src/registry/policy-store.js';
import { publishSubgraph } from '../../src/registry/subgraph-store.js';
import { compositionCheck } from '../../src/cli/registry-commands.js';

const STOCK = /* GraphQL */ `
  subscription Stock($id: ID) {
    inventoryChanged(productId: $id) {
      inStock
      product { id name price reviews { rating } }
    }
  }
`;

/** A push from the inventory subgraph's admin API: the event every subscriber of that product gets. */
async function push(stack: Stack, productId: string, inStock: number): Promise<void> {
  const base = stack.subgraphs.inventory.running.url.replace(/\/graphql$/, '');
  const response = await fetch(`${base}/admin/inventory`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ productId, inStock }) });
  expect(response.status).toBe(200);
}

async function subgraphSubscriptions(stack: Stack): Promise<{ open: number; connections: number; started: number }> {
  const base = stack.subgraphs.inventory.running.url.replace(/\/graphql$/, '');
  return (await (await fetch(`${base}/admin/subscriptions`)).json()) as { open: number; connections: number; started: number };
}

/** Events of one graphql-ws subscription as they arrive, and how it ended. */
interface Watched {
  events: ExecutionResult[];
  error: unknown;
  completed: boolean;
  /** Resolves with the next event (or rejects when the subscription ends first). */
  nextEvent(): Promise<ExecutionResult>;
  ended: Promise<void>;
  stop(): void;
}

function watch(client: { subscribe: WsClient['subscribe'] }, query: string, variables: Record<string, unknown>): Watched {
  const events: ExecutionResult[] = [];
  let waiter: ((event: ExecutionResult) => void) | undefined;
  let endWaiter: (() => void) | undefined;
  let finish!: () => void;
  const ended = new Promise<void>((resolve) => (finish = resolve));
  const watched: Watched = {
    events,
    error: undefined,
    completed: false,
    nextEvent: () =>
      new Promise((resolve, reject) => {
        waiter = resolve;
        endWaiter = () => reject(new Error(`ended before the next event: ${JSON.stringify(watched.error)}`));
      }),
    ended,
    stop: () => stop(),
  };
  const stop = client.subscribe<Record<string, unknown>>(
    { query, variables },
    {
      next: (formatted) => {
        const event = formatted as ExecutionResult;
        events.push(event);
        const w = waiter;
        waiter = undefined;
        w?.(event);
      },
      error: (error) => {
        watched.error = error;
        endWaiter?.();
        finish();
      },
      complete: () => {
        watched.completed = true;
        endWaiter?.();
        finish();
      },
    },
  );
  return watched;
}

function wsClient(stack: Stack, connectionParams?: Record<string, unknown>, options: { retryAttempts?: number } = {}): WsClient {
  return createWsClient({ url: stack.router.url.replace(/^http/, 'ws'), webSocketImpl: WebSocket, connectionParams, retryAttempts: options.retryAttempts ?? 0, lazy: true });
}

/** The product each event names must be the catalogue's, completed from the product and reviews subgraphs. */
async function expectCompleted(stack: Stack, event: ExecutionResult, productId: string, inStock: number): Promise<void> {
  expect(event.errors).toBeUndefined();
  const changed = (event.data as { inventoryChanged: { inStock: number; product: { id: string; name: string; price: number; reviews: { rating: number }[] } } }).inventoryChanged;
  expect(changed.inStock).toBe(inStock);
  const query = await stack.query(`{ product(id: "${productId}") { id name price reviews { rating } } }`);
  expect(changed.product).toEqual(query.body.data.product);
  expect(changed.product.reviews.length).toBeGreaterThan(0);
}

describe('subscriptions', () => {
  let stack: Stack;
  const clients: WsClient[] = [];

  beforeAll(async () => {
    stack = await startStack({ config: { authMode: 'optional' } });
  }, 60_000);
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.dispose();
    await eventually(() => stack.router.subscriptions.size === 0, { what: 'every subscription of the test ended' });
  });
  afterAll(() => stack?.close());

  it('graphql-ws: each event comes completed with product and reviews fields, one upstream subscription for many clients', async () => {
    const watchers = Array.from({ length: 20 }, () => {
      const client = wsClient(stack);
      clients.push(client);
      return watch(client, STOCK, { id: '2' });
    });
    await eventually(() => stack.router.subscriptions.size === 20, { what: '20 subscriptions open' });
    expect(stack.router.upstreams.counts().upstreams).toBe(1);
    await eventually(async () => (await subgraphSubscriptions(stack)).open === 1, { what: 'one subscription at the subgraph' });
    const next = watchers.map((w) => w.nextEvent());
    await push(stack, '2', 41);
    for (const event of await Promise.all(next)) await expectCompleted(stack, event, '2', 41);
    expect(await stack.metric('switchyard_subscriptions_active', { operation: 'Stock' })).toBe(20);
  });

  it('graphql-sse: the same events over GraphQL over SSE', async () => {
    const client = createSseClient({ url: stack.router.url, retryAttempts: 0 });
    const received: ExecutionResult[] = [];
    let resolveFirst!: () => void;
    const first = new Promise<void>((resolve) => (resolveFirst = resolve));
    const stop = client.subscribe({ query: STOCK, variables: { id: '3' } }, { next: (event) => { received.push(event as ExecutionResult); resolveFirst(); }, error: () => {}, complete: () => {} });
    await eventually(async () => (await subgraphSubscriptions(stack)).open === 1, { what: 'the SSE subscription open at the subgraph' });
    await push(stack, '3', 12);
    await first;
    await expectCompleted(stack, received[0], '3', 12);
    stop();
    client.dispose();
  });

  it('Apollo Client over multipart (subscriptionSpec=1.0): the same events', async () => {
    const apollo = new ApolloClient({ link: new HttpLink({ uri: stack.router.url }), cache: new InMemoryCache() });
    const received: ExecutionResult[] = [];
    let resolveFirst!: () => void;
    const first = new Promise<void>((resolve) => (resolveFirst = resolve));
    const subscription = apollo.subscribe({ query: gql(STOCK), variables: { id: '4' } }).subscribe({ next: (event) => { received.push(event as ExecutionResult); resolveFirst(); } });
    await eventually(async () => (await subgraphSubscriptions(stack)).open === 1, { what: 'the multipart subscription open at the subgraph' });
    await push(stack, '4', 7);
    await first;
    const changed = (received[0].data as { inventoryChanged: { inStock: number; product: { name: string; reviews: unknown[] } } }).inventoryChanged;
    expect(changed.inStock).toBe(7);
    expect(changed.product.name).toBeTruthy();
    expect(changed.product.reviews.length).toBeGreaterThan(0);
    subscription.unsubscribe();
    apollo.stop();
  });

  it('a user token that expires ends its subscription with TOKEN_EXPIRED, never silently', async () => {
    const token = await mintDevToken(stack.router.keyRing, { sub: 'alice', ttlSeconds: 2 });
    const client = wsClient(stack, { authorization: `Bearer ${token}` });
    clients.push(client);
    const watched = watch(client, STOCK, { id: '2' });
    await watched.ended;
    expect(watched.completed).toBe(false);
    expect((watched.error as { extensions?: { code?: string } }[])[0].extensions?.code).toBe('TOKEN_EXPIRED');
    // The audit log has its start and its end, with why it ended.
    let details: { subscription: { event: string; endReason?: string; events?: number } }[] = [];
    await eventually(async () => {
      const { rows } = await stack.db.query<{ detail: (typeof details)[number] }>(`select detail from audit_log where subject = 'alice' and operation_name = 'Stock' order by writer_seq`);
      details = rows.map((row) => row.detail);
      return details.length === 2;
    }, { what: 'two audit rows for the subscription' });
    expect(details).toEqual([{ subscription: { event: 'start' } }, { subscription: { event: 'end', events: 0, endReason: 'TOKEN_EXPIRED' } }]);
  });

  it('a permission revoked live ends the subscriptions that read the field with FORBIDDEN', async () => {
    const token = await mintDevToken(stack.router.keyRing, { sub: 'bob' });
    const client = wsClient(stack, { authorization: `Bearer ${token}` });
    clients.push(client);
    const watched = watch(client, STOCK, { id: '2' });
    await eventually(() => stack.router.subscriptions.size === 1, { what: 'bob subscribed' });
    // Product.price now needs `sub:carol`: bob may no longer read it.
    await grantPermission(stack.db, 'sub:carol', 'Product.price');
    try {
      await watched.ended;
      expect((watched.error as { extensions?: { code?: string } }[])[0].extensions?.code).toBe('FORBIDDEN');
    } finally {
      await revokePermission(stack.db, 'sub:carol', 'Product.price');
    }
  });

  it('over the limit a new subscription is refused with SUBSCRIPTION_LIMIT and Retry-After; nothing open is touched, queries still run', async () => {
    await setPolicy(stack.db, 'Stock', { maxSubscriptions: 2 });
    await eventually(() => stack.router.policies.resolve('Stock').maxSubscriptions === 2, { what: 'the policy reached the router' });
    try {
      const open = [0, 1].map(() => {
        const client = wsClient(stack);
        clients.push(client);
        return watch(client, STOCK, { id: '5' });
      });
      await eventually(async () => stack.router.subscriptions.size === 2 && (await subgraphSubscriptions(stack)).open === 1, { what: 'two open, one upstream' });
      const refusedClient = wsClient(stack);
      clients.push(refusedClient);
      const refused = watch(refusedClient, STOCK, { id: '5' });
      await refused.ended;
      expect((refused.error as { extensions?: { code?: string; retryAfter?: number } }[])[0].extensions).toMatchObject({ code: 'SUBSCRIPTION_LIMIT', retryAfter: 5 });
      const overSse = await fetch(stack.router.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify({ query: STOCK, variables: { id: '5' } }) });
      expect(overSse.status).toBe(429);
      expect(overSse.headers.get('retry-after')).toBe('5');
      await overSse.body?.cancel();
      expect((await stack.query('{ product(id: "5") { name } }')).body.data.product.name).toBeTruthy();
      const next = open.map((w) => w.nextEvent());
      await push(stack, '5', 3);
      await Promise.all(next);
    } finally {
      await removePolicy(stack.db, 'Stock');
    }
  });

  it('per caller: one user over the limit is refused, another user is not', async () => {
    await setPolicy(stack.db, 'Stock', { maxSubscriptionsPerPrincipal: 1 });
    await eventually(() => stack.router.policies.resolve('Stock').maxSubscriptionsPerPrincipal === 1, { what: 'the policy reached the router' });
    try {
      const [dana, eve] = await Promise.all(['dana', 'eve'].map((sub) => mintDevToken(stack.router.keyRing, { sub })));
      const danaClient = wsClient(stack, { authorization: `Bearer ${dana}` });
      const eveClient = wsClient(stack, { authorization: `Bearer ${eve}` });
      clients.push(danaClient, eveClient);
      const first = watch(danaClient, STOCK, { id: '2' });
      await eventually(() => stack.router.subscriptions.size === 1, { what: "dana's first open" });
      const second = watch(danaClient, STOCK, { id: '3' });
      await second.ended;
      expect((second.error as { extensions?: { code?: string } }[])[0].extensions?.code).toBe('SUBSCRIPTION_LIMIT');
      watch(eveClient, STOCK, { id: '2' });
      await eventually(() => stack.router.subscriptions.size === 2, { what: "eve's open beside dana's" });
      expect(first.error).toBeUndefined();
      expect(await stack.metric('switchyard_subscriptions_refused_total', { limit: 'principal' })).toBe(1);
    } finally {
      await removePolicy(stack.db, 'Stock');
    }
  });

  it('clients that differ only in client_id complete their events apart; another token of the same holder shares', async () => {
    // The test before removes its per-caller limit: the change reaches the router a moment later.
    await eventually(() => stack.router.policies.resolve('Stock').maxSubscriptionsPerPrincipal === undefined, { what: 'no per-caller limit' });
    const [web, mobile, webAgain] = await Promise.all([
      mintDevToken(stack.router.keyRing, { sub: 'frank', clientId: 'web' }),
      mintDevToken(stack.router.keyRing, { sub: 'frank', clientId: 'mobile' }),
      mintDevToken(stack.router.keyRing, { sub: 'frank', clientId: 'web', ttlSeconds: 1800 }),
    ]);
    const watchers = [web, mobile, webAgain].map((token) => {
      const client = wsClient(stack, { authorization: `Bearer ${token}` });
      clients.push(client);
      return watch(client, STOCK, { id: '2' });
    });
    await eventually(() => stack.router.subscriptions.size === 3, { what: "frank's three subscriptions open" });
    // One token holder per client id (subject, scopes, client): two groups, two upstream subscriptions.
    expect(stack.router.subscriptions.groups).toBe(2);
    expect(stack.router.upstreams.counts().upstreams).toBe(2);
    await eventually(async () => (await subgraphSubscriptions(stack)).open === 2, { what: 'two subscriptions at the subgraph' });
    const next = watchers.map((w) => w.nextEvent());
    await push(stack, '2', 17);
    for (const event of await Promise.all(next)) await expectCompleted(stack, event, '2', 17);
  });

  it('the cost limit is checked at subscribe', async () => {
    await setPolicy(stack.db, 'Stock', { costLimit: 1 });
    await eventually(() => stack.router.policies.resolve('Stock').costLimit === 1, { what: 'the policy reached the router' });
    try {
      const client = wsClient(stack);
      clients.push(client);
      const refused = watch(client, STOCK, { id: '2' });
      await refused.ended;
      expect((refused.error as { extensions?: { code?: string } }[])[0].extensions?.code).toBe('COST_LIMIT_EXCEEDED');
      expect(stack.router.upstreams.counts().upstreams).toBe(0);
    } finally {
      await removePolicy(stack.db, 'Stock');
    }
  });

  it('a published graph keeps subscriptions whose document is still valid and ends the others with SUBSCRIPTION_SCHEMA_RELOAD', async () => {
    const client = wsClient(stack);
    clients.push(client);
    const kept = watch(client, `subscription Kept { inventoryChanged(productId: "6") { inStock product { name } } }`, {});
    const broken = watch(client, `subscription Broken { inventoryChanged(productId: "6") { inStock warehouse } }`, {});
    await eventually(async () => stack.router.subscriptions.size === 2 && (await subgraphSubscriptions(stack)).open === 2, { what: 'both open at the subgraph' });
    const inventory = stack.subgraphs.inventory;
    // The inventory subgraph drops `Inventory.warehouse` (with a description change, so the graph differs).
    const sdl = inventory.subgraph.sdl.replace(/\n\s*"Null when the stock is not assigned to a warehouse."\n\s*warehouse: String/, '');
    expect(sdl).not.toContain('warehouse: String');
    const swapped = stack.nextSwap();
    await publishSubgraph(stack.db, { name: 'inventory', url: inventory.running.url, sdl }, compositionCheck);
    await swapped;
    try {
      await broken.ended;
      expect((broken.error as { extensions?: { code?: string } }[])[0].extensions?.code).toBe('SUBSCRIPTION_SCHEMA_RELOAD');
      const next = kept.nextEvent();
      await push(stack, '6', 9);
      expect(((await next).data as { inventoryChanged: { inStock: number } }).inventoryChanged.inStock).toBe(9);
    } finally {
      const restored = stack.nextSwap();
      await publishSubgraph(stack.db, { name: 'inventory', url: inventory.running.url, sdl: inventory.subgraph.sdl }, compositionCheck);
      await restored;
    }
  });

  it('1,000 clients that disconnect abruptly leave no subscription, no upstream subscription and no socket', async () => {
    const sockets: WebSocket[] = [];
    const url = stack.router.url.replace(/^http/, 'ws');
    for (let i = 0; i < 1000; i++) {
      const socket = new WebSocket(url, 'graphql-transport-ws');
      sockets.push(socket);
      socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init' })));
      socket.on('message', (data) => {
        const message = JSON.parse(String(data)) as { type: string };
        if (message.type === 'connection_ack') socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: STOCK, variables: { id: '7' } } }));
      });
    }
    await eventually(() => stack.router.subscriptions.size === 1000, { timeoutMs: 30_000, what: '1000 subscriptions open' });
    expect(stack.router.upstreams.counts()).toEqual({ upstreams: 1, connections: 1 });
    for (const socket of sockets) socket.terminate();
    await eventually(() => stack.router.subscriptions.size === 0 && stack.router.websockets.connections === 0, { what: 'every subscription and socket gone' });
    await eventually(() => stack.router.upstreams.counts().upstreams === 0 && stack.router.subscriptions.groups === 0, { what: 'the upstream subscription released' });
    await eventually(async () => (await subgraphSubscriptions(stack)).open === 0, { what: 'no subscription left at the subgraph' });
    expect(await stack.metric('switchyard_subscriptions_active', { operation: 'Stock' })).toBe(0);
  }, 60_000);
});

describe('subscriptions when the subgraph fails, and at shutdown', () => {
  let stack: Stack;
  beforeAll(async () => {
    // Subgraph tokens live 5 s (the shortest allowed): a subscription outlives several.
    stack = await startStack({ config: { subgraphTokenTtlSeconds: 5 } });
    await stack.publishRoute('inventory', { subscriptions: { reconnect: { attempts: 3, initialDelayMs: 50, maxDelayMs: 200 } } });
  }, 60_000);
  afterAll(() => stack?.close());

  it('a subgraph killed and restarted: the router reconnects and events go on; killed for good: SUBGRAPH_UNAVAILABLE, never a normal end', async () => {
    const client = wsClient(stack);
    const watched = watch(client, STOCK, { id: '8' });
    await eventually(async () => (await subgraphSubscriptions(stack)).open === 1, { what: 'subscribed at the subgraph' });
    const inventory = stack.subgraphs.inventory;
    const port = Number(new URL(inventory.running.url).port);
    await inventory.running.close();
    inventory.running = await inventory.subgraph.listen(port);
    await eventually(async () => (await subgraphSubscriptions(stack)).open === 1, { what: 'resubscribed after the restart' });
    const next = watched.nextEvent();
    await push(stack, '8', 21);
    expect(((await next).data as { inventoryChanged: { inStock: number } }).inventoryChanged.inStock).toBe(21);
    expect(await stack.metric('switchyard_subscription_upstream_reconnects_total', { subgraph: 'inventory' })).toBeGreaterThan(0);
    await inventory.running.close();
    await watched.ended;
    expect(watched.completed).toBe(false);
    expect((watched.error as { extensions?: { code?: string } }[])[0].extensions?.code).toBe('SUBGRAPH_UNAVAILABLE');
    inventory.running = await inventory.subgraph.listen(port);
    await client.dispose();
  });

  it("the router's token for the subgraph is renewed before it expires: events go on past its expiry", async () => {
    const client = wsClient(stack);
    const watched = watch(client, STOCK, { id: '10' });
    await eventually(async () => (await subgraphSubscriptions(stack)).open === 1, { what: 'subscribed at the subgraph' });
    const expiresBy = Date.now() + 5_000;
    // The subgraph closes a connection whose token expired (4401): a renewal is a new subscription there first.
    await eventually(async () => (await subgraphSubscriptions(stack)).started >= 2, { timeoutMs: 8_000, what: 'the subscription moved to a renewed connection' });
    await eventually(() => Date.now() > expiresBy + 500, { timeoutMs: 8_000, what: 'the first token to expire' });
    const next = watched.nextEvent();
    await push(stack, '10', 33);
    expect(((await next).data as { inventoryChanged: { inStock: number } }).inventoryChanged.inStock).toBe(33);
    expect(watched.error).toBeUndefined();
    expect((await subgraphSubscriptions(stack)).open).toBe(1);
    await client.dispose();
  }, 20_000);

  it('shutdown: WebSocket clients get SHUTTING_DOWN and close code 1012', async () => {
    const router = await stack.startRouter();
    let watched!: Watched;
    const closed = new Promise<number>((resolve) => {
      const client = createWsClient({ url: router.url.replace(/^http/, 'ws'), webSocketImpl: WebSocket, retryAttempts: 0, on: { closed: (event) => resolve((event as { code: number }).code) } });
      watched = watch(client, STOCK, { id: '9' });
    });
    await eventually(() => router.subscriptions.size === 1, { what: 'subscribed' });
    await router.close();
    expect(await closed).toBe(1012);
    await watched.ended;
    expect((watched.error as { extensions?: { code?: string } }[])[0].extensions?.code).toBe('SHUTTING_DOWN');
  });
});
