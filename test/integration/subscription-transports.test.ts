// The router's own subscription transports (decision 032): the graphql-transport-ws protocol's rules, queries over the streaming transports, SSE requests that take the long way, and SSE at shutdown.
import { request as httpRequest } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';
import { createClient as createSseClient } from 'graphql-sse';
import type { ExecutionResult } from 'graphql';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/http.js';

const STOCK = 'subscription Stock($id: ID) { inventoryChanged(productId: $id) { inStock product { name } } }';

async function push(stack: Stack, productId: string, inStock: number): Promise<void> {
  const base = stack.subgraphs.inventory.running.url.replace(/\/graphql$/, '');
  const response = await fetch(`${base}/admin/inventory`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ productId, inStock }) });
  expect(response.status).toBe(200);
}

/** Subscriptions open at the inventory subgraph: an event pushed before its subscription arrived there reaches nobody. */
async function subgraphOpen(stack: Stack): Promise<number> {
  const base = stack.subgraphs.inventory.running.url.replace(/\/graphql$/, '');
  return ((await (await fetch(`${base}/admin/subscriptions`)).json()) as { open: number }).open;
}

/** A raw WebSocket on the router, with every message it receives and how it closed: for the protocol's rules, which a well-behaved client never breaks. */
interface RawSocket {
  socket: WebSocket;
  messages: Record<string, unknown>[];
  send(message: unknown): void;
  /** Resolves with the first message of `type`. */
  next(type: string): Promise<Record<string, unknown>>;
  closed: Promise<{ code: number; reason: string }>;
}

/** `protocol` null: the client asks for no subprotocol. */
async function rawSocket(stack: Stack, protocol: string | null = 'graphql-transport-ws'): Promise<RawSocket> {
  const socket = new WebSocket(stack.router.url.replace(/^http/, 'ws'), protocol === null ? [] : [protocol]);
  const messages: Record<string, unknown>[] = [];
  const waiters: { type: string; resolve: (message: Record<string, unknown>) => void }[] = [];
  socket.on('message', (data) => {
    const message = JSON.parse(String(data)) as Record<string, unknown>;
    messages.push(message);
    for (const waiter of waiters.filter((w) => w.type === message.type)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve(message);
    }
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => socket.on('close', (code, reason) => resolve({ code, reason: String(reason) })));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  return {
    socket,
    messages,
    send: (message) => socket.send(typeof message === 'string' ? message : JSON.stringify(message)),
    next: (type) => {
      const seen = messages.find((m) => m.type === type);
      return seen ? Promise.resolve(seen) : new Promise((resolve) => waiters.push({ type, resolve }));
    },
    closed,
  };
}

/** A raw socket past the handshake: connection_init sent, connection_ack received. */
async function acknowledgedSocket(stack: Stack): Promise<RawSocket> {
  const raw = await rawSocket(stack);
  raw.send({ type: 'connection_init' });
  await raw.next('connection_ack');
  return raw;
}

describe('the graphql-transport-ws protocol', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ config: { authMode: 'optional' } });
  }, 60_000);
  afterEach(async () => {
    await eventually(async () => stack.router.subscriptions.size === 0 && stack.router.websockets.connections === 0 && (await subgraphOpen(stack)) === 0, { what: 'every subscription and socket of the test gone, at the subgraph too' });
  });
  afterAll(() => stack?.close());

  it('a client that does not ask for the subprotocol is closed with 4406', async () => {
    const raw = await rawSocket(stack, null);
    expect(await raw.closed).toEqual({ code: 4406, reason: 'Subprotocol not acceptable' });
  });

  it('subscribe before connection_init: 4401; a second connection_init: 4429', async () => {
    const early = await rawSocket(stack);
    early.send({ id: '1', type: 'subscribe', payload: { query: '{ __typename }' } });
    expect((await early.closed).code).toBe(4401);

    const twice = await acknowledgedSocket(stack);
    twice.send({ type: 'connection_init' });
    expect((await twice.closed).code).toBe(4429);
  });

  it('a message that is not the protocol closes with 4400; ping is answered with pong and its payload', async () => {
    const raw = await acknowledgedSocket(stack);
    raw.send({ type: 'ping', payload: { at: 1 } });
    expect(await raw.next('pong')).toEqual({ type: 'pong', payload: { at: 1 } });
    raw.send('{not json');
    expect(await raw.closed).toEqual({ code: 4400, reason: 'Invalid message received' });

    const unknown = await acknowledgedSocket(stack);
    unknown.send({ id: '1', type: 'subscribe', payload: { variables: {} } });
    expect(await unknown.closed).toEqual({ code: 4400, reason: 'Invalid subscribe payload' });
  });

  it('a second subscribe with an id in use closes with 4409, and ends the first subscription', async () => {
    const raw = await acknowledgedSocket(stack);
    raw.send({ id: 'a', type: 'subscribe', payload: { query: STOCK, variables: { id: '5' } } });
    await eventually(() => stack.router.subscriptions.size === 1, { what: 'the first subscription open' });
    raw.send({ id: 'a', type: 'subscribe', payload: { query: STOCK, variables: { id: '6' } } });
    expect(await raw.closed).toEqual({ code: 4409, reason: 'Subscriber for a already exists' });
  });

  it('no connection_init within 3 s: 4408', async () => {
    const raw = await rawSocket(stack);
    expect(await raw.closed).toEqual({ code: 4408, reason: 'Connection initialisation timeout' });
  }, 10_000);

  it('events are `next` messages; a client `complete` ends the subscription and frees its upstream share at once', async () => {
    const raw = await acknowledgedSocket(stack);
    raw.send({ id: 's1', type: 'subscribe', payload: { query: STOCK, variables: { id: '7' }, operationName: 'Stock' } });
    await eventually(async () => (await subgraphOpen(stack)) === 1, { what: 'the upstream subscription open at the subgraph' });
    await push(stack, '7', 33);
    const next = await raw.next('next');
    expect(next).toMatchObject({ id: 's1', type: 'next', payload: { data: { inventoryChanged: { inStock: 33, product: { name: expect.any(String) } } } } });
    raw.send({ id: 's1', type: 'complete' });
    await eventually(async () => stack.router.subscriptions.size === 0 && stack.router.upstreams.counts().upstreams === 0 && (await subgraphOpen(stack)) === 0, { what: 'the subscription and its upstream ended' });
    // The client ended it: the router writes no `complete` back (the protocol's rule).
    expect(raw.messages.filter((m) => m.type === 'complete')).toEqual([]);
    raw.socket.close();
  });

  it('graphql-ws: a query is answered with `next` then `complete`; a refused one with `error`', async () => {
    const client: WsClient = createWsClient({ url: stack.router.url.replace(/^http/, 'ws'), webSocketImpl: WebSocket, retryAttempts: 0 });
    try {
      const answer = await new Promise<{ results: ExecutionResult[]; completed: boolean }>((resolve, reject) => {
        const results: ExecutionResult[] = [];
        client.subscribe({ query: '{ product(id: "1") { name } }' }, { next: (r) => results.push(r as ExecutionResult), error: reject, complete: () => resolve({ results, completed: true }) });
      });
      expect(answer.results).toHaveLength(1);
      expect(answer.results[0].data).toEqual({ product: { name: (await stack.query('{ product(id: "1") { name } }')).body.data.product.name } });

      const refused = await new Promise<unknown>((resolve) => {
        client.subscribe({ query: '{ nope }' }, { next: () => undefined, error: resolve, complete: () => resolve('completed') });
      });
      expect((refused as { extensions?: { code?: string } }[])[0].extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    } finally {
      await client.dispose();
    }
  });
});

describe('subscriptions over HTTP', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ config: { authMode: 'optional' } });
  }, 60_000);
  afterEach(async () => {
    await eventually(async () => stack.router.subscriptions.size === 0 && (await subgraphOpen(stack)) === 0, { what: 'every subscription of the test ended, at the subgraph too' });
  });
  afterAll(() => stack?.close());

  it('graphql-sse: a query read as an event stream is answered whole, then the stream completes', async () => {
    const client = createSseClient({ url: stack.router.url, retryAttempts: 0 });
    try {
      const results: ExecutionResult[] = [];
      await new Promise<void>((resolve, reject) => {
        client.subscribe({ query: '{ product(id: "2") { name price } }' }, { next: (r) => results.push(r as ExecutionResult), error: reject, complete: resolve });
      });
      expect(results).toEqual([{ data: (await stack.query('{ product(id: "2") { name price } }')).body.data }]);
    } finally {
      client.dispose();
    }
  });

  it('an SSE subscription answers with the headers the pipeline set (x-request-id) and its own', async () => {
    const controller = new AbortController();
    const response = await fetch(stack.router.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-request-id': 'sse-request-1' },
      body: JSON.stringify({ query: STOCK, variables: { id: '8' } }),
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(response.headers.get('x-request-id')).toBe('sse-request-1');
    await eventually(() => stack.router.subscriptions.size === 1, { what: 'the subscription open' });
    controller.abort();
  });

  it('an SSE subscription whose body comes chunked (no content-length) streams too, and ends when the client leaves', async () => {
    const body = JSON.stringify({ query: STOCK, variables: { id: '9' } });
    const url = new URL(stack.router.url);
    const chunks: string[] = [];
    let gotEvent!: () => void;
    const event = new Promise<void>((resolve) => (gotEvent = resolve));
    const request = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'transfer-encoding': 'chunked' } }, (response) => {
      expect(response.statusCode).toBe(200);
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        chunks.push(chunk);
        if (chunks.join('').includes('event: next')) gotEvent();
      });
    });
    request.on('error', () => undefined);
    request.write(body.slice(0, 10));
    request.end(body.slice(10));
    await eventually(async () => stack.router.subscriptions.size === 1 && (await subgraphOpen(stack)) === 1, { what: 'the subscription open, at the subgraph too' });
    await push(stack, '9', 4);
    await event;
    const data = chunks.join('').split('\n').find((line) => line.startsWith('data: {'));
    expect(JSON.parse(data!.slice('data: '.length))).toMatchObject({ data: { inventoryChanged: { inStock: 4 } } });
    request.destroy();
    await eventually(() => stack.router.subscriptions.size === 0 && stack.router.upstreams.counts().upstreams === 0, { what: 'the subscription and its upstream ended with the client' });
  });

  it('shutdown: an SSE stream is cut without `complete`, so graphql-sse reports an error (and would retry elsewhere), never a normal end', async () => {
    const router = await stack.startRouter();
    const client = createSseClient({ url: router.url, retryAttempts: 0 });
    const ended = new Promise<'error' | 'complete'>((resolve) => {
      client.subscribe({ query: STOCK, variables: { id: '10' } }, { next: () => undefined, error: () => resolve('error'), complete: () => resolve('complete') });
    });
    await eventually(() => router.subscriptions.size === 1, { what: 'subscribed' });
    await router.close();
    expect(await ended).toBe('error');
    expect(router.subscriptions.size).toBe(0);
    client.dispose();
  });
});
