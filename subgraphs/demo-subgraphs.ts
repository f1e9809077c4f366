// The three demo subgraphs by name, for the CLI (`switchyard demo`, `subgraph serve <name>`) and tests.
import { createInventorySubgraph } from './inventory/index.js';
import type { DemoSubgraph, SubgraphOptions } from './kit/index.js';
import { createProductSubgraph } from './product/index.js';
import { createReviewsSubgraph } from './reviews/index.js';
import type { DemoSubgraphName } from './demo-names.js';

export { DEMO_SUBGRAPH_NAMES, isDemoSubgraphName, type DemoSubgraphName } from './demo-names.js';

export const demoSubgraphs = Object.freeze({
  product: createProductSubgraph,
  reviews: createReviewsSubgraph,
  inventory: createInventorySubgraph,
} satisfies Record<DemoSubgraphName, (options?: SubgraphOptions) => DemoSubgraph>);
