// The demo subgraphs' names, without loading them: the CLI builds its help from these on every start.

export type DemoSubgraphName = 'product' | 'reviews' | 'inventory';

/** In start order: product first, as it owns the root queries. */
export const DEMO_SUBGRAPH_NAMES: readonly DemoSubgraphName[] = Object.freeze(['product', 'reviews', 'inventory']);

export function isDemoSubgraphName(name: string): name is DemoSubgraphName {
  return (DEMO_SUBGRAPH_NAMES as readonly string[]).includes(name);
}
