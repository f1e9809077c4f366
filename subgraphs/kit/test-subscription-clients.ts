// Test helpers for subscriptions: the real graphql-ws and graphql-sse clients against a running subgraph, and its subscription counters.
import { createClient as createWsClient, type Client as WsClient, type ClientOptions as WsClientOptions } from 'graphql-ws';
import { createClient as createSseClient, type Client as SseClient } from 'graphql-sse';
import WebSocket from 'ws';
import type { SubscriptionCounters } from './subgraph-stats.js';
import { baseUrl } from './test-client.js';
import type { RunningSubgraph } from './types.js';

/** `ws://host:port/graphql` of a running subgraph. */
export function webSocketUrl(running: RunningSubgraph): string {
  return running.url.replace(/^http/, 'ws');
}

/** How a graphql-ws client's socket closed (the `closed` event), as far as tests look at it. */
export interface SocketClose {
  code: number;
  reason: string;
}

export interface TestWsClient {
  client: WsClient;
  /** Every close of the client's socket so far. */
  readonly closes: SocketClose[];
  /** Resolves at the next close of the client's socket. */
  nextClose(): Promise<SocketClose>;
  /** Resolves at the next `connected` (connection_ack received). */
  nextConnected(): Promise<void>;
}

/**
 * A graphql-ws client on `ws` that gives up at the first close (tests assert close codes) unless
 * `options` says otherwise. `headers` go on the upgrade request (e.g. `authorization`).
 */
export function openWsClient(running: RunningSubgraph, options: Partial<WsClientOptions> & { headers?: Record<string, string> } = {}): TestWsClient {
  const { headers, ...clientOptions } = options;
  const closes: SocketClose[] = [];
  const closeWaiters: ((close: SocketClose) => void)[] = [];
  const connectWaiters: (() => void)[] = [];
  const webSocketImpl =
    headers === undefined
      ? WebSocket
      : class WebSocketWithHeaders extends WebSocket {
          constructor(url: string, protocols?: string | string[]) {
            super(url, protocols, { headers });
          }
        };
  const client = createWsClient({
    url: webSocketUrl(running),
    webSocketImpl,
    retryAttempts: 0,
    lazy: true,
    ...clientOptions,
    on: {
      ...clientOptions.on,
      closed: function recordClose(event) {
        const { code, reason } = event as { code: number; reason: string | Buffer };
        const close = { code, reason: String(reason) };
        closes.push(close);
        for (const waiter of closeWaiters.splice(0)) waiter(close);
      },
      connected: function recordConnected() {
        for (const waiter of connectWaiters.splice(0)) waiter();
      },
    },
  });
  return {
    client,
    closes,
    nextClose: () => new Promise((resolve) => closeWaiters.push(resolve)),
    nextConnected: () => new Promise((resolve) => connectWaiters.push(resolve)),
  };
}

/** A graphql-sse client in distinct connections mode (one POST per subscription), giving up at the first failure. */
export function openSseClient(running: RunningSubgraph, headers: Record<string, string> = {}): SseClient {
  return createSseClient({ url: running.url, headers, retryAttempts: 0 });
}

export async function readSubscriptions(running: RunningSubgraph): Promise<SubscriptionCounters> {
  const response = await fetch(`${baseUrl(running)}/admin/subscriptions`);
  return (await response.json()) as SubscriptionCounters;
}

/** Polls `GET /admin/subscriptions` (each fetch awaited, no fixed sleeps) until `accept` holds or `timeoutMs` passes. */
export async function waitForSubscriptions(running: RunningSubgraph, accept: (counters: SubscriptionCounters) => boolean, timeoutMs = 5_000): Promise<SubscriptionCounters> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const counters = await readSubscriptions(running);
    if (accept(counters)) return counters;
    if (Date.now() > deadline) throw new Error(`subscription counters never matched: ${JSON.stringify(counters)}`);
  }
}
