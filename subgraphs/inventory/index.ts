// The inventory demo subgraph's public entry.
export { createInventorySubgraph, type InventoryContext } from './create-inventory-subgraph.js';
export { generateInventory, MAX_IN_STOCK, type InventoryRow } from './inventory-data.js';
