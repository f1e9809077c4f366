// The one fact the demo subgraphs share: which product ids exist ("1".."1000").

/** Number of products in the demo catalogue; ids are "1".."PRODUCT_COUNT". */
export const PRODUCT_COUNT = 1000;

/** The catalogue's product ids in order. Each subgraph derives its own data from these ids alone. */
export function productIds(count: number = PRODUCT_COUNT): string[] {
  return Array.from({ length: count }, (_, i) => String(i + 1));
}
