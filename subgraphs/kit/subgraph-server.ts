// The HTTP front of a demo subgraph: /graphql through the fault switch, /admin/*, /healthz.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AdminHandler } from './admin-api.js';
import type { FaultSwitch } from './fault-switch.js';
import { sendJson, sendText } from './http-replies.js';
import { recordTraceparent, type SubgraphStats } from './subgraph-stats.js';
import type { Authenticate, RunningSubgraph } from './types.js';

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
}

/**
 * Starts one HTTP server for a subgraph. A `/graphql` request goes through these steps:
 * 1. read the fault settings once, so a change mid-request cannot mix two configurations;
 * 2. `down`: destroy the socket, no answer at all; `hang`: never answer;
 * 3. wait `latencyMs + random(0..jitterMs)` (plus `slowMs` for a `slowRate` draw) on a timer that the client's disconnect clears;
 * 4. `error` mode, or a draw under `errorRate`: answer `errorStatus` (200 with an `INJECTED_FAULT` GraphQL error, or a bare 5xx);
 * 5. authenticate, when a hook is configured (the one place for it); a refusal is counted in `unauthorized`;
 * 6. hand the request to yoga.
 * One `close` listener per request keeps `inFlight` and `aborted` right whatever the ending.
 */
export function startSubgraphServer(parts: SubgraphServerParts, port: number, host: string): Promise<RunningSubgraph> {
  const { name, faults, stats, executeGraphql, handleAdmin, authenticator } = parts;
  const injectedFault = Buffer.from(
    JSON.stringify({ data: null, errors: [{ message: `${name} subgraph failed (injected fault)`, extensions: { code: 'INJECTED_FAULT' } }] }),
  );
  // Latency timers still waiting, so close() can clear them even before their sockets report closing.
  const timers = new Set<NodeJS.Timeout>();
  let closing = false;

  const server = createServer(function handleSubgraphRequest(req, res) {
    stats.requests += 1;
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    if (path === '/graphql') return handleGraphql(req, res);
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
    res.once('close', function settleGraphqlRequest() {
      stats.inFlight -= 1;
      if (timer !== undefined) {
        clearTimeout(timer);
        timers.delete(timer);
      }
      // Unfinished and not dropped by us: the client gave up (this is how hanging calls get counted).
      if (!res.writableFinished && !dropped && !closing) stats.aborted += 1;
    });

    if (settings.mode === 'down') {
      dropped = true;
      req.socket.destroy();
      return;
    }
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

  let closed: Promise<void> | undefined;
  function close(): Promise<void> {
    closed ??= new Promise<void>((resolve, reject) => {
      closing = true;
      for (const pending of timers) clearTimeout(pending);
      timers.clear();
      server.close((error) => (error ? reject(error) : resolve()));
      // Hanging requests and idle keep-alive sockets would otherwise hold close() open forever.
      server.closeAllConnections();
    });
    return closed;
  }

  return new Promise<RunningSubgraph>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const actualPort = (server.address() as AddressInfo).port;
      resolve({ name, url: `http://${urlHost(host)}:${actualPort}/graphql`, port: actualPort, close });
    });
  });
}

/** A host usable in a URL: wildcard binds are reached through loopback, IPv6 literals need brackets. */
function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}
