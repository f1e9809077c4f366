// GraphQL over WebSocket (the `graphql-transport-ws` protocol) on `/graphql`: every subscribe message goes through the router's whole HTTP pipeline.
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { GraphQLError, type ExecutionResult, type GraphQLFormattedError } from 'graphql';
import { WebSocketServer, WebSocket, type RawData } from 'ws';
import { isAsyncIterable } from 'graphql-yoga';
import { HeartbeatWheel } from '../streaming/heartbeat-wheel.js';
import { STREAM_BRIDGE, type StreamBridge } from './stream-bridge.js';
import type { ClientSubscription, SubscriptionSink } from './client-subscription.js';
import { formattedError, jsonOf } from '../streaming/result-json.js';
import { closeReason, connectionToken, parseMessage, rawText, type SubscribePayload } from './graphql-ws-protocol.js';
import { requestStateOf } from '../request/request-state.js';
import type { Logger } from '../telemetry/logger.js';
import { MASKED_MESSAGE } from '../errors/mask-errors.js';

/** The router's fetch handler (yoga's `fetch`): the WebSocket transport sends it each subscribe message as a request. */
export type FetchHandler = (request: Request, serverContext: Record<string | symbol, unknown>) => Promise<Response> | Response;

export interface WebSocketServerOptions {
  /** The endpoint clients open WebSockets on. Default `/graphql`. */
  path?: string;
  /** Ping interval, in ms: a client that has not answered a ping by the next one is closed. */
  heartbeatMs: number;
  /** Largest message accepted, in bytes (the router's body limit). */
  maxPayloadBytes: number;
  /** How long a client has to send `connection_init` after connecting, in ms. Default 3000. */
  initTimeoutMs?: number;
  logger?: Logger;
}

export interface RunningWebSockets {
  /** WebSocket connections open now. */
  readonly connections: number;
  /** Closes every connection with `code` (1012: the service restarts; clients reconnect elsewhere). */
  closeAll(code: number, reason: string): void;
  close(): Promise<void>;
}

/** The protocol's name, as the client asks for it in `Sec-WebSocket-Protocol`. */
const PROTOCOL = 'graphql-transport-ws';

/** Headers of the upgrade request passed on to each subscribe request (who the client is; never hop-by-hop ones). */
const PASSED_HEADERS = ['authorization', 'cookie', 'user-agent', 'x-client-name', 'graphql-client-name', 'graphql-client-version', 'apollographql-client-name', 'apollographql-client-version', 'x-request-id', 'traceparent', 'tracestate', 'x-forwarded-for'];

/** Bytes a client may have waiting in its socket before new events are dropped for it (a live screen wants the latest). */
const MAX_BUFFERED_BYTES = 1 << 20;

/** The protocol's close codes (graphql-transport-ws). */
const CLOSE = {
  badRequest: 4400,
  unauthorized: 4401,
  subprotocolNotAcceptable: 4406,
  initTimeout: 4408,
  subscriberExists: 4409,
  tooManyInits: 4429,
} as const;

/**
 * Serves GraphQL over WebSocket beside HTTP on the same server and port (decision 031; 032 for why
 * the protocol is the router's own code).
 * 1. The upgrade is accepted on `path` only, with the `graphql-transport-ws` subprotocol (else 4406).
 *    The protocol: `connection_init` within `initTimeoutMs` (4408), once (4429), acknowledged; `ping`
 *    answered with `pong`; `subscribe` only after the acknowledgement (4401), with an id not in use
 *    (4409); `complete` ends an operation; anything else closes with 4400. One timer pings every
 *    client every `heartbeatMs` (WebSocket ping frames) and closes those that did not answer the last.
 * 2. Each subscribe message becomes a POST to the router itself (`router.fetch`), with the upgrade
 *    request's identifying headers and the token the browser put in `connection_init`
 *    (`{ "authorization": "Bearer …" }` or `{ "Authorization": … }`). So trusted documents, hardening,
 *    authentication, authorization, cost, limits, audit and tracing hold for WebSocket clients
 *    exactly as for HTTP ones, with no second implementation. A subscription comes back through the
 *    bridge as the subscription itself, and this transport writes its events as they are completed
 *    (`next`, the event's JSON made once for all its clients); a query's answer is `next` then
 *    `complete`; a refusal is an `error` message.
 * 3. A subscription that ends with an error (TOKEN_EXPIRED, FORBIDDEN, SUBGRAPH_UNAVAILABLE...) gets
 *    an `error` message, never a `complete`. A client's `complete`, or its leaving, ends its
 *    subscriptions at once (and aborts the requests still being answered).
 */
export function serveWebSockets(server: Server, router: { fetch: FetchHandler }, options: WebSocketServerOptions): RunningWebSockets {
  const path = options.path ?? '/graphql';
  const initTimeoutMs = options.initTimeoutMs ?? 3_000;
  const sockets = new WebSocketServer({ noServer: true, maxPayload: options.maxPayloadBytes, handleProtocols: (protocols) => (protocols.has(PROTOCOL) ? PROTOCOL : false) });
  const connections = new Set<Connection>();
  // Made outside the upgrade handler: a closure made in it would keep the upgrade request for the life of the socket.
  const heartbeats = new HeartbeatWheel<Connection>(options.heartbeatMs, (connection) => connection.beat());
  const setup: ConnectionSetup = {
    router,
    path,
    initTimeoutMs,
    logger: options.logger,
    onClose: (connection) => {
      connections.delete(connection);
      heartbeats.delete(connection);
    },
  };
  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = request.url ?? '/';
    const pathname = url.includes('?') ? url.slice(0, url.indexOf('?')) : url;
    if (pathname !== path) {
      socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    sockets.handleUpgrade(request, socket, head, (ws) => {
      const connection = new Connection(ws, request, setup);
      if (connection.socket.readyState !== WebSocket.OPEN) return;
      connections.add(connection);
      heartbeats.add(connection);
    });
  };
  server.on('upgrade', onUpgrade);
  return {
    get connections() {
      return connections.size;
    },
    closeAll(code, reason) {
      for (const connection of connections) connection.socket.close(code, reason);
    },
    async close() {
      server.off('upgrade', onUpgrade);
      for (const connection of connections) connection.socket.terminate();
      await new Promise<void>((resolve) => sockets.close(() => resolve()));
    },
  };
}

interface ConnectionSetup {
  router: { fetch: FetchHandler };
  path: string;
  initTimeoutMs: number;
  logger: Logger | undefined;
  onClose(connection: Connection): void;
}

/** An operation being answered (its request still in the router) or a subscription being written. */
type Operation = { readonly pending: AbortController } | { readonly subscription: ClientSubscription };

/**
 * One client's WebSocket: what is kept of its upgrade request (the headers passed on, its address,
 * not the request), its token, and its operations by id.
 */
class Connection {
  readonly socket: WebSocket;
  readonly #setup: ConnectionSetup;
  readonly #headers: [string, string][] = [];
  readonly #origin: string;
  readonly #remoteAddress: string | undefined;
  readonly #operations = new Map<string, Operation>();
  #token: string | undefined;
  #initialised = false;
  #acknowledged = false;
  #alive = true;
  #initTimer: NodeJS.Timeout | undefined;

  constructor(socket: WebSocket, request: IncomingMessage, setup: ConnectionSetup) {
    this.socket = socket;
    this.#setup = setup;
    for (const name of PASSED_HEADERS) {
      const value = request.headers[name];
      if (typeof value === 'string') this.#headers.push([name, value]);
    }
    this.#origin = `http://${request.headers.host ?? 'localhost'}`;
    this.#remoteAddress = request.socket.remoteAddress;
    socket.once('close', () => this.#closed());
    if (socket.protocol !== PROTOCOL) {
      socket.close(CLOSE.subprotocolNotAcceptable, 'Subprotocol not acceptable');
      return;
    }
    this.#initTimer = setTimeout(() => {
      if (!this.#acknowledged) socket.close(CLOSE.initTimeout, 'Connection initialisation timeout');
    }, setup.initTimeoutMs);
    socket.on('message', (data) => this.#receive(data));
    socket.on('pong', () => (this.#alive = true));
    socket.on('error', () => undefined); // a 'close' follows
  }

  /** The heartbeat: a client that did not answer the last ping is gone. */
  beat(): void {
    if (!this.#alive) {
      this.socket.terminate();
      return;
    }
    this.#alive = false;
    this.socket.ping();
  }

  send(text: string): boolean {
    if (this.socket.readyState !== WebSocket.OPEN) return false;
    this.socket.send(text);
    return true;
  }

  /** The operation `id` is over (its end was written): it leaves the table unless another took its id since. */
  done(id: string, operation: Operation): void {
    if (this.#operations.get(id) === operation) this.#operations.delete(id);
  }

  #receive(data: RawData): void {
    const message = parseMessage(rawText(data));
    if (typeof message === 'string') {
      this.socket.close(CLOSE.badRequest, closeReason(message));
      return;
    }
    switch (message.type) {
      case 'connection_init':
        if (this.#initialised) {
          this.socket.close(CLOSE.tooManyInits, 'Too many initialisation requests');
          return;
        }
        this.#initialised = true;
        this.#token = connectionToken(message.payload);
        this.#acknowledged = true;
        clearTimeout(this.#initTimer);
        this.#initTimer = undefined;
        this.send('{"type":"connection_ack"}');
        return;
      case 'ping':
        this.send(JSON.stringify(message.payload ? { type: 'pong', payload: message.payload } : { type: 'pong' }));
        return;
      case 'pong':
        return;
      case 'subscribe':
        if (!this.#acknowledged) {
          this.socket.close(CLOSE.unauthorized, 'Unauthorized');
          return;
        }
        if (this.#operations.has(message.id)) {
          this.socket.close(CLOSE.subscriberExists, closeReason(`Subscriber for ${message.id} already exists`));
          return;
        }
        void this.#subscribe(message.id, message.payload);
        return;
      case 'complete': {
        const operation = this.#operations.get(message.id);
        this.#operations.delete(message.id);
        if (operation) cancel(operation);
        return;
      }
    }
  }

  async #subscribe(id: string, payload: SubscribePayload): Promise<void> {
    const pending: Operation = { pending: new AbortController() };
    this.#operations.set(id, pending);
    const bridge: StreamBridge = { transport: 'ws' };
    // `req`: what the rate limit reads of a client (its address), without the upgrade request itself.
    const serverContext = { [STREAM_BRIDGE]: bridge, req: { socket: { remoteAddress: this.#remoteAddress } } };
    // The request's state, made now: the pipeline's context is a copy of this one and shares it, so a subscription comes back on it.
    const state = requestStateOf(serverContext);
    let response: Response;
    try {
      const headers = new Headers(this.#headers);
      headers.set('content-type', 'application/json');
      headers.set('accept', 'application/graphql-response+json, application/json');
      if (this.#token !== undefined) headers.set('authorization', this.#token);
      response = await this.#setup.router.fetch(
        new Request(`${this.#origin}${this.#setup.path}`, { method: 'POST', headers, body: JSON.stringify(payload), signal: pending.pending.signal }),
        serverContext,
      );
    } catch (error) {
      // Aborted because the client completed the operation or left: nobody to tell, nothing went wrong.
      if (this.#operations.get(id) !== pending) return;
      this.#setup.logger?.error({ err: error }, 'a WebSocket operation could not be answered');
      this.#writeErrors(id, pending, [{ message: MASKED_MESSAGE, extensions: { code: 'INTERNAL_SERVER_ERROR' } }]);
      return;
    }
    const subscription = state.subscription;
    // The client completed the operation, or left, while the router answered it.
    if (this.#operations.get(id) !== pending) {
      subscription?.cancel();
      return;
    }
    if (subscription) {
      const operation: Operation = { subscription };
      this.#operations.set(id, operation);
      subscription.attach(new WebSocketSink(this, id, operation));
      return;
    }
    const result = bridge.result;
    if (result !== undefined && (isAsyncIterable(result) || result.data !== undefined)) {
      await this.#writeAnswer(id, pending, result);
      return;
    }
    this.#writeErrors(id, pending, await refusalOf(result, response));
  }

  /** A query's or mutation's answer (one result, or the payloads of a stream): `next` each, then `complete`. */
  async #writeAnswer(id: string, operation: Operation, result: ExecutionResult | AsyncIterable<ExecutionResult>): Promise<void> {
    const prefix = nextPrefix(id);
    if (isAsyncIterable(result)) {
      for await (const payload of result) {
        if (this.#operations.get(id) !== operation) return;
        this.send(`${prefix}${jsonOf(payload)}}`);
      }
    } else {
      this.send(`${prefix}${jsonOf(result)}}`);
    }
    if (this.#operations.get(id) !== operation) return;
    this.#operations.delete(id);
    this.send(JSON.stringify({ id, type: 'complete' }));
  }

  #writeErrors(id: string, operation: Operation, errors: readonly GraphQLFormattedError[]): void {
    this.done(id, operation);
    this.send(JSON.stringify({ id, type: 'error', payload: errors }));
  }

  #closed(): void {
    clearTimeout(this.#initTimer);
    this.#setup.onClose(this);
    const operations = [...this.#operations.values()];
    this.#operations.clear();
    for (const operation of operations) cancel(operation);
  }
}

/** Ends an operation the client completed or left: the request being answered is aborted, the subscription ended. */
function cancel(operation: Operation): void {
  if ('pending' in operation) operation.pending.abort();
  else operation.subscription.cancel();
}

/** A `next` message of operation `id` up to its payload, which follows it, then `}`: the part made once per operation. */
function nextPrefix(id: string): string {
  return `{"id":${JSON.stringify(id)},"type":"next","payload":`;
}

/** A subscription's events as `next` messages (the `{"id":…,"type":"next","payload":` part made once), its end as `error` or `complete`. */
class WebSocketSink implements SubscriptionSink {
  readonly #connection: Connection;
  readonly #id: string;
  readonly #operation: Operation;
  readonly #prefix: string;

  constructor(connection: Connection, id: string, operation: Operation) {
    this.#connection = connection;
    this.#id = id;
    this.#operation = operation;
    this.#prefix = nextPrefix(id);
  }

  next(event: ExecutionResult): boolean {
    if (this.#connection.socket.bufferedAmount > MAX_BUFFERED_BYTES) return false;
    return this.#connection.send(`${this.#prefix}${jsonOf(event)}}`);
  }

  end(error: GraphQLError | undefined): void {
    this.#connection.done(this.#id, this.#operation);
    this.#connection.send(JSON.stringify(error ? { id: this.#id, type: 'error', payload: [formattedError(error)] } : { id: this.#id, type: 'complete' }));
  }
}

/** A refused subscribe (a result with errors only, or an HTTP refusal before execution) as the errors of an `error` message. */
async function refusalOf(result: ExecutionResult | AsyncIterable<ExecutionResult> | undefined, response: Response): Promise<GraphQLFormattedError[]> {
  if (result && !isAsyncIterable(result) && result.errors?.length) return result.errors.map((error) => formattedError(error));
  let body: { errors?: GraphQLFormattedError[] } | undefined;
  try {
    body = (await response.json()) as typeof body;
  } catch {
    body = undefined;
  }
  const errors = body?.errors?.map((error) => formattedError(new GraphQLError(error.message, { extensions: error.extensions })));
  return errors?.length ? errors : [{ message: `The subscription was refused (HTTP ${response.status}).`, extensions: { code: 'INTERNAL_SERVER_ERROR' } }];
}
