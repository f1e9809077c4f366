// The inventory subgraph's table: stock level and warehouse for every catalogue id, generated from the id alone.
import { intBetween, pick, productIds, randomFor } from '../kit/index.js';

export interface InventoryRow {
  /** The catalogue id the row belongs to (also its key in the table). */
  readonly productId: string;
  /** 0 to 500. */
  readonly inStock: number;
  /** Null when the stock is not assigned to a warehouse. */
  readonly warehouse: string | null;
}

export const MAX_IN_STOCK = 500;

const WAREHOUSES = ['Rotterdam', 'Memphis', 'Singapore', 'Leipzig', 'Sao Paulo'];

/** Unassigned stock: about one product in ten. */
const UNASSIGNED_SHARE = 0.1;

/** Same ids, same rows, in every process: each row comes from a generator seeded by its id. */
export function generateInventory(ids: readonly string[] = productIds()): Map<string, InventoryRow> {
  const table = new Map<string, InventoryRow>();
  for (const id of ids) {
    const random = randomFor('inventory', id);
    const inStock = intBetween(random, 0, MAX_IN_STOCK);
    const warehouse = random() < UNASSIGNED_SHARE ? null : pick(random, WAREHOUSES);
    table.set(id, Object.freeze({ productId: id, inStock, warehouse }));
  }
  return table;
}
