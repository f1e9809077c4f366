// The inventory subgraph over HTTP: federation SDL, batched Product.inventory, deterministic data.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseUrl, createServerPool, postAdmin, postGraphql, productRepresentations, readStats } from '../kit/test-client.js';
import type { RunningSubgraph } from '../kit/index.js';
import { createInventorySubgraph, generateInventory, MAX_IN_STOCK } from './index.js';

const PRODUCT_INVENTORY = /* GraphQL */ `query ($representations: [_Any!]!) {
  _entities(representations: $representations) { ... on Product { id inventory { inStock warehouse } } }
}`;

const pool = createServerPool();
let running: RunningSubgraph;
let other: RunningSubgraph;
beforeAll(async () => {
  running = await pool.start(createInventorySubgraph({ env: {} }));
  other = await pool.start(createInventorySubgraph({ env: {} }));
});
afterAll(() => pool.closeAll());

describe('inventory subgraph', () => {
  it('publishes its Federation v2 SDL through _service', async () => {
    const sdl: string = (await postGraphql(running.url, '{ _service { sdl } }')).body.data._service.sdl;
    expect(sdl).toMatch(/type Product\s+@key\(fields: "id"\)/);
    expect(sdl).toContain('inventory: Inventory');
    expect(sdl).toContain('product: Product!');
    expect(sdl).toMatch(/type Subscription\s*\{[^}]*inventoryChanged\(productId: ID\): Inventory/);
  });

  it('resolves inventory of 50 products with one data-source call', async () => {
    await fetch(running.url.replace(/\/graphql$/, '/admin/stats/reset'), { method: 'POST' });
    const answer = await postGraphql(running.url, PRODUCT_INVENTORY, { representations: productRepresentations(50, 400) });
    expect(answer.body.errors).toBeUndefined();
    expect(answer.body.data._entities).toHaveLength(50);
    expect(answer.body.data._entities[0].id).toBe('400');
    const stats = await readStats(running);
    expect(stats.dataSourceCalls).toEqual({ inventoryByProductId: 1 });
    expect(stats.entityRequests).toBe(1);
  });

  it('keeps stock within 0-500 and sometimes has no warehouse; unknown products have no inventory', async () => {
    const answer = await postGraphql(running.url, PRODUCT_INVENTORY, { representations: [...productRepresentations(1000), { __typename: 'Product', id: '1001' }] });
    const entities: { id: string; inventory: { inStock: number; warehouse: string | null } | null }[] = answer.body.data._entities;
    const known = entities.slice(0, 1000).map((entity) => entity.inventory!);
    expect(known.every((inventory) => Number.isInteger(inventory.inStock) && inventory.inStock >= 0 && inventory.inStock <= MAX_IN_STOCK)).toBe(true);
    expect(known.some((inventory) => inventory.warehouse === null)).toBe(true);
    expect(new Set(known.map((inventory) => inventory.warehouse)).size).toBeGreaterThan(3);
    expect(entities[1000]).toEqual({ id: '1001', inventory: null });
  });

  it('serves identical data from separate instances', async () => {
    const variables = { representations: productRepresentations(1000) };
    const [a, b] = await Promise.all([postGraphql(running.url, PRODUCT_INVENTORY, variables), postGraphql(other.url, PRODUCT_INVENTORY, variables)]);
    expect(b.body).toEqual(a.body);
  });

  it('pins known rows, so that changing the generated data is a deliberate act', () => {
    const table = generateInventory();
    expect(table.size).toBe(1000);
    expect(table.get('1')).toEqual({ productId: '1', inStock: 30, warehouse: null });
    expect(table.get('1000')).toEqual({ productId: '1000', inStock: 63, warehouse: null });
  });
});

describe('inventory subgraph: admin', () => {
  const STOCK_OF_2 = /* GraphQL */ `{ _entities(representations: [{ __typename: "Product", id: "2" }]) { ... on Product { inventory { productId inStock warehouse product { id } } } } }`;

  it('stores a pushed change, so a later query sees it; warehouse left out keeps the current one', async () => {
    const subgraph = createInventorySubgraph({ env: {}, tickMs: 0 });
    const started = await pool.start(subgraph);
    const before = (await postGraphql(started.url, STOCK_OF_2)).body.data._entities[0].inventory;
    expect(await postAdmin(started, '/admin/inventory', { productId: '2', inStock: 7 })).toEqual({
      status: 200,
      body: { productId: '2', inStock: 7, warehouse: before.warehouse, delivered: 0 },
    });
    expect((await postGraphql(started.url, STOCK_OF_2)).body.data._entities[0].inventory).toEqual({ ...before, inStock: 7, product: { id: '2' } });
    await postAdmin(started, '/admin/inventory', { productId: '2', inStock: 0, warehouse: 'Leipzig' });
    expect((await postGraphql(started.url, STOCK_OF_2)).body.data._entities[0].inventory).toMatchObject({ inStock: 0, warehouse: 'Leipzig' });
    expect(await (await fetch(`${baseUrl(started)}/admin/inventory`)).json()).toEqual({ tickMs: 0, ticking: [] });
  });

  it.each([
    ['an unknown product', { productId: '1001', inStock: 1 }, 'no product has id "1001"'],
    ['a numeric product id', { productId: 2, inStock: 1 }, 'productId must be a product id string'],
    ['stock above the maximum', { productId: '2', inStock: MAX_IN_STOCK + 1 }, 'inStock must be an integer from 0 to 500'],
    ['a fractional stock', { productId: '2', inStock: 1.5 }, 'inStock must be an integer'],
    ['no stock', { productId: '2' }, 'inStock must be an integer'],
    ['an empty warehouse', { productId: '2', inStock: 1, warehouse: ' ' }, 'warehouse must be null or a name'],
    ['an unknown key', { productId: '2', inStock: 1, stock: 3 }, 'unknown key "stock"'],
    ['a list', [{ productId: '2', inStock: 1 }], 'expected a JSON object'],
  ])('answers 400 { error } and changes nothing for %s', async (_, body, message) => {
    const started = await pool.start(createInventorySubgraph({ env: {}, tickMs: 0 }));
    const before = (await postGraphql(started.url, STOCK_OF_2)).body;
    const answer = await postAdmin(started, '/admin/inventory', body);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toContain(message);
    expect((await postGraphql(started.url, STOCK_OF_2)).body).toEqual(before);
  });

  it('refuses a bad tickMs at creation', () => {
    expect(() => createInventorySubgraph({ env: { INVENTORY_TICK_MS: '-5' } })).toThrow(/INVENTORY_TICK_MS/);
    expect(() => createInventorySubgraph({ env: {}, tickMs: Number.NaN })).toThrow(/tickMs/);
  });
});
