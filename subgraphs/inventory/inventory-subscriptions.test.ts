// inventoryChanged over both transports (graphql-ws and graphql-sse clients): pushed events, productId filter, ticking, counters.
import { afterEach, describe, expect, it } from 'vitest';
import { baseUrl, createServerPool, postAdmin, postGraphql, readStats, take } from '../kit/test-client.js';
import { openSseClient, openWsClient, readSubscriptions, waitForSubscriptions, type TestWsClient } from '../kit/test-subscription-clients.js';
import type { RunningSubgraph } from '../kit/index.js';
import { createInventorySubgraph, MAX_IN_STOCK } from './index.js';

const CHANGES = /* GraphQL */ `subscription ($productId: ID) { inventoryChanged(productId: $productId) { productId inStock warehouse product { id } } }`;

const pool = createServerPool();
const clients: TestWsClient[] = [];
afterEach(async () => {
  for (const { client } of clients.splice(0)) await client.dispose();
  await pool.closeAll();
});

function wsClient(running: RunningSubgraph): TestWsClient {
  const client = openWsClient(running);
  clients.push(client);
  return client;
}

const event = (productId: string, inStock: number, warehouse: string | null) => ({
  data: { inventoryChanged: { productId, inStock, warehouse, product: { id: productId } } },
});

describe('inventoryChanged over GraphQL over WebSocket', () => {
  it('delivers a change pushed through POST /admin/inventory, and a later query sees it', async () => {
    const running = await pool.start(createInventorySubgraph({ env: {}, tickMs: 0 }));
    const stream = wsClient(running).client.iterate({ query: CHANGES, variables: { productId: '2' } });
    const first = stream.next();
    await waitForSubscriptions(running, (counters) => counters.open === 1);
    expect(await postAdmin(running, '/admin/inventory', { productId: '2', inStock: 7, warehouse: 'Leipzig' })).toMatchObject({ status: 200, body: { delivered: 1 } });
    expect((await first).value).toEqual(event('2', 7, 'Leipzig'));
    const query = `{ _entities(representations: [{ __typename: "Product", id: "2" }]) { ... on Product { inventory { inStock } } } }`;
    expect((await postGraphql(running.url, query)).body.data._entities[0].inventory.inStock).toBe(7);
  });

  it('filters by productId; without it a subscription receives every product', async () => {
    const running = await pool.start(createInventorySubgraph({ env: {}, tickMs: 0 }));
    const { client } = wsClient(running);
    const two = client.iterate({ query: CHANGES, variables: { productId: '2' } });
    const three = client.iterate({ query: CHANGES, variables: { productId: '3' } });
    const all = client.iterate({ query: CHANGES });
    const firsts = [two.next(), three.next(), all.next()];
    await waitForSubscriptions(running, (counters) => counters.open === 3);
    expect((await postAdmin(running, '/admin/inventory', { productId: '3', inStock: 3, warehouse: null })).body.delivered).toBe(2);
    expect((await postAdmin(running, '/admin/inventory', { productId: '2', inStock: 2, warehouse: null })).body.delivered).toBe(2);
    expect((await postAdmin(running, '/admin/inventory', { productId: '999', inStock: 9, warehouse: null })).body.delivered).toBe(1);
    const [fromTwo, fromThree, fromAll] = await Promise.all(firsts);
    expect(fromTwo.value).toEqual(event('2', 2, null));
    expect(fromThree.value).toEqual(event('3', 3, null));
    expect([fromAll.value, ...(await take(all, 2))]).toEqual([event('3', 3, null), event('2', 2, null), event('999', 9, null)]);
  });

  it('refuses an unknown productId with BAD_USER_INPUT', async () => {
    const running = await pool.start(createInventorySubgraph({ env: {}, tickMs: 0 }));
    const stream = wsClient(running).client.iterate({ query: CHANGES, variables: { productId: '1001' } });
    const answer = await stream.next();
    expect(answer.value).toMatchObject({ errors: [{ message: 'no product has id "1001"', extensions: { code: 'BAD_USER_INPUT' } }] });
    expect((await stream.next()).done).toBe(true);
    expect(await readSubscriptions(running)).toMatchObject({ open: 0, started: 0 });
  });

  it('moves a watched product on its own with a short tickMs, and stops when the client leaves', async () => {
    const running = await pool.start(createInventorySubgraph({ env: {}, tickMs: 5 }));
    const { client } = wsClient(running);
    const stream = client.iterate({ query: CHANGES, variables: { productId: '4' } });
    const moves = await take(stream, 3);
    for (const move of moves) {
      expect(move.data?.inventoryChanged).toMatchObject({ productId: '4', product: { id: '4' } });
      const inStock = (move.data!.inventoryChanged as { inStock: number }).inStock;
      expect(inStock).toBeGreaterThanOrEqual(0);
      expect(inStock).toBeLessThanOrEqual(MAX_IN_STOCK);
    }
    expect(await (await fetch(`${baseUrl(running)}/admin/inventory`)).json()).toEqual({ tickMs: 5, ticking: ['4'] });
    await stream.return!();
    await waitForSubscriptions(running, (counters) => counters.open === 0);
    expect(await (await fetch(`${baseUrl(running)}/admin/inventory`)).json()).toEqual({ tickMs: 5, ticking: [] });
  });

  it('counts subscriptions, connections and events, and goes back to 0 open after the clients leave', async () => {
    const running = await pool.start(createInventorySubgraph({ env: {}, tickMs: 0 }));
    const a = wsClient(running);
    const b = wsClient(running);
    const fromA = a.client.iterate({ query: CHANGES, variables: { productId: '5' } });
    const fromB = b.client.iterate({ query: CHANGES });
    const firsts = [fromA.next(), fromB.next()];
    expect(await waitForSubscriptions(running, (counters) => counters.open === 2)).toEqual({ open: 2, connections: 2, started: 2, events: 0 });
    await postAdmin(running, '/admin/inventory', { productId: '5', inStock: 5 });
    await Promise.all(firsts);
    expect(await readSubscriptions(running)).toEqual({ open: 2, connections: 2, started: 2, events: 2 });
    await a.client.dispose();
    await b.client.dispose();
    expect(await waitForSubscriptions(running, (counters) => counters.open === 0 && counters.connections === 0)).toEqual({ open: 0, connections: 0, started: 2, events: 2 });
    expect((await readStats(running)).subscriptions).toEqual({ open: 0, connections: 0, started: 2, events: 2 });
  });
});

describe('inventoryChanged over GraphQL over SSE (distinct connections)', () => {
  it('delivers pushed changes on a POST with Accept: text/event-stream, and ends when the client leaves', async () => {
    const running = await pool.start(createInventorySubgraph({ env: {}, tickMs: 0 }));
    const client = openSseClient(running);
    try {
      const stream = client.iterate({ query: CHANGES, variables: { productId: '6' } });
      const first = stream.next();
      await waitForSubscriptions(running, (counters) => counters.open === 1);
      await postAdmin(running, '/admin/inventory', { productId: '6', inStock: 60, warehouse: 'Memphis' });
      expect((await first).value).toEqual(event('6', 60, 'Memphis'));
      await postAdmin(running, '/admin/inventory', { productId: '6', inStock: 61, warehouse: null });
      expect((await stream.next()).value).toEqual(event('6', 61, null));
      expect((await readStats(running)).inFlight).toBe(1);
      await stream.return!();
      expect(await waitForSubscriptions(running, (counters) => counters.open === 0)).toEqual({ open: 0, connections: 0, started: 1, events: 2 });
      // Ending a stream is how an SSE client unsubscribes: not an aborted request.
      expect(await readStats(running)).toMatchObject({ inFlight: 0, aborted: 0 });
    } finally {
      client.dispose();
    }
  });
});
