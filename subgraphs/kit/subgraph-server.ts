// The HTTP front of a demo subgraph: /graphql (and its WebSocket upgrade) through the fault switch, /admin/*, /healthz.
import { createServer, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { AdminHandler } from './admin-api.js';
import type { FaultSettings, FaultSwitch } from './fault-switch.js';
import { sendJson, sendText } from './http-replies.js';
import { recordTraceparent, type SubgraphStats } from './subgraph-stats.js';
import type { Authenticate, RunningSubgraph } from './types.js';
import type { WebSocketEndpoint } from './websocket-transport.js';

export interface SubgraphServerParts {
  name: string;
  faults: FaultSwitch;
  stats: SubgraphStats;
  /** Executes a `/graphql` request and writes the answer (yoga's node request listener). */
  executeGraphql: (req: IncomingMessage, res: ServerResponse) => void;
  /** Answers `/admin/*` (the kit's routes plus the subgraph's own, see `createAdminApi`). */
  handleAdmin: AdminHandler;
  /**
   * The authentication hook for the request at hand, or `undefined` for none. Read per request, so a
   * change (`requireTokens()`) applies to the next request at once; one already past this step keeps its result.
   */
  authenticator?: () => Authenticate | undefined;
  /**
   * For a subgraph with a `Subscription` type: opens this server's GraphQL over WebSocket endpoint, served on the
   * same port at `/graphql`. Default none: upgrades are answered 404.
   */
  openWebSocket?: () => WebSocketEndpoint;
  /**
   * The hook run on a WebSocket upgrade request, or `undefined` for none (the router token is checked later, at
   * `connection_init`, by the WebSocket endpoint). Read per upgrade, like `authenticator`.
   */
  upgradeAuthenticator?: () => Authenticate | undefined;
}

/**
 * Whether the request asked for an SSE stream (GraphQL over SSE, distinct connections mode: the client sends
 * `Accept: text/event-stream`), i.e. it is a subscription rather than a request. Read from the request because
 * yoga writes its response headers in one `writeHead`, which `getHeader` does not see.
 */
function isEventStream(req: IncomingMessage): boolean {
  return req.headers.accept?.includes('text/event-stream') ?? false;
}

/**
 * Starts one HTTP server for a subgraph. A `/graphql` request goes through these steps:
 * 1. read the fault settings once, so a change mid-request cannot mix two configurations;
 * 2. `down`: destroy the socket, no answer at all; `hang`: never answer;
 * 3. wait `latencyMs + random(0..jitterMs)` (plus `slowMs` for a `slowRate` draw) on a timer that the client's disconnect clears;
 * 4. `error` mode, or a draw under `errorRate`: answer `errorStatus` (200 with an `INJECTED_FAULT` GraphQL error, or a bare 5xx);
 * 5. authenticate, when a hook is configured (the one place for it); a refusal is counted in `unauthorized`;
 * 6. hand the request to yoga.
 * One `close` listener per request keeps `inFlight` and `aborted` right whatever the ending. A subscription
 * POSTed with `Accept: text/event-stream` takes the same steps and then streams; its client ending the stream
 * once it has started is an unsubscribe, not an abort.
 *
 * A WebSocket upgrade of `/graphql` (when `openWebSocket` is given): `down` destroys the socket, `hang` never
 * answers; latency and injected errors do not apply to streams. Then `upgradeAuthenticator`'s hook, then the
 * endpoint. When the mode turns `down`, open WebSocket connections and SSE streams are cut at once.
 */
export function startSubgraphServer(parts: SubgraphServerParts, port: number, host: string): Promise<RunningSubgraph> {
  const { name, faults, stats, executeGraphql, handleAdmin, authenticator, upgradeAuthenticator } = parts;
  const injectedFault = Buffer.from(
    JSON.stringify({ data: null, errors: [{ message: `${name} subgraph failed (injected fault)`, extensions: { code: 'INJECTED_FAULT' } }] }),
  );
  // Latency timers still waiting, so close() can clear them even before their sockets report closing.
  const timers = new Set<NodeJS.Timeout>();
  // In-flight SSE streams and how to drop each (destroy its socket without counting an abort).
  const streams = new Map<IncomingMessage, () => void>();
  // Upgrades held by `hang` (the HTTP server no longer tracks an upgrade's socket).
  const heldUpgrades = new Set<Duplex>();
  const webSocket = parts.openWebSocket?.();
  let removeFaultListener: (() => void) | undefined;
  let closing = false;

  const server = createServer(function handleSubgraphRequest(req, res) {
    stats.requests += 1;
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    if (path === '/graphql') return handleGraphql(req, res);
    // Control-plane answers end their connection: they are rare, and a client polling one across a restart
    // (close(), then listen() on the same port) must not reuse a pooled socket the old server has just closed.
    res.setHeader('connection', 'close');
    if (path.startsWith('/admin/')) return handleAdmin(req, res, path);
    req.resume();
    if (path === '/healthz') return sendText(res, 200, 'ok');
    sendJson(res, 404, { error: `no route ${path}` });
  });

  function handleGraphql(req: IncomingMessage, res: ServerResponse): void {
    stats.graphqlRequests += 1;
    stats.inFlight += 1;
    recordTraceparent(stats, req.headers.traceparent);
    const settings = faults.get();
    let timer: NodeJS.Timeout | undefined;
    let dropped = false;
    const drop = (): void => {
      dropped = true;
      req.socket.destroy();
    };
    if (isEventStream(req)) streams.set(req, drop);
    res.once('close', function settleGraphqlRequest() {
      stats.inFlight -= 1;
      streams.delete(req);
      if (timer !== undefined) {
        clearTimeout(timer);
        timers.delete(timer);
      }
      // Unfinished and not dropped by us: the client gave up (this is how hanging calls get counted). A stream that had
      // started is different: its client ending it is how an SSE subscription unsubscribes.
      const unsubscribed = isEventStream(req) && res.headersSent;
      if (!res.writableFinished && !dropped && !closing && !unsubscribed) stats.aborted += 1;
    });

    if (settings.mode === 'down') return drop();
    if (settings.mode === 'hang') {
      // Drain the body so the socket keeps reading and notices when the client closes it.
      req.resume();
      return;
    }
    const fail = settings.mode === 'error' || (settings.errorRate > 0 && Math.random() < settings.errorRate);
    const slow = settings.slowRate > 0 && Math.random() < settings.slowRate;
    const delayMs = settings.latencyMs + (settings.jitterMs > 0 ? Math.random() * settings.jitterMs : 0) + (slow ? settings.slowMs : 0);
    if (delayMs <= 0) return answer(req, res, fail, settings.errorStatus);
    const pending = setTimeout(function afterInjectedLatency() {
      timers.delete(pending);
      timer = undefined;
      answer(req, res, fail, settings.errorStatus);
    }, delayMs);
    timer = pending;
    timers.add(pending);
  }

  function answer(req: IncomingMessage, res: ServerResponse, fail: boolean, errorStatus: number): void {
    if (fail && errorStatus !== 200) {
      req.resume();
      return sendText(res, errorStatus, `${name} subgraph: injected HTTP ${errorStatus}`);
    }
    if (fail) {
      req.resume();
      // GraphQL over HTTP: a response with `data: null` is still a 2xx under either media type.
      const type = req.headers.accept?.includes('application/graphql-response+json')
        ? 'application/graphql-response+json; charset=utf-8'
        : 'application/json; charset=utf-8';
      res.writeHead(200, { 'content-type': type, 'content-length': injectedFault.length });
      res.end(injectedFault);
      return;
    }
    const authenticate = authenticator?.();
    if (authenticate === undefined) return executeGraphql(req, res);
    authenticate(req).then(
      function afterAuthenticate(result) {
        if (result === true) return executeGraphql(req, res);
        stats.unauthorized += 1;
        const refusal = result === false ? { status: 401, message: `${name} subgraph: authentication required` } : result;
        const code = refusal.code ?? (refusal.status === 403 ? 'FORBIDDEN' : 'UNAUTHENTICATED');
        req.resume();
        sendJson(res, refusal.status, { errors: [{ message: refusal.message, extensions: { code } }] }, refusal.headers);
      },
      function onAuthenticateFailure() {
        stats.unauthorized += 1;
        req.resume();
        sendJson(res, 500, { errors: [{ message: `${name} subgraph: authentication failed`, extensions: { code: 'INTERNAL_SERVER_ERROR' } }] });
      },
    );
  }

  server.on('upgrade', function handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer) {
    stats.requests += 1;
    // A reset while we hold or refuse the socket must not crash the process; ws adds its own handler once it takes over.
    socket.on('error', ignoreSocketError);
    const path = (req.url ?? '/').split('?')[0];
    if (webSocket === undefined || path !== '/graphql' || closing) return refuseUpgrade(socket, 404, { error: `no WebSocket route ${path}` });
    const settings = faults.get();
    if (settings.mode === 'down') return void socket.destroy();
    if (settings.mode === 'hang') {
      heldUpgrades.add(socket);
      socket.once('close', () => heldUpgrades.delete(socket));
      return;
    }
    const authenticate = upgradeAuthenticator?.();
    if (authenticate === undefined) return webSocket.accept(req, socket, head);
    authenticate(req).then(
      function afterUpgradeAuthenticate(result) {
        if (closing) return void socket.destroy();
        if (result === true) return webSocket.accept(req, socket, head);
        stats.unauthorized += 1;
        const refusal = result === false ? { status: 401, message: `${name} subgraph: authentication required` } : result;
        const code = refusal.code ?? (refusal.status === 403 ? 'FORBIDDEN' : 'UNAUTHENTICATED');
        refuseUpgrade(socket, refusal.status, { errors: [{ message: refusal.message, extensions: { code } }] }, refusal.headers);
      },
      function onUpgradeAuthenticateFailure() {
        stats.unauthorized += 1;
        refuseUpgrade(socket, 500, { errors: [{ message: `${name} subgraph: authentication failed`, extensions: { code: 'INTERNAL_SERVER_ERROR' } }] });
      },
    );
  });

  /** `down` cuts what would otherwise outlive the "crash": WebSocket connections and SSE streams. Other modes leave them alone. */
  function cutStreams(settings: FaultSettings): void {
    if (settings.mode !== 'down') return;
    webSocket?.terminateAll();
    for (const drop of [...streams.values()]) drop();
  }

  let closed: Promise<void> | undefined;
  function close(): Promise<void> {
    closed ??= new Promise<void>((resolve, reject) => {
      closing = true;
      removeFaultListener?.();
      for (const pending of timers) clearTimeout(pending);
      timers.clear();
      for (const socket of heldUpgrades) socket.destroy();
      heldUpgrades.clear();
      const webSocketClosed = webSocket?.close() ?? Promise.resolve();
      server.close((error) => (error ? reject(error) : webSocketClosed.then(() => resolve())));
      // Hanging requests, SSE streams and idle keep-alive sockets would otherwise hold close() open forever.
      server.closeAllConnections();
    });
    return closed;
  }

  return new Promise<RunningSubgraph>((resolve, reject) => {
    const onListenError = (error: Error): void => {
      // Nothing was served; the WebSocket side must not outlive the failed start.
      void webSocket?.close();
      reject(error);
    };
    server.once('error', onListenError);
    server.listen(port, host, () => {
      server.off('error', onListenError);
      removeFaultListener = faults.onChange(cutStreams);
      const actualPort = (server.address() as AddressInfo).port;
      resolve({ name, url: `http://${urlHost(host)}:${actualPort}/graphql`, port: actualPort, close });
    });
  });
}

function ignoreSocketError(): void {}

/** Answers an upgrade request with a plain HTTP response and ends the socket (the connection is not upgraded). */
function refuseUpgrade(socket: Duplex, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (!socket.writable) return void socket.destroy();
  const payload = JSON.stringify(body);
  const lines = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`,
    'connection: close',
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(payload)}`,
    ...Object.entries(headers).map(([key, value]) => `${key}: ${value}`),
  ];
  socket.end(`${lines.join('\r\n')}\r\n\r\n${payload}`);
  socket.once('finish', () => socket.destroy());
}

/** A host usable in a URL: wildcard binds are reached through loopback, IPv6 literals need brackets. */
function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}
