// The router's HTTP connections: idle ones kept as long as configured, slow-loris clients cut by the headers and request timeouts, streamed answers never.
import { connect, type Socket } from 'node:net';
import { meros } from 'meros/browser';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_FAULT_SETTINGS } from '../../subgraphs/index.js';
import type { RunningRouter } from '../../src/cli/start-router.js';
import { databaseKind } from '../helpers/database.js';
import { startStack, type Stack } from '../helpers/stack.js';

// Small values, so that what must happen happens within a second and what must not is seen in as little.
const KEEP_ALIVE_MS = 1_000;
const HEADERS_MS = 300;
const REQUEST_MS = 800;
/** Node's timers fire a little early or late by a millisecond or so; a loaded machine adds lateness only. */
const EARLY_MS = 25;
/**
 * Node 20 closes an idle connection a second after the keep-alive timeout it advertises in
 * `Keep-Alive: timeout=` (its HTTP_SERVER_KEEP_ALIVE_TIMEOUT_BUFFER), so a client that honours the
 * header never sends on a connection being closed.
 */
const NODE_KEEP_ALIVE_MARGIN_MS = 1_000;
/** How late a cut may come on a loaded machine (2 shared cores): the check runs every HEADERS_MS / 4. */
const LATE_MS = 2_000;

/** A raw HTTP/1.1 connection: what it received, each answer as it completes, and when it closed. */
class RawConnection {
  readonly socket: Socket;
  readonly openedAt = performance.now();
  /** Resolves with the time the connection closed (performance.now()). */
  readonly closed: Promise<number>;
  #buffer = '';
  #received = '';
  #waiters: (() => void)[] = [];

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      this.#buffer += chunk;
      this.#received += chunk;
      for (const wake of this.#waiters.splice(0)) wake();
    });
    this.closed = new Promise((resolve) => socket.once('close', () => resolve(performance.now())));
    // A reset by the router is a close too; the tests look at what was received before it.
    socket.on('error', () => {});
  }

  static open(router: RunningRouter): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(router.port, '127.0.0.1');
      socket.once('connect', () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  /** Everything received so far. */
  get received(): string {
    return this.#received;
  }

  /** The next complete answer (status line and headers, then its body: Content-Length bytes, or chunks up to the last), taken off the buffer. */
  async nextAnswer(): Promise<{ head: string; body: string }> {
    for (;;) {
      const end = this.#buffer.indexOf('\r\n\r\n');
      if (end >= 0) {
        const head = this.#buffer.slice(0, end);
        const chunked = /\r\ntransfer-encoding: *chunked/i.test(head);
        const bodyEnd = chunked ? lastChunkEnd(this.#buffer, end + 4) : end + 4 + Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (bodyEnd !== undefined && this.#buffer.length >= bodyEnd) {
          const body = this.#buffer.slice(end + 4, bodyEnd);
          this.#buffer = this.#buffer.slice(bodyEnd);
          return { head, body };
        }
      }
      if (this.socket.destroyed) throw new Error(`the connection closed before a whole answer: ${JSON.stringify(this.#received)}`);
      await Promise.race([new Promise<void>((wake) => this.#waiters.push(wake)), this.closed]);
    }
  }

  /** Writes `text` one byte every `everyMs` until the connection closes; returns the stop function. */
  trickle(text: string, everyMs: number): () => void {
    let next = 0;
    const timer = setInterval(() => {
      if (this.socket.destroyed || !this.socket.writable) return;
      this.socket.write(text[next % text.length]);
      next++;
    }, everyMs);
    void this.closed.then(() => clearInterval(timer));
    return () => clearInterval(timer);
  }
}

/** Where a chunked body that starts at `from` ends (after its last, empty chunk), or undefined while it has not all arrived. */
function lastChunkEnd(buffer: string, from: number): number | undefined {
  let at = from;
  for (;;) {
    const sizeEnd = buffer.indexOf('\r\n', at);
    if (sizeEnd < 0) return undefined;
    const size = parseInt(buffer.slice(at, sizeEnd), 16);
    const next = sizeEnd + 2 + size + 2;
    if (buffer.length < next) return undefined;
    if (size === 0) return next;
    at = next;
  }
}

const healthRequest = 'GET /healthz HTTP/1.1\r\nHost: router\r\n\r\n';

describe(`HTTP connection timeouts (${databaseKind} database)`, () => {
  let stack: Stack;
  let router: RunningRouter;
  const connections: RawConnection[] = [];
  const open = async (target: RunningRouter) => {
    const connection = await RawConnection.open(target);
    connections.push(connection);
    return connection;
  };

  beforeAll(async () => {
    stack = await startStack();
    router = await stack.startRouter({ keepAliveTimeoutMs: KEEP_ALIVE_MS, headersTimeoutMs: HEADERS_MS, requestTimeoutMs: REQUEST_MS });
  });
  afterEach(() => {
    for (const connection of connections.splice(0)) connection.socket.destroy();
    for (const { subgraph } of Object.values(stack.subgraphs)) subgraph.faults.set(DEFAULT_FAULT_SETTINGS);
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('keeps idle connections 65 s by default, above a load balancer’s 60 s, and tells the client so', async () => {
    const connection = await open(stack.router);
    connection.socket.write(healthRequest);
    const { head } = await connection.nextAnswer();
    expect(head).toMatch(/^HTTP\/1\.1 200 /);
    expect(head).toMatch(/\r\nkeep-alive: timeout=65\r\n/i);
  });

  it('keeps an idle connection open past the headers timeout, for as long as configured, then closes it', async () => {
    const connection = await open(router);
    connection.socket.write(healthRequest);
    expect((await connection.nextAnswer()).head).toMatch(/\r\nkeep-alive: timeout=1\r\n/i);
    // Idle for twice the headers timeout: the headers clock starts with a request's first byte, not with the idle time before it.
    await new Promise((resolve) => setTimeout(resolve, 2 * HEADERS_MS));
    expect(connection.socket.destroyed).toBe(false);
    connection.socket.write(healthRequest);
    expect((await connection.nextAnswer()).head).toMatch(/^HTTP\/1\.1 200 /);
    const idleFrom = performance.now();
    const closedAt = await connection.closed;
    expect(closedAt - idleFrom).toBeGreaterThanOrEqual(KEEP_ALIVE_MS + NODE_KEEP_ALIVE_MARGIN_MS - EARLY_MS);
    expect(closedAt - idleFrom).toBeLessThan(KEEP_ALIVE_MS + NODE_KEEP_ALIVE_MARGIN_MS + LATE_MS);
  });

  it('ends a client that sends its headers slower than the headers timeout (slow loris) with 408', async () => {
    const connection = await open(router);
    connection.socket.write('POST /graphql HTTP/1.1\r\nHost: router\r\n');
    connection.trickle('x-slow-loris: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 20);
    const closedAt = await connection.closed;
    expect(connection.received).toMatch(/^HTTP\/1\.1 408 /);
    expect(closedAt - connection.openedAt).toBeGreaterThanOrEqual(HEADERS_MS - EARLY_MS);
    expect(closedAt - connection.openedAt).toBeLessThan(HEADERS_MS + LATE_MS);
  });

  it('ends a connection that sends nothing within the headers timeout', async () => {
    const connection = await open(router);
    const closedAt = await connection.closed;
    expect(connection.received).toMatch(/^HTTP\/1\.1 408 /);
    expect(closedAt - connection.openedAt).toBeGreaterThanOrEqual(HEADERS_MS - EARLY_MS);
  });

  it('ends a client that sends its body slower than the request timeout with 408', async () => {
    const connection = await open(router);
    const body = JSON.stringify({ query: '{ product(id: "1") { name } }' });
    connection.socket.write(`POST /graphql HTTP/1.1\r\nHost: router\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`);
    connection.trickle(body, 50);
    const closedAt = await connection.closed;
    expect(connection.received).toMatch(/^HTTP\/1\.1 408 /);
    expect(closedAt - connection.openedAt).toBeGreaterThanOrEqual(REQUEST_MS - EARLY_MS);
    expect(closedAt - connection.openedAt).toBeLessThan(REQUEST_MS + LATE_MS);
  });

  it('lets a streamed answer (@defer) last longer than the request timeout: it bounds receiving the request only', async () => {
    stack.subgraphs.reviews.subgraph.faults.set({ latencyMs: REQUEST_MS + 400 });
    const started = performance.now();
    const response = await fetch(router.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'multipart/mixed;deferSpec=20220824, application/json' },
      body: JSON.stringify({ query: '{ product(id: "1") { name ... @defer { reviews { rating } } } }' }),
    });
    const parts = (await meros<Record<string, any>>(response)) as AsyncGenerator<{ body: Record<string, any> }>;
    const payloads: Record<string, any>[] = [];
    for await (const part of parts) payloads.push(part.body);
    expect(performance.now() - started).toBeGreaterThan(REQUEST_MS);
    expect(payloads).toHaveLength(2);
    expect(payloads[1]).toMatchObject({ hasNext: false, incremental: [{ data: { reviews: expect.any(Array) } }] });
    expect(payloads[1].incremental[0].errors).toBeUndefined();
  });
});
