// GraphQL over WebSocket (graphql-transport-ws) for a demo subgraph: yoga's envelop, the router-token check at connection_init, token expiry, heartbeat, counters.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ExecutionArgs } from 'graphql';
import { GraphQLError } from 'graphql';
import type { Context, ServerOptions } from 'graphql-ws';
import { useServer, type Extra } from 'graphql-ws/use/ws';
import type { YogaServerInstance } from 'graphql-yoga';
import { WebSocketServer, type WebSocket } from 'ws';
import type { SubgraphStats } from './subgraph-stats.js';
import type { TokenGate } from './token-gate.js';
import type { SubgraphCaller } from './types.js';

/** Ping interval of WebSocket clients, in ms, when the subgraph options name none. */
export const DEFAULT_WEBSOCKET_KEEP_ALIVE_MS = 12_000;

/**
 * Close codes this transport uses on top of graphql-transport-ws's own (4400 bad message, 4408 no
 * connection_init in time, 4409 duplicate subscription id, ...). 4xxx mirror the HTTP status they stand for.
 */
export const WEBSOCKET_CLOSE = Object.freeze({
  /** No usable router token at `connection_init` (missing, forged, wrong audience, expired, ...). */
  TOKEN_REFUSED: 4403,
  /** The connection's token reached its `exp`: the router should have opened a new connection before. */
  TOKEN_EXPIRED: 4401,
  /** RFC 6455 §7.4.1 "Try Again Later": the router's keys could not be fetched to check the token (HTTP says 503). */
  KEYS_UNAVAILABLE: 1013,
});

/** What the transport needs from its subgraph; built once per subgraph, shared by every server `listen()` starts. */
export interface WebSocketTransportParts {
  name: string;
  stats: SubgraphStats;
  /** The subgraph's yoga: operations run through its envelop (context, plugins, error masking), as HTTP requests do. */
  yoga: Pick<YogaServerInstance<any, any>, 'getEnveloped'>;
  /** The token gate in force, read at each `connection_init`; `undefined` when tokens are not required. */
  tokenGate: () => TokenGate | undefined;
  /** Remembers who a verified connection is for, keyed by its upgrade request (the context reads `caller` from there, as for HTTP). */
  onCaller: (req: IncomingMessage, caller: SubgraphCaller) => void;
  /** Ping interval, in ms; a client that does not pong within the same time is terminated. Default 12 000; 0 turns pings off. */
  keepAliveMs?: number;
}

/** The WebSocket side of one running server. */
export interface WebSocketEndpoint {
  /** Completes an upgrade the HTTP server already let through (path, fault switch, authenticate hook). */
  accept(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Terminates every connection at once, without a close handshake, like a crashed service (fault mode `down`). */
  terminateAll(): void;
  /** Terminates every connection and stops the heartbeat. Idempotent. */
  close(): Promise<void>;
}

/** One enveloped execution per operation, keyed by its context object (created per operation). */
type Enveloped = ReturnType<YogaServerInstance<any, any>['getEnveloped']>;

/** graphql-ws's hooks that run an operation through a yoga's envelop. */
export interface EnvelopedOperations {
  /** Parses and validates a subscribe message's operation (its errors are the answer) and makes its context. */
  prepare(request: IncomingMessage, socket: WebSocket, payload: { query: string; operationName?: string | null; variables?: Record<string, unknown> | null }): Promise<ExecutionArgs | GraphQLError[]>;
  execute: NonNullable<ServerOptions['execute']>;
  subscribe: NonNullable<ServerOptions['subscribe']>;
}

/**
 * Runs graphql-ws operations through `yoga`'s envelop (its parse, validate, context, plugins and
 * error masking, as over HTTP); the upgrade request stands in for yoga's `req`. Shared by the demo
 * subgraphs and the tests' fixture subgraphs.
 */
export function envelopedOperations(yoga: Pick<YogaServerInstance<any, any>, 'getEnveloped'>): EnvelopedOperations {
  const enveloped = new WeakMap<object, Enveloped>();
  return {
    async prepare(request, socket, payload) {
      const envelope = yoga.getEnveloped({ req: request, socket, params: payload });
      let document;
      try {
        document = envelope.parse(payload.query);
      } catch (error) {
        if (error instanceof GraphQLError) return [error];
        throw error;
      }
      const errors = envelope.validate(envelope.schema, document);
      if (errors.length > 0) return [...errors];
      const contextValue = await envelope.contextFactory();
      enveloped.set(contextValue, envelope);
      return { schema: envelope.schema, document, operationName: payload.operationName, variableValues: payload.variables, contextValue };
    },
    execute: (args) => enveloped.get(args.contextValue as object)!.execute(args),
    subscribe: (args) => enveloped.get(args.contextValue as object)!.subscribe(args),
  };
}

/**
 * Returns the factory of one `WebSocketEndpoint` per server. A connection goes through these steps:
 * 1. the HTTP server has checked path and fault switch; `ws` completes the upgrade (subprotocol `graphql-transport-ws`);
 * 2. `connection_init`: with tokens required, the token is the payload's `authorization` (`Bearer <jwt>`), else the
 *    upgrade request's `Authorization` header; the same verifier as HTTP checks it. A refusal closes 4403 with the reason
 *    (1013 when the router's keys could not be fetched); a pass remembers the caller and arms a timer that closes
 *    the connection 4401 `token expired` at the token's `exp`;
 * 3. each `subscribe` message is parsed, validated and run through yoga's envelop, so the subscription counter
 *    and the per-request context work as over HTTP;
 * 4. every `keepAliveMs` the server pings; a client without a pong by the next interval is terminated (graphql-ws's heartbeat).
 */
export function createWebSocketTransport(parts: WebSocketTransportParts): () => WebSocketEndpoint {
  const { name, stats, yoga, tokenGate, onCaller } = parts;
  const keepAliveMs = parts.keepAliveMs ?? DEFAULT_WEBSOCKET_KEEP_ALIVE_MS;
  const operations = envelopedOperations(yoga);
  // The expiry timer of each verified connection, cleared when the socket closes.
  const expiries = new WeakMap<WebSocket, NodeJS.Timeout>();

  async function checkConnectionToken(ctx: Context<Record<string, unknown> | undefined, Extra>): Promise<boolean> {
    const gate = tokenGate();
    if (gate === undefined) return true;
    const { socket, request } = ctx.extra;
    const check = await gate.verifyConnection(authorizationOf(ctx.connectionParams) ?? request.headers.authorization);
    if (!check.ok) {
      stats.unauthorized += 1;
      socket.close(check.status === 503 ? WEBSOCKET_CLOSE.KEYS_UNAVAILABLE : WEBSOCKET_CLOSE.TOKEN_REFUSED, closeReason(check.message));
      return false;
    }
    onCaller(request, check.caller);
    // Closed while the token was being checked: nothing to arm.
    if (socket.readyState === socket.OPEN) closeAtExpiry(socket, check.expiresAt.getTime());
    return true;
  }

  function closeAtExpiry(socket: WebSocket, expiresAtMs: number): void {
    const remaining = expiresAtMs - Date.now();
    if (remaining <= 0) return void socket.close(WEBSOCKET_CLOSE.TOKEN_EXPIRED, 'token expired');
    // setTimeout fires at once beyond 2^31-1 ms, so a far expiry is reached in steps.
    const timer = setTimeout(() => closeAtExpiry(socket, expiresAtMs), Math.min(remaining, 2 ** 31 - 1));
    expiries.set(socket, timer);
  }

  const serverOptions: ServerOptions<Record<string, unknown> | undefined, Extra> = {
    onConnect: checkConnectionToken,
    // The upgrade request stands in for yoga's `req`: the context reads the connection's caller from it.
    onSubscribe: (ctx, _id, payload) => operations.prepare(ctx.extra.request, ctx.extra.socket, payload),
    execute: operations.execute,
    subscribe: operations.subscribe,
  };

  return function openWebSocketEndpoint(): WebSocketEndpoint {
    const server = new WebSocketServer({ noServer: true });
    server.on('connection', function countConnection(socket) {
      stats.subscriptions.connections += 1;
      socket.once('close', function releaseConnection() {
        stats.subscriptions.connections -= 1;
        clearTimeout(expiries.get(socket));
      });
    });
    // After the counter above, so a connection is counted before graphql-ws handles its first message.
    const disposable = useServer({ ...serverOptions, isProd: true }, server, keepAliveMs);
    let closed: Promise<void> | undefined;

    function terminateAll(): void {
      for (const socket of server.clients) socket.terminate();
    }

    return {
      accept: function acceptUpgrade(req, socket, head) {
        server.handleUpgrade(req, socket, head, (ws) => server.emit('connection', ws, req));
      },
      terminateAll,
      close: function closeWebSocketEndpoint() {
        closed ??= (async () => {
          terminateAll();
          await disposable.dispose();
        })().catch((error: unknown) => {
          console.error(`${name} subgraph: error while closing WebSockets: ${String(error)}`);
        });
        return closed;
      },
    };
  };
}

/** The `authorization` entry of a `connection_init` payload, whatever its case; undefined when absent or not a string. */
function authorizationOf(params: Record<string, unknown> | undefined): string | undefined {
  if (params === undefined || params === null || typeof params !== 'object') return undefined;
  for (const [key, value] of Object.entries(params)) if (key.toLowerCase() === 'authorization' && typeof value === 'string') return value;
  return undefined;
}

/** RFC 6455 §5.5: a close frame's body is at most 125 bytes, 2 of them the code. */
function closeReason(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  return bytes.length <= 123 ? text : bytes.subarray(0, 120).toString('utf8').replace(/\uFFFD$/, '') + '...';
}
