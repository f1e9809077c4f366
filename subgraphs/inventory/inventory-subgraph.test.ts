// The inventory subgraph over HTTP: federation SDL, batched Product.inventory, deterministic data.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServerPool, postGraphql, productRepresentations, readStats } from '../kit/test-client.js';
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
    expect(table.get('1')).toEqual({ inStock: 30, warehouse: null });
    expect(table.get('1000')).toEqual({ inStock: 63, warehouse: null });
  });
});
