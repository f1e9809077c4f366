// The inventory subgraph's own admin routes: push a stock change to subscriptions, see which products move.
import { AdminInputError, type AdminRoute } from '../kit/index.js';
import { MAX_IN_STOCK } from './inventory-data.js';
import type { InventoryFeed, StockChange } from './inventory-feed.js';

/** Longest warehouse name accepted, in characters. */
const MAX_WAREHOUSE_LENGTH = 64;

const KEYS = ['productId', 'inStock', 'warehouse'];

/**
 * - `POST /admin/inventory` with `{ "productId": "2", "inStock": 7, "warehouse"?: "Leipzig" | null }`:
 *   stores the change (a later `Product.inventory` sees it) and publishes it to the matching subscriptions;
 *   answers `{ productId, inStock, warehouse, delivered }` (`delivered`: subscriptions it reached).
 *   Bad input answers 400 `{ error, problems }` and changes nothing.
 * - `GET /admin/inventory`: `{ tickMs, ticking }`, the mean ms between moves (0: off) and the ids of the products moving now.
 */
export function inventoryAdminRoutes(feed: InventoryFeed): AdminRoute[] {
  return [
    { path: '/admin/inventory', method: 'GET', handle: () => ({ tickMs: feed.tickMs, ticking: feed.ticking }) },
    {
      path: '/admin/inventory',
      method: 'POST',
      json: true,
      handle: function pushStockChange(body) {
        const { row, delivered } = feed.change(validateStockChange(body, feed));
        return { ...row, delivered };
      },
    },
  ];
}

/** Checks an untrusted body and returns the change it describes; throws `AdminInputError` listing every problem. */
export function validateStockChange(input: unknown, feed: Pick<InventoryFeed, 'has'>): StockChange {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new AdminInputError('expected a JSON object { productId, inStock, warehouse? }');
  }
  const body = input as Record<string, unknown>;
  const problems: string[] = [];
  for (const key of Object.keys(body)) if (!KEYS.includes(key)) problems.push(`unknown key "${key}" (known: ${KEYS.join(', ')})`);
  const { productId, inStock, warehouse } = body;
  if (typeof productId !== 'string') problems.push(`productId must be a product id string (got ${JSON.stringify(productId)})`);
  else if (!feed.has(productId)) problems.push(`no product has id ${JSON.stringify(productId)}`);
  if (typeof inStock !== 'number' || !Number.isInteger(inStock) || inStock < 0 || inStock > MAX_IN_STOCK) {
    problems.push(`inStock must be an integer from 0 to ${MAX_IN_STOCK} (got ${JSON.stringify(inStock)})`);
  }
  if (warehouse !== undefined && warehouse !== null && (typeof warehouse !== 'string' || warehouse.trim() === '' || warehouse.length > MAX_WAREHOUSE_LENGTH)) {
    problems.push(`warehouse must be null or a name of 1 to ${MAX_WAREHOUSE_LENGTH} characters (got ${JSON.stringify(warehouse)})`);
  }
  if (problems.length > 0) throw new AdminInputError(`invalid stock change: ${problems.join('; ')}`, problems);
  return { productId: productId as string, inStock: inStock as number, ...(warehouse === undefined ? {} : { warehouse: warehouse as string | null }) };
}
