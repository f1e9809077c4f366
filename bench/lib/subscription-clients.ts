// A fleet of subscription clients in one process, the load generator of `--scenario subscriptions`: graphql-ws or GraphQL over SSE, every event checked and its arrival timed.
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';
import { Pool } from 'undici';
import WebSocket from 'ws';

/** The start of the ready line of the fleet's process entry (subscription-clients-main.ts), followed by its control URL. */
export const SUBSCRIPTION_CLIENTS_LABEL = 'subscription clients on';

/** How the clients of a fleet subscribe: GraphQL over WebSocket (graphql-ws, one socket per client) or GraphQL over SSE (distinct connections, one per client). */
export type SubscriptionTransport = 'ws' | 'sse';

export interface OpenOrder {
  /** The router's GraphQL URL (http:); the WebSocket clients use the same path on ws:. */
  url: string;
  transport: SubscriptionTransport;
  query: string;
  operationName: string;
  /** One per client: client i subscribes with `{ id: productIds[i] }`. */
  productIds: string[];
  /** Clients connecting at once (a connection counts until its handshake is done: the WebSocket's connection_ack, the SSE answer's headers). */
  concurrency: number;
}

export interface FleetStatus {
  clients: number;
  /** Handshakes done: WebSocket connection_ack, SSE 200 with its headers. */
  connected: number;
  /** Clients that could not connect or subscribe, or were refused. */
  failed: number;
  /** Subscriptions that ended (error or complete) while they should not have. */
  ended: number;
  /** Events received since the last clear, and how many of them were not a whole answer (errors, or a field missing). */
  events: number;
  malformed: number;
  /** Clients that received at least one event since the last clear. */
  clientsWithEvents: number;
  /** The first problem seen (a failure, an end, a malformed event), for the report. */
  firstProblem?: string;
}

/** One push to the inventory subgraph: the value every subscriber of that product should receive, and when it was sent (wall clock, ms, sub-ms precision). */
export interface Push {
  productId: string;
  inStock: number;
  at: number;
}

export interface FleetReport {
  /** Events that arrived inside [from, to]: what the throughput counts. */
  arrivedInWindow: number;
  /** Events matched to a push made inside [from, to], and their latency (arrival − push), in ms. */
  matched: number;
  latenciesMs: number[];
  /** Events that match no push (a value nobody pushed: a bug somewhere). */
  unmatched: number;
  events: number;
  malformed: number;
}

/** The wall clock with sub-millisecond precision, comparable between processes of one machine (each derives it from the system clock at its start). */
export function wallClockMs(): number {
  return performance.timeOrigin + performance.now();
}

/** Whether an event is the whole answer the bench's subscription asks for: `{ inStock product { name price } }` and no errors; its inStock when it is. */
function inStockOf(result: unknown): number | undefined {
  const { data, errors } = (result ?? {}) as { data?: { inventoryChanged?: { inStock?: unknown; product?: { name?: unknown; price?: unknown } } }; errors?: unknown };
  const changed = data?.inventoryChanged;
  if (errors !== undefined || !changed || typeof changed.inStock !== 'number' || typeof changed.product?.name !== 'string' || typeof changed.product.price !== 'number') return undefined;
  return changed.inStock;
}

/** Splits a text/event-stream into its events (`event:` and `data:` lines, a blank line between events; comments, the heartbeats, are skipped). */
class EventStreamParser {
  #buffer = '';
  readonly #onEvent: (event: string, data: string) => void;

  constructor(onEvent: (event: string, data: string) => void) {
    this.#onEvent = onEvent;
  }

  push(chunk: string): void {
    this.#buffer += chunk;
    for (let end = this.#buffer.indexOf('\n\n'); end !== -1; end = this.#buffer.indexOf('\n\n')) {
      const block = this.#buffer.slice(0, end);
      this.#buffer = this.#buffer.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
      }
      if (data.length > 0 || event !== 'message') this.#onEvent(event, data.join('\n'));
    }
  }
}

/**
 * The clients of one process. Every event is checked (a whole answer, no errors) and logged as
 * (client's product, inStock, arrival time); the latency is computed at the end against the pushes the
 * bench made (report()), so nothing but a few array writes happens per event while it is measured.
 */
export class SubscriptionFleet {
  #order: OpenOrder | undefined;
  #connected = 0;
  #failed = 0;
  #ended = 0;
  #closing = false;
  #firstProblem: string | undefined;
  /** Per client: events since the last clear. */
  #eventsPerClient = new Uint32Array(0);
  #events = 0;
  #malformed = 0;
  /** The arrival log since the last clear: client index, inStock, arrival (wall ms). */
  #arrivalClient: number[] = [];
  #arrivalStock: number[] = [];
  #arrivalAt: number[] = [];
  readonly #closers: (() => Promise<void>)[] = [];
  #pool: Pool | undefined;

  status(): FleetStatus {
    let clientsWithEvents = 0;
    for (const count of this.#eventsPerClient) if (count > 0) clientsWithEvents++;
    return {
      clients: this.#order?.productIds.length ?? 0,
      connected: this.#connected,
      failed: this.#failed,
      ended: this.#ended,
      events: this.#events,
      malformed: this.#malformed,
      clientsWithEvents,
      ...(this.#firstProblem ? { firstProblem: this.#firstProblem } : {}),
    };
  }

  /** Starts opening every client of the order, `concurrency` at a time; resolves when every one has connected or failed (status() shows progress meanwhile). */
  async open(order: OpenOrder): Promise<void> {
    if (this.#order) throw new Error('this fleet already opened its clients');
    this.#order = order;
    this.#eventsPerClient = new Uint32Array(order.productIds.length);
    if (order.transport === 'sse') {
      // One connection per subscription: undici's pool keeps at most `connections` per origin, so it must allow them all.
      this.#pool = new Pool(new URL(order.url).origin, { connections: order.productIds.length, pipelining: 1, headersTimeout: 60_000, bodyTimeout: 0, connectTimeout: 60_000 });
    }
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < order.productIds.length && !this.#closing; i = next++) {
        await (order.transport === 'ws' ? this.#openWebSocket(order, i) : this.#openEventStream(order, i));
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, order.concurrency) }, worker));
  }

  /** Forgets the arrival log and the per-client counts (before the check pushes, before the measured window). */
  clear(): void {
    this.#eventsPerClient.fill(0);
    this.#events = 0;
    this.#malformed = 0;
    this.#arrivalClient = [];
    this.#arrivalStock = [];
    this.#arrivalAt = [];
  }

  /**
   * Matches every logged arrival to its push: the latest push of the client's product with that inStock
   * sent before the arrival (values repeat only after MAX_IN_STOCK + 1 pushes of one product, far apart).
   * A client may see its event a hair before the push's recorded time (two processes' clocks agree to
   * about 0.1 ms), hence the millisecond of slack.
   */
  report(from: number, to: number, pushes: readonly Push[]): FleetReport {
    const order = this.#order;
    const byKey = new Map<string, number[]>();
    for (const push of pushes) {
      const key = `${push.productId}\u0000${push.inStock}`;
      let times = byKey.get(key);
      if (!times) byKey.set(key, (times = []));
      times.push(push.at);
    }
    for (const times of byKey.values()) times.sort((a, b) => a - b);
    let arrivedInWindow = 0;
    let unmatched = 0;
    const latenciesMs: number[] = [];
    for (let i = 0; i < this.#arrivalAt.length; i++) {
      const at = this.#arrivalAt[i];
      if (at >= from && at <= to) arrivedInWindow++;
      const times = byKey.get(`${order?.productIds[this.#arrivalClient[i]]}\u0000${this.#arrivalStock[i]}`);
      let pushedAt: number | undefined;
      for (let k = (times?.length ?? 0) - 1; k >= 0; k--) {
        if (times![k] <= at + 1) {
          pushedAt = times![k];
          break;
        }
      }
      if (pushedAt === undefined) unmatched++;
      else if (pushedAt >= from && pushedAt <= to) latenciesMs.push(Math.round((at - pushedAt) * 100) / 100);
    }
    return { arrivedInWindow, matched: latenciesMs.length, latenciesMs, unmatched, events: this.#events, malformed: this.#malformed };
  }

  /** Every client leaves at once (the WebSocket closes with 1000, the SSE request is aborted); resolves when every socket is closed. */
  async close(): Promise<void> {
    this.#closing = true;
    await Promise.all(this.#closers.splice(0).map((close) => close().catch(() => undefined)));
    await this.#pool?.destroy().catch(() => undefined);
  }

  #problem(what: string): void {
    this.#firstProblem ??= what;
  }

  #arrived(client: number, result: unknown): void {
    const at = wallClockMs();
    const inStock = inStockOf(result);
    this.#events++;
    this.#eventsPerClient[client]++;
    if (inStock === undefined) {
      this.#malformed++;
      this.#problem(`client ${client}: an event that is not a whole answer: ${JSON.stringify(result).slice(0, 300)}`);
      return;
    }
    this.#arrivalClient.push(client);
    this.#arrivalStock.push(inStock);
    this.#arrivalAt.push(at);
  }

  /** One graphql-ws client on its own WebSocket; resolves once it is acknowledged (its subscribe message goes right after) or failed. */
  #openWebSocket(order: OpenOrder, client: number): Promise<void> {
    return new Promise<void>((resolve) => {
      let settled = false;
      const settle = (connected: boolean) => {
        if (settled) return;
        settled = true;
        if (connected) this.#connected++;
        else this.#failed++;
        resolve();
      };
      const ws: WsClient = createWsClient({
        url: order.url.replace(/^http/, 'ws'),
        webSocketImpl: WebSocket,
        lazy: true,
        retryAttempts: 0,
        on: {
          connected: () => settle(true),
          error: (error) => {
            this.#problem(`client ${client}: WebSocket error ${String((error as { message?: string }).message ?? error)}`);
            settle(false);
          },
          closed: (event) => {
            if (!settled) this.#problem(`client ${client}: WebSocket closed before connection_ack (code ${(event as { code?: number }).code})`);
            settle(false);
          },
        },
      });
      ws.subscribe(
        { query: order.query, operationName: order.operationName, variables: { id: order.productIds[client] } },
        {
          next: (result) => this.#arrived(client, result),
          error: (error) => {
            if (this.#closing) return;
            this.#ended++;
            this.#problem(`client ${client}: the subscription ended with an error: ${JSON.stringify(error).slice(0, 300)}`);
          },
          complete: () => {
            if (this.#closing) return;
            this.#ended++;
            this.#problem(`client ${client}: the subscription completed`);
          },
        },
      );
      this.#closers.push(() => ws.dispose() as Promise<void>);
    });
  }

  /** One GraphQL over SSE subscription (distinct connections: a POST with Accept: text/event-stream, on a connection of its own); resolves at its answer's headers. */
  async #openEventStream(order: OpenOrder, client: number): Promise<void> {
    const target = new URL(order.url);
    const controller = new AbortController();
    this.#closers.push(async () => controller.abort());
    let response;
    try {
      response = await this.#pool!.request({
        path: target.pathname,
        method: 'POST',
        signal: controller.signal,
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ query: order.query, operationName: order.operationName, variables: { id: order.productIds[client] } }),
      });
    } catch (error) {
      if (!this.#closing) {
        this.#failed++;
        this.#problem(`client ${client}: SSE request failed: ${(error as Error).message}`);
      }
      return;
    }
    if (response.statusCode !== 200) {
      this.#failed++;
      this.#problem(`client ${client}: SSE answered HTTP ${response.statusCode}: ${(await response.body.text().catch(() => '')).slice(0, 300)}`);
      return;
    }
    this.#connected++;
    const parser = new EventStreamParser((event, data) => {
      if (event === 'next') {
        let parsed: unknown;
        try {
          parsed = JSON.parse(data);
        } catch {
          parsed = data;
        }
        this.#arrived(client, parsed);
      } else if (event === 'complete' && !this.#closing) {
        this.#ended++;
        this.#problem(`client ${client}: the SSE stream completed`);
      }
    });
    response.body.setEncoding('utf8');
    response.body.on('data', (chunk: string) => parser.push(chunk));
    response.body.on('error', (error: Error) => {
      if (this.#closing || controller.signal.aborted) return;
      this.#ended++;
      this.#problem(`client ${client}: the SSE stream broke: ${error.message}`);
    });
    response.body.on('end', () => {
      if (this.#closing) return;
      this.#ended++;
      this.#problem(`client ${client}: the SSE stream ended`);
    });
  }
}
