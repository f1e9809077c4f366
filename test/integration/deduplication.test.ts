// Identical queries in flight share one subgraph call; different callers (different subgraph tokens) never do.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_FAULT_SETTINGS } from '../../subgraphs/index.js';
import { mintDevToken } from '../../src/security/authentication/dev-token.js';
import { databaseKind } from '../helpers/database.js';
import { startStack, type Stack } from '../helpers/stack.js';

const QUERY = 'query Badge { product(id: "3") { id name price } }';

describe(`deduplication of subgraph calls (${databaseKind} database)`, () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ subgraphs: ['product', 'reviews', 'inventory'] });
  });
  afterAll(async () => {
    await stack?.close();
  });
  beforeEach(() => {
    // Slow enough that every request below arrives while the first call is still in flight.
    stack.subgraphs.product.subgraph.faults.set({ ...DEFAULT_FAULT_SETTINGS, latencyMs: 300 });
    stack.subgraphs.product.subgraph.stats.reset();
  });

  it('answers ten identical anonymous requests with one product call, each with the full answer', async () => {
    const before = await stack.metric('switchyard_subgraph_deduplicated_total', { subgraph: 'product' });
    const answers = await Promise.all(Array.from({ length: 10 }, () => stack.query(QUERY)));
    for (const { status, body } of answers) {
      expect(status).toBe(200);
      expect(body).toEqual(answers[0]!.body);
    }
    expect(answers[0]!.body.data?.product).toMatchObject({ id: '3' });
    expect(stack.subgraphs.product.subgraph.stats.snapshot().graphqlRequests).toBe(1);
    expect((await stack.metric('switchyard_subgraph_deduplicated_total', { subgraph: 'product' })) - before).toBe(9);
  });

  it('never shares a call between callers whose subgraph tokens differ, nor between different variables', async () => {
    const alice = await mintDevToken(stack.router.keyRing, { sub: 'alice' });
    const bob = await mintDevToken(stack.router.keyRing, { sub: 'bob' });
    const page = 'query Page($id: ID!) { product(id: $id) { id name } }';
    await Promise.all([
      stack.query(page, { variables: { id: '1' }, headers: { authorization: `Bearer ${alice}` } }),
      stack.query(page, { variables: { id: '1' }, headers: { authorization: `Bearer ${alice}` } }),
      stack.query(page, { variables: { id: '1' }, headers: { authorization: `Bearer ${bob}` } }),
      stack.query(page, { variables: { id: '2' }, headers: { authorization: `Bearer ${bob}` } }),
    ]);
    // alice's two identical requests share; bob's differ from alice's (token) and from each other (variables).
    expect(stack.subgraphs.product.subgraph.stats.snapshot().graphqlRequests).toBe(3);
  });

  it('never shares a mutation', async () => {
    stack.subgraphs.reviews.subgraph.stats.reset();
    const mutation = 'mutation { addReview(productId: "1", rating: 5, body: "Same words.") { id } }';
    await Promise.all([stack.query(mutation), stack.query(mutation)]);
    expect(stack.subgraphs.reviews.subgraph.stats.snapshot().graphqlRequests).toBe(2);
  });
});
