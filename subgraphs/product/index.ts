// The product demo subgraph's public entry.
export { createProductSubgraph, type ProductContext } from './create-product-subgraph.js';
export { generateProducts, type ProductRow } from './product-data.js';
