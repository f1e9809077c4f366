// Small Federation subgraphs for tests, from an SDL and resolvers, served on an ephemeral port (subscriptions over WebSocket and SSE too).
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parse } from 'graphql';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { useServer } from 'graphql-ws/use/ws';
import { createYoga } from 'graphql-yoga';
import { envelopedOperations } from '../../subgraphs/kit/index.js';
import { WebSocketServer } from 'ws';

export interface FixtureOptions {
  sdl: string;
  /** A `Subscription` field takes `{ subscribe, resolve }`; `createEventSource()` (fixture-events.ts) makes the stream. */
  resolvers?: Record<string, any>;
}

/** One operation a fixture received. */
export interface FixtureRequest {
  query: string;
  variables?: Record<string, unknown>;
  /** HTTP: the request's headers. WebSocket: the upgrade request's headers (lower-case names, repeated ones joined by `, `). */
  headers: Record<string, string>;
  /** `http` for queries, mutations and SSE subscriptions (a POST with `Accept: text/event-stream`); `websocket` for graphql-transport-ws. */
  transport: 'http' | 'websocket';
  /** WebSocket only: the `connection_init` payload of the connection the operation came on (where the router puts its token). */
  connectionParams?: Record<string, unknown>;
}

export interface RunningFixture {
  url: string;
  sdl: string;
  /** GraphQL operations received so far over either transport, with their query text and headers. */
  requests: FixtureRequest[];
  /** Stops accepting and ends every connection, WebSockets and SSE streams included. */
  close(): Promise<void>;
}

/**
 * Serves the fixture at `http://127.0.0.1:<port>/graphql`. When its SDL has a `Subscription` type, the same
 * port and path also speak GraphQL over WebSocket (graphql-transport-ws, through yoga's envelop like HTTP);
 * GraphQL over SSE (distinct connections) is yoga's own. No token check: fixtures trust their caller.
 */
export async function startFixtureSubgraph(options: FixtureOptions): Promise<RunningFixture> {
  const schema = buildSubgraphSchema({ typeDefs: parse(options.sdl), resolvers: options.resolvers as any });
  const requests: FixtureRequest[] = [];
  const yoga = createYoga({
    schema,
    logging: false,
    maskedErrors: false,
    plugins: [
      {
        onParams({ params, request }) {
          requests.push({ query: params.query ?? '', variables: params.variables, headers: Object.fromEntries(request.headers), transport: 'http' });
        },
      },
    ],
  });
  const server = createServer(yoga);
  const webSockets = schema.getSubscriptionType() ? serveWebSockets(server, yoga, requests) : undefined;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  let closed: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    sdl: options.sdl,
    requests,
    close: () =>
      (closed ??= (async () => {
        await webSockets?.close();
        await new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        });
      })()),
  };
}

type Yoga = ReturnType<typeof createYoga>;

/** graphql-ws on `server` at `/graphql`: each subscribe is recorded, then parsed, validated and run through yoga's envelop. */
function serveWebSockets(server: ReturnType<typeof createServer>, yoga: Yoga, requests: FixtureRequest[]): { close(): Promise<void> } {
  const webSocketServer = new WebSocketServer({ server, path: '/graphql' });
  const operations = envelopedOperations(yoga);
  const disposable = useServer<Record<string, unknown> | undefined>(
    {
      onSubscribe: async function envelopFixtureOperation(ctx, _id, payload) {
        requests.push({
          query: payload.query,
          variables: payload.variables ?? undefined,
          headers: headersOf(ctx.extra.request),
          transport: 'websocket',
          connectionParams: ctx.connectionParams ?? undefined,
        });
        return operations.prepare(ctx.extra.request, ctx.extra.socket, payload);
      },
      execute: operations.execute,
      subscribe: operations.subscribe,
    },
    webSocketServer,
  );
  return {
    async close() {
      // Terminated, not closed politely: a fixture going away should look like a subgraph going away.
      for (const socket of webSocketServer.clients) socket.terminate();
      await disposable.dispose();
    },
  };
}

function headersOf(request: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  return headers;
}
