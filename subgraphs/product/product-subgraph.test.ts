// The product subgraph over HTTP: federation SDL, catalogue queries, batched entity lookups, deterministic data.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServerPool, postGraphql, productRepresentations, readStats } from '../kit/test-client.js';
import type { RunningSubgraph } from '../kit/index.js';
import { createProductSubgraph, generateProducts } from './index.js';

const ENTITIES = /* GraphQL */ `query ($representations: [_Any!]!) { _entities(representations: $representations) { ... on Product { id name price } } }`;

const pool = createServerPool();
let running: RunningSubgraph;
let other: RunningSubgraph;
beforeAll(async () => {
  running = await pool.start(createProductSubgraph({ env: {} }));
  other = await pool.start(createProductSubgraph({ env: {} }));
});
afterAll(() => pool.closeAll());

async function resetStats(server: RunningSubgraph): Promise<void> {
  await fetch(server.url.replace(/\/graphql$/, '/admin/stats/reset'), { method: 'POST' });
}

describe('product subgraph', () => {
  it('publishes its Federation v2 SDL through _service', async () => {
    const answer = await postGraphql(running.url, '{ _service { sdl } }');
    const sdl: string = answer.body.data._service.sdl;
    expect(sdl).toContain('@link(url: "https://specs.apollo.dev/federation/v2.9"');
    expect(sdl).toMatch(/type Product\s+@key\(fields: "id"\)/);
    expect(sdl).toContain('price: Int!');
  });

  it('answers one product and null for an unknown id', async () => {
    const answer = await postGraphql(running.url, '{ a: product(id: "1") { id name price } b: product(id: "1001") { id } }');
    expect(answer.body.errors).toBeUndefined();
    expect(answer.body.data.a).toEqual({ id: '1', name: expect.any(String), price: expect.any(Number) });
    expect(answer.body.data.b).toBeNull();
  });

  it('lists the first products in id order, 10 by default, at most the catalogue', async () => {
    const answer = await postGraphql(running.url, '{ some: products { id } all: products(first: 5000) { id price } none: products(first: 0) { id } }');
    expect(answer.body.data.some.map((p: { id: string }) => p.id)).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9', '10']);
    expect(answer.body.data.all).toHaveLength(1000);
    expect(answer.body.data.all.at(-1).id).toBe('1000');
    expect(answer.body.data.none).toEqual([]);
    for (const product of answer.body.data.all) {
      expect(product.price).toBeGreaterThanOrEqual(99);
      expect(product.price).toBeLessThanOrEqual(49_999);
      expect(product.price % 100).toBe(99);
    }
  });

  it('rejects a negative page size', async () => {
    const answer = await postGraphql(running.url, '{ products(first: -1) { id } }');
    expect(answer.body.errors?.[0]).toMatchObject({ message: 'first must not be negative (got -1)', extensions: { code: 'BAD_USER_INPUT' } });
  });

  it('resolves 50 entity representations with one data-source call', async () => {
    await resetStats(running);
    const answer = await postGraphql(running.url, ENTITIES, { representations: productRepresentations(50) });
    expect(answer.body.errors).toBeUndefined();
    expect(answer.body.data._entities).toHaveLength(50);
    expect(answer.body.data._entities[49]).toEqual({ id: '50', name: expect.any(String), price: expect.any(Number) });
    const stats = await readStats(running);
    expect(stats.dataSourceCalls).toEqual({ productsById: 1 });
    expect(stats.entityRequests).toBe(1);
  });

  it('resolves an unknown entity to null', async () => {
    const answer = await postGraphql(running.url, ENTITIES, { representations: [{ __typename: 'Product', id: 'nope' }] });
    expect(answer.body.data._entities).toEqual([null]);
  });

  it('creates loaders per request: two requests for the same ids cost two calls', async () => {
    await resetStats(running);
    await postGraphql(running.url, '{ product(id: "7") { name } }');
    await postGraphql(running.url, '{ product(id: "7") { name } }');
    expect((await readStats(running)).dataSourceCalls.productsById).toBe(2);
  });

  it('serves identical data from separate instances', async () => {
    const query = '{ products(first: 1000) { id name price } }';
    const [a, b] = await Promise.all([postGraphql(running.url, query), postGraphql(other.url, query)]);
    expect(a.body.data.products).toHaveLength(1000);
    expect(b.body).toEqual(a.body);
    expect(new Set(a.body.data.products.map((p: { name: string }) => p.name)).size).toBeGreaterThan(100);
  });

  it('pins known rows, so that changing the generated data is a deliberate act', () => {
    const table = generateProducts();
    expect(table.size).toBe(1000);
    expect(table.get('1')).toEqual({ id: '1', name: 'Foldable Wool Bicycle', price: 3499 });
    expect(table.get('1000')).toEqual({ id: '1000', name: 'Foldable Oak Stool', price: 36899 });
  });
});
