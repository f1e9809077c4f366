// Fixture subgraphs with a Subscription type: served over graphql-ws and graphql-sse on the query port, subscribe requests recorded like queries.
import { createClient as createSseClient } from 'graphql-sse';
import { createClient as createWsClient } from 'graphql-ws';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createEventSource } from './fixture-events.js';
import { startFixtureSubgraph, type RunningFixture } from './fixture-subgraph.js';

const SDL = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
  type Query { shipment(id: ID!): Shipment }
  type Subscription { shipmentMoved(id: ID): Shipment }
  type Shipment @key(fields: "id") { id: ID! at: String! }
`;

interface Shipment {
  id: string;
  at: string;
}

let fixture: RunningFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

async function startShipments() {
  const moves = createEventSource<Shipment>();
  fixture = await startFixtureSubgraph({
    sdl: SDL,
    resolvers: {
      Query: { shipment: (_: unknown, args: { id: string }) => ({ id: args.id, at: 'depot' }) },
      Subscription: {
        shipmentMoved: {
          subscribe: (_: unknown, args: { id?: string | null }) => moves.subscribe({ accept: (move) => args.id == null || move.id === args.id }),
          resolve: (move: Shipment) => move,
        },
      },
    },
  });
  return { fixture, moves };
}

const MOVED = /* GraphQL */ `subscription ($id: ID) { shipmentMoved(id: $id) { id at } }`;

describe('fixture subgraph subscriptions', () => {
  it('serves graphql-ws on the same port and path, recording the subscribe with its connection_init payload', async () => {
    const { fixture, moves } = await startShipments();
    const client = createWsClient({ url: fixture.url.replace(/^http/, 'ws'), webSocketImpl: WebSocket, retryAttempts: 0, connectionParams: { authorization: 'Bearer router-token' } });
    try {
      const stream = client.iterate({ query: MOVED, variables: { id: 's1' } });
      const first = stream.next();
      await moves.whenListening();
      moves.publish({ id: 's2', at: 'Lyon' });
      moves.publish({ id: 's1', at: 'Dijon' });
      expect((await first).value).toEqual({ data: { shipmentMoved: { id: 's1', at: 'Dijon' } } });
      expect(fixture.requests).toEqual([
        {
          query: MOVED,
          variables: { id: 's1' },
          headers: expect.objectContaining({ upgrade: 'websocket', 'sec-websocket-protocol': 'graphql-transport-ws' }),
          transport: 'websocket',
          connectionParams: { authorization: 'Bearer router-token' },
        },
      ]);
      // Queries still work over the same socket and over HTTP.
      expect((await client.iterate({ query: '{ shipment(id: "s3") { at } }' }).next()).value).toEqual({ data: { shipment: { at: 'depot' } } });
      await stream.return!();
      await expect.poll(() => moves.listeners).toBe(0);
    } finally {
      await client.dispose();
    }
  });

  it('serves GraphQL over SSE (distinct connections) and records the POST like a query', async () => {
    const { fixture, moves } = await startShipments();
    const client = createSseClient({ url: fixture.url, headers: { authorization: 'Bearer sse-token' }, retryAttempts: 0 });
    try {
      const stream = client.iterate({ query: MOVED });
      const first = stream.next();
      await moves.whenListening();
      moves.publish({ id: 's9', at: 'Oslo' });
      expect((await first).value).toEqual({ data: { shipmentMoved: { id: 's9', at: 'Oslo' } } });
      expect(fixture.requests).toMatchObject([{ query: MOVED, transport: 'http', headers: { authorization: 'Bearer sse-token', accept: 'text/event-stream' } }]);
      await stream.return!();
      await expect.poll(() => moves.listeners).toBe(0);
    } finally {
      client.dispose();
    }
  });

  it('close() terminates open WebSocket connections and ends their subscriptions', async () => {
    const { fixture, moves } = await startShipments();
    const closes: number[] = [];
    const client = createWsClient({ url: fixture.url.replace(/^http/, 'ws'), webSocketImpl: WebSocket, retryAttempts: 0, on: { closed: (event) => void closes.push((event as { code: number }).code) } });
    try {
      const next = client.iterate({ query: MOVED }).next();
      await moves.whenListening();
      await fixture.close();
      await expect(next).rejects.toMatchObject({ code: 1006 });
      expect(closes).toEqual([1006]);
      await expect.poll(() => moves.listeners).toBe(0);
    } finally {
      await client.dispose();
    }
  });

  it('answers no upgrade for a fixture without a Subscription type', async () => {
    fixture = await startFixtureSubgraph({ sdl: /* GraphQL */ `type Query { ping: String }`, resolvers: { Query: { ping: () => 'pong' } } });
    const raw = new WebSocket(fixture.url.replace(/^http/, 'ws'), 'graphql-transport-ws');
    const outcome = await new Promise<string>((resolve) => {
      raw.once('open', () => resolve('open'));
      raw.once('error', () => resolve('refused'));
    });
    expect(outcome).toBe('refused');
    raw.terminate();
  });
});
