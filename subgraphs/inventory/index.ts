// The inventory demo subgraph's public entry.
export { createInventorySubgraph, type InventoryContext, type InventorySubgraphOptions } from './create-inventory-subgraph.js';
export { inventoryAdminRoutes, validateStockChange } from './inventory-admin.js';
export { generateInventory, MAX_IN_STOCK, type InventoryRow } from './inventory-data.js';
export {
  ALL_PRODUCTS_TICKING,
  createInventoryFeed,
  DEFAULT_TICK_MS,
  MAX_TICK_MS,
  TICK_ENV_VAR,
  tickMsFrom,
  type InventoryFeed,
  type InventoryFeedOptions,
  type StockChange,
} from './inventory-feed.js';
