// The live stock behind inventoryChanged: stored changes, per-product filters, moves only while watched, bounded steps, tickMs settings.
import { describe, expect, it } from 'vitest';
import { take } from '../kit/test-client.js';
import { generateInventory, MAX_IN_STOCK } from './inventory-data.js';
import { ALL_PRODUCTS_TICKING, createInventoryFeed, DEFAULT_TICK_MS, tickMsFrom } from './inventory-feed.js';

describe('inventory feed', () => {
  it('stores a change in the table and publishes it to the product watchers and the catch-all ones', async () => {
    const table = generateInventory();
    const feed = createInventoryFeed(table, { tickMs: 0 });
    const two = feed.watch('2');
    const all = feed.watch(undefined);
    expect(feed.watchers).toBe(2);
    expect(feed.change({ productId: '3', inStock: 1 })).toEqual({ row: { productId: '3', inStock: 1, warehouse: table.get('3')!.warehouse }, delivered: 1 });
    expect(feed.change({ productId: '2', inStock: 7, warehouse: 'Leipzig' }).delivered).toBe(2);
    expect(table.get('2')).toEqual({ productId: '2', inStock: 7, warehouse: 'Leipzig' });
    expect(feed.change({ productId: '2', inStock: 8, warehouse: null }).row).toEqual({ productId: '2', inStock: 8, warehouse: null });
    expect(await take(two, 2)).toEqual([
      { productId: '2', inStock: 7, warehouse: 'Leipzig' },
      { productId: '2', inStock: 8, warehouse: null },
    ]);
    expect((await take(all, 3)).map((row) => row.productId)).toEqual(['3', '2', '2']);
    expect(() => feed.change({ productId: '1001', inStock: 1 })).toThrow('no product has id "1001"');
    feed.close();
    expect(await two.next()).toEqual({ value: undefined, done: true });
    expect(feed.watchers).toBe(0);
  });

  it('moves a watched product on its own, within 0..MAX_IN_STOCK, and stops when nobody watches', async () => {
    const table = generateInventory();
    table.set('7', { productId: '7', inStock: 0, warehouse: null });
    const feed = createInventoryFeed(table, { tickMs: 2 });
    expect(feed.ticking).toEqual([]);
    const first = feed.watch('7');
    const second = feed.watch('7');
    expect(feed.ticking).toEqual(['7']);
    const moves = await take(first, 20);
    let previous = 0;
    for (const row of moves) {
      expect(row.productId).toBe('7');
      expect(row.inStock).not.toBe(previous);
      expect(Math.abs(row.inStock - previous)).toBeLessThanOrEqual(10);
      expect(row.inStock).toBeGreaterThanOrEqual(0);
      expect(row.inStock).toBeLessThanOrEqual(MAX_IN_STOCK);
      previous = row.inStock;
    }
    await first.return!();
    expect(feed.ticking).toEqual(['7']);
    await second.return!();
    expect(feed.ticking).toEqual([]);
  });

  it('keeps products 1-5 moving for a subscription without productId, and nothing at tickMs 0', async () => {
    const feed = createInventoryFeed(generateInventory(), { tickMs: 1 });
    const all = feed.watch(undefined);
    expect(feed.ticking).toEqual([...ALL_PRODUCTS_TICKING]);
    const seen = new Set((await take(all, 60)).map((row) => row.productId));
    expect([...seen].every((id) => ALL_PRODUCTS_TICKING.includes(id))).toBe(true);
    expect(seen.size).toBeGreaterThan(1);
    await all.return!();
    expect(feed.ticking).toEqual([]);

    const still = createInventoryFeed(generateInventory(), { tickMs: 0 });
    const watcher = still.watch('1');
    expect(still.ticking).toEqual([]);
    await watcher.return!();
  });

  it('reads tickMs from the option, else INVENTORY_TICK_MS, else 1000, and refuses bad values', () => {
    expect(tickMsFrom(undefined, {})).toBe(DEFAULT_TICK_MS);
    expect(tickMsFrom(undefined, { INVENTORY_TICK_MS: ' 250 ' })).toBe(250);
    expect(tickMsFrom(0, { INVENTORY_TICK_MS: '250' })).toBe(0);
    expect(tickMsFrom(undefined, { INVENTORY_TICK_MS: '' })).toBe(DEFAULT_TICK_MS);
    expect(() => tickMsFrom(undefined, { INVENTORY_TICK_MS: 'fast' })).toThrow(/INVENTORY_TICK_MS must be an integer .* \(got "fast"\)/);
    expect(() => tickMsFrom(-1, {})).toThrow(/tickMs must be an integer/);
    expect(() => tickMsFrom(1.5, {})).toThrow(/tickMs must be an integer/);
  });
});
