// The three demo subgraphs by name, for the CLI (`switchyard demo`, `subgraph serve <name>`) and tests.
import { createInventorySubgraph } from './inventory/index.js';
import type { DemoSubgraph, SubgraphOptions } from './kit/index.js';
import { createProductSubgraph } from './product/index.js';
import { createReviewsSubgraph } from './reviews/index.js';

export const demoSubgraphs = Object.freeze({
  product: createProductSubgraph,
  reviews: createReviewsSubgraph,
  inventory: createInventorySubgraph,
} satisfies Record<string, (options?: SubgraphOptions) => DemoSubgraph>);

export type DemoSubgraphName = keyof typeof demoSubgraphs;

/** In start order: product first, as it owns the root queries. */
export const DEMO_SUBGRAPH_NAMES: readonly DemoSubgraphName[] = Object.freeze(['product', 'reviews', 'inventory']);

export function isDemoSubgraphName(name: string): name is DemoSubgraphName {
  return Object.hasOwn(demoSubgraphs, name);
}
