// The product subgraph's table: a name and a price in cents for every catalogue id, generated from the id alone.
import { intBetween, pick, productIds, randomFor } from '../kit/index.js';

export interface ProductRow {
  readonly id: string;
  readonly name: string;
  /** In cents. */
  readonly price: number;
}

const ADJECTIVES = ['Sturdy', 'Compact', 'Deluxe', 'Rustic', 'Sleek', 'Vintage', 'Modular', 'Quiet', 'Bright', 'Foldable', 'Classic', 'Rugged'];
const MATERIALS = ['Oak', 'Steel', 'Cotton', 'Bamboo', 'Copper', 'Wool', 'Granite', 'Linen', 'Walnut', 'Aluminium'];
const NOUNS = ['Lamp', 'Chair', 'Kettle', 'Backpack', 'Desk', 'Blanket', 'Teapot', 'Shelf', 'Bicycle', 'Clock', 'Mug', 'Notebook', 'Stool', 'Rug'];

/** Same ids, same rows, in every process: each row comes from a generator seeded by its id. */
export function generateProducts(ids: readonly string[] = productIds()): Map<string, ProductRow> {
  const table = new Map<string, ProductRow>();
  for (const id of ids) {
    const random = randomFor('product', id);
    const name = `${pick(random, ADJECTIVES)} ${pick(random, MATERIALS)} ${pick(random, NOUNS)}`;
    // Shop-style prices: 0.99 to 499.99, always ending in 99 cents.
    const price = intBetween(random, 1, 500) * 100 - 1;
    table.set(id, Object.freeze({ id, name, price }));
  }
  return table;
}
