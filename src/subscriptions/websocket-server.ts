// GraphQL over WebSocket (`graphql-transport-ws`, library graphql-ws) on `/graphql`: every subscribe message goes through the router's whole HTTP pipeline.
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { GraphQLError, GraphQLSchema, GraphQLObjectType, GraphQLString, parse, type ExecutionArgs, type ExecutionResult } from 'graphql';
import { WebSocketServer, type WebSocket } from 'ws';
import { useServer } from 'graphql-ws/use/ws';
import { isAsyncIterable } from 'graphql-yoga';
import { WEBSOCKET_BRIDGE, type WebSocketBridge } from './websocket-bridge.js';
import { endOf } from './open-subscriptions.js';
import type { Logger } from '../telemetry/logger.js';

/** The router's fetch handler (yoga's `fetch`): the WebSocket transport sends it each subscribe message as a request. */
export type FetchHandler = (request: Request, serverContext: Record<string | symbol, unknown>) => Promise<Response> | Response;

export interface WebSocketServerOptions {
  /** The endpoint clients open WebSockets on. Default `/graphql`. */
  path?: string;
  /** Ping interval, in ms: a client that has not answered a ping by the next one is closed. */
  heartbeatMs: number;
  /** Largest message accepted, in bytes (the router's body limit). */
  maxPayloadBytes: number;
  logger?: Logger;
}

export interface RunningWebSockets {
  /** WebSocket connections open now. */
  readonly connections: number;
  /** Closes every connection with `code` (1012: the service restarts; clients reconnect elsewhere). */
  closeAll(code: number, reason: string): void;
  close(): Promise<void>;
}

/** Headers of the upgrade request passed on to each subscribe request (who the client is; never hop-by-hop ones). */
const PASSED_HEADERS = ['authorization', 'cookie', 'user-agent', 'x-client-name', 'graphql-client-name', 'graphql-client-version', 'apollographql-client-name', 'apollographql-client-version', 'x-request-id', 'traceparent', 'tracestate', 'x-forwarded-for'];

/** graphql-ws needs execution arguments: the stream is already made, so a fixed document and schema stand in. */
const STAND_IN_SCHEMA = new GraphQLSchema({
  query: new GraphQLObjectType({ name: 'Query', fields: { _: { type: GraphQLString } } }),
  subscription: new GraphQLObjectType({ name: 'Subscription', fields: { _: { type: GraphQLString } } }),
});
const STAND_IN_DOCUMENT = parse('subscription { _ }');

interface BridgeContext {
  result: ExecutionResult | AsyncIterable<ExecutionResult>;
}

/**
 * Serves GraphQL over WebSocket beside HTTP on the same server and port.
 * 1. The upgrade is accepted on `path` only; graphql-ws runs the protocol (connection_init, ack,
 *    subscribe, next, error, complete, ping/pong), pings every `heartbeatMs` and closes a client that
 *    does not answer.
 * 2. Each subscribe message becomes a POST to the router itself (`router.fetch`), with the upgrade
 *    request's identifying headers and the token the browser put in `connection_init`
 *    (`{ "authorization": "Bearer …" }` or `{ "Authorization": … }`). So trusted documents, hardening,
 *    authentication, authorization, cost, limits, audit and tracing hold for WebSocket clients
 *    exactly as for HTTP ones, with no second implementation. The result comes back unserialised
 *    (use-subscriptions.ts): a stream of events, or a refusal, sent as a graphql-ws `error` message.
 * 3. A subscription that ends with an error (TOKEN_EXPIRED, FORBIDDEN, SUBGRAPH_UNAVAILABLE...) gets
 *    a graphql-ws `error` message, never a `complete`. Its end aborts the request it was opened by.
 */
export function serveWebSockets(server: Server, router: { fetch: FetchHandler }, options: WebSocketServerOptions): RunningWebSockets {
  const path = options.path ?? '/graphql';
  const sockets = new WebSocketServer({ noServer: true, maxPayload: options.maxPayloadBytes });
  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = request.url ?? '/';
    const pathname = url.includes('?') ? url.slice(0, url.indexOf('?')) : url;
    if (pathname !== path) {
      socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    sockets.handleUpgrade(request, socket, head, (ws) => sockets.emit('connection', ws, request));
  };
  server.on('upgrade', onUpgrade);
  /** Each operation's abort, by socket and id: a client's `complete` or its leaving ends the request it opened. */
  const aborts = new WeakMap<object, Map<string, AbortController>>();
  const disposer = useServer<Record<string, unknown> | undefined, { socket: WebSocket; request: IncomingMessage }>(
    {
      async onSubscribe(ctx, id, payload) {
        const controller = new AbortController();
        let byId = aborts.get(ctx);
        if (!byId) aborts.set(ctx, (byId = new Map()));
        byId.set(id, controller);
        const headers = new Headers({ 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json' });
        for (const name of PASSED_HEADERS) {
          const value = ctx.extra.request.headers[name];
          if (typeof value === 'string') headers.set(name, value);
        }
        const token = connectionToken(ctx.connectionParams);
        if (token !== undefined) headers.set('authorization', token);
        const host = ctx.extra.request.headers.host ?? 'localhost';
        const bridge: WebSocketBridge = {};
        const response = await router.fetch(
          new Request(`http://${host}${path}`, { method: 'POST', headers, body: JSON.stringify(payload), signal: controller.signal }),
          { [WEBSOCKET_BRIDGE]: bridge, req: ctx.extra.request },
        );
        if (bridge.result !== undefined && (isAsyncIterable(bridge.result) || bridge.result.data !== undefined)) {
          return { schema: STAND_IN_SCHEMA, document: STAND_IN_DOCUMENT, contextValue: { result: bridge.result } satisfies BridgeContext } as ExecutionArgs;
        }
        byId.delete(id);
        return refusalOf(bridge.result, response);
      },
      subscribe: (args) => streamOf((args.contextValue as BridgeContext).result),
      execute: (args) => streamOf((args.contextValue as BridgeContext).result),
      onComplete(ctx, id) {
        aborts.get(ctx)?.get(id)?.abort();
        aborts.get(ctx)?.delete(id);
      },
      onClose(ctx) {
        for (const controller of aborts.get(ctx)?.values() ?? []) controller.abort();
        aborts.delete(ctx);
      },
    },
    sockets,
    options.heartbeatMs,
  );
  return {
    get connections() {
      return sockets.clients.size;
    },
    closeAll(code, reason) {
      for (const client of sockets.clients) client.close(code, reason);
    },
    async close() {
      server.off('upgrade', onUpgrade);
      for (const client of sockets.clients) client.terminate();
      await disposer.dispose();
    },
  };
}

/** The bearer token a client put in `connection_init` (browsers cannot set headers on a WebSocket). */
function connectionToken(params: Record<string, unknown> | undefined): string | undefined {
  if (!params) return undefined;
  for (const key of ['authorization', 'Authorization']) {
    const value = params[key];
    if (typeof value === 'string' && value.length > 0) return value;
  }
  const headers = params.headers as Record<string, unknown> | undefined;
  return typeof headers?.authorization === 'string' ? headers.authorization : typeof headers?.Authorization === 'string' ? headers.Authorization : undefined;
}

/** An operation's result as graphql-ws sends it: an error that ends a stream is thrown, so the client gets an `error` message. */
function streamOf(result: ExecutionResult | AsyncIterable<ExecutionResult>): ExecutionResult | AsyncIterable<ExecutionResult> {
  if (!isAsyncIterable(result)) return result;
  const source = result[Symbol.asyncIterator]();
  // An iterator, not only an iterable: graphql-ws calls `return()` on what it was given when the client leaves.
  const stream: AsyncIterableIterator<ExecutionResult> = {
    async next() {
      const next = await source.next();
      const ended = next.done ? undefined : endOf(next.value);
      if (ended) {
        await source.return?.();
        throw ended.error;
      }
      return next;
    },
    async return() {
      return (await source.return?.()) ?? { done: true, value: undefined };
    },
    [Symbol.asyncIterator]() {
      return stream;
    },
  };
  return stream;
}

/** A refused subscribe (a result with errors only, or an HTTP refusal before execution) as graphql-ws errors. */
async function refusalOf(result: ExecutionResult | AsyncIterable<ExecutionResult> | undefined, response: Response): Promise<GraphQLError[]> {
  if (result && !isAsyncIterable(result) && result.errors?.length) return result.errors.map((error) => toGraphQLError(error));
  let body: { errors?: { message: string; extensions?: Record<string, unknown> }[] } | undefined;
  try {
    body = (await response.json()) as typeof body;
  } catch {
    body = undefined;
  }
  const errors = body?.errors?.map((error) => new GraphQLError(error.message, { extensions: error.extensions }));
  return errors?.length ? errors : [new GraphQLError(`The subscription was refused (HTTP ${response.status}).`, { extensions: { code: 'INTERNAL_SERVER_ERROR' } })];
}

function toGraphQLError(error: { message: string; extensions?: Record<string, unknown> }): GraphQLError {
  if (error instanceof GraphQLError) {
    if (!error.extensions || !('http' in error.extensions)) return error;
    const { http: _http, ...extensions } = error.extensions;
    return new GraphQLError(error.message, { extensions });
  }
  return new GraphQLError(error.message, { extensions: error.extensions });
}
