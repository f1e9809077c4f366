// Small Federation subgraphs for tests, from an SDL and resolvers, served on an ephemeral port.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parse } from 'graphql';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { createYoga } from 'graphql-yoga';

export interface FixtureOptions {
  sdl: string;
  resolvers?: Record<string, any>;
}

export interface RunningFixture {
  url: string;
  sdl: string;
  /** GraphQL requests received so far, with their query text and headers. */
  requests: { query: string; variables?: Record<string, unknown>; headers: Record<string, string> }[];
  close(): Promise<void>;
}

export async function startFixtureSubgraph(options: FixtureOptions): Promise<RunningFixture> {
  const schema = buildSubgraphSchema({ typeDefs: parse(options.sdl), resolvers: options.resolvers as any });
  const requests: RunningFixture['requests'] = [];
  const yoga = createYoga({
    schema,
    logging: false,
    maskedErrors: false,
    plugins: [
      {
        onParams({ params, request }) {
          requests.push({ query: params.query ?? '', variables: params.variables, headers: Object.fromEntries(request.headers) });
        },
      },
    ],
  });
  const server = createServer(yoga);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    sdl: options.sdl,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
