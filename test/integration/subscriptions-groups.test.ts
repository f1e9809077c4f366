// Groups of subscriptions on one upstream subscription: each completes every event on its own, whatever the others ask or may see.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';
import type { ExecutionResult } from 'graphql';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/http.js';
import { mintDevToken } from '../../src/security/authentication/dev-token.js';
import { grantPermission, revokePermission } from '../../src/registry/permission-store.js';

/** Alice's document: the reviews' authors, which she may read. */
const WITH_AUTHORS = /* GraphQL */ `
  subscription AuthorWatch($id: ID) {
    inventoryChanged(productId: $id) { inStock product { id name reviews { rating author } } }
  }
`;
/** Bob's: the same root field, with the price below it too; he asks for the authors as well, which he may not read. */
const WITH_PRICE = /* GraphQL */ `
  subscription PriceWatch($id: ID) {
    inventoryChanged(productId: $id) { inStock product { id name price reviews { rating author } } }
  }
`;

interface Catalogue {
  id: string;
  name: string;
  price: number;
  reviews: { rating: number; author: string | null }[];
}

/** Every event of one subscription, in order; `take(n)` waits for the first n. */
function collect(client: WsClient, query: string, variables: Record<string, unknown>) {
  const events: ExecutionResult[] = [];
  let failure: unknown;
  client.subscribe({ query, variables }, { next: (event) => void events.push(event as ExecutionResult), error: (error) => (failure = error), complete: () => {} });
  return {
    events,
    take: (n: number) => eventually(() => events.length >= n || failure !== undefined, { what: `${n} events` }).then(() => {
      if (failure !== undefined) throw new Error(`the subscription ended: ${JSON.stringify(failure)}`);
      return events.slice(0, n);
    }),
  };
}

describe('subscription groups sharing one upstream subscription', () => {
  let stack: Stack;
  const clients: WsClient[] = [];

  beforeAll(async () => {
    // Subgraphs get no per-user token: every caller may share every upstream subscription (decision 031, 3).
    stack = await startStack({ config: { authMode: 'optional', subgraphTokens: false }, requireTokens: false });
    // Review.author needs `sub:alice`: bob may not read it.
    await grantPermission(stack.db, 'sub:alice', 'Review.author');
  }, 60_000);
  afterAll(async () => {
    for (const client of clients) await client.dispose();
    await revokePermission(stack.db, 'sub:alice', 'Review.author').catch(() => {});
    await stack?.close();
  });

  // One upstream event object, completed in place by both groups, once put one group's denials in the other's answer.
  it('two groups that differ below the root field and in what each may see each get their own answer to every event', async () => {
    const [alice, bob] = await Promise.all(['alice', 'bob'].map((sub) => mintDevToken(stack.router.keyRing, { sub })));
    // The rule reached the router: bob's query of the authors is refused.
    await eventually(async () => (await stack.query('{ product(id: "2") { reviews { author } } }', { headers: { authorization: `Bearer ${bob}` } })).body.errors?.[0]?.extensions?.code === 'FORBIDDEN', { what: 'the authors denied to bob' });
    const connect = (token: string) => {
      const client = createWsClient({ url: stack.router.url.replace(/^http/, 'ws'), webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${token}` }, retryAttempts: 0, lazy: true });
      clients.push(client);
      return client;
    };
    const alices = collect(connect(alice), WITH_AUTHORS, { id: '2' });
    const bobs = collect(connect(bob), WITH_PRICE, { id: '2' });
    await eventually(() => stack.router.subscriptions.size === 2 && stack.router.subscriptions.groups === 2, { what: 'two subscriptions in two groups' });
    // The premise: both groups read one upstream subscription, so one event object reaches both.
    expect(stack.router.upstreams.counts().upstreams).toBe(1);

    const catalogue = (await stack.query('{ product(id: "2") { id name price reviews { rating author } } }', { headers: { authorization: `Bearer ${alice}` } })).body.data.product as Catalogue;
    expect(catalogue.reviews.some((review) => review.author !== null), 'a review with an author').toBe(true);
    const base = stack.subgraphs.inventory.running.url.replace(/\/graphql$/, '');
    const EVENTS = 5;
    for (let i = 0; i < EVENTS; i++) {
      const response = await fetch(`${base}/admin/inventory`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ productId: '2', inStock: 100 + i }) });
      expect(response.status).toBe(200);
    }
    const [alicesEvents, bobsEvents] = await Promise.all([alices.take(EVENTS), bobs.take(EVENTS)]);
    const { id, name, price, reviews } = catalogue;
    for (let i = 0; i < EVENTS; i++) {
      // Alice: the authors, no price (she did not ask), no error.
      expect(alicesEvents[i], `alice's event ${i}`).toEqual({ data: { inventoryChanged: { inStock: 100 + i, product: { id, name, reviews } } } });
      // Bob: the price he asked for, each author null with FORBIDDEN, never alice's value.
      const event = bobsEvents[i];
      expect(event.data, `bob's event ${i}`).toEqual({ inventoryChanged: { inStock: 100 + i, product: { id, name, price, reviews: reviews.map(({ rating }) => ({ rating, author: null })) } } });
      expect(event.errors?.map((e) => [e.path, e.extensions?.code]), `bob's event ${i}`).toEqual(reviews.map((_, index) => [['inventoryChanged', 'product', 'reviews', index, 'author'], 'FORBIDDEN']));
    }
  });
});
