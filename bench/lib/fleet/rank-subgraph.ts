// A subgraph that a drill publishes while the fleet is under load: it adds Product.rank to the demo catalogue.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parse } from 'graphql';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { createYoga } from 'graphql-yoga';

export const RANK_SDL = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
  type Product @key(fields: "id") {
    id: ID!
    rank: Int!
  }
`;

/** The rank the subgraph gives product `id`: what a router serving the publish answers. */
export const rankOf = (id: string) => 1000 - Number(id);

export interface RankSubgraph {
  readonly url: string;
  close(): Promise<void>;
}

export async function startRankSubgraph(): Promise<RankSubgraph> {
  const schema = buildSubgraphSchema({
    typeDefs: parse(RANK_SDL),
    resolvers: { Product: { __resolveReference: (ref: { id: string }) => ({ id: ref.id, rank: rankOf(ref.id) }) } } as never,
  });
  const server = createServer(createYoga({ schema, logging: false }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
