// The inventory subgraph: adds Product.inventory (a value type it owns), batched through DataLoader.
import DataLoader from 'dataloader';
import { createDemoSubgraph, createTableSource, type DemoSubgraph, type ResolverMap, type SubgraphOptions } from '../kit/index.js';
import { generateInventory, type InventoryRow } from './inventory-data.js';

/** Per request: a fresh loader, so no cached row outlives the request that loaded it. */
export interface InventoryContext {
  loaders: { inventoryByProductId: DataLoader<string, InventoryRow | null> };
}

/** What this subgraph knows of a product: its key. */
interface ProductReference {
  id: string;
}

const resolvers: ResolverMap = {
  Product: {
    // Only the key is needed to resolve a Product here; its inventory loads (batched) only when asked for.
    __resolveReference: function resolveProductReference(reference: ProductReference): ProductReference {
      return { id: reference.id };
    },
    inventory: function resolveProductInventory(product: ProductReference, _: unknown, context: InventoryContext) {
      return context.loaders.inventoryByProductId.load(product.id);
    },
  },
};

export function createInventorySubgraph(options: SubgraphOptions = {}): DemoSubgraph {
  return createDemoSubgraph<InventoryContext>(
    {
      name: 'inventory',
      defaultPort: 4003,
      setup(stats) {
        const inventoryByProductId = createTableSource('inventoryByProductId', generateInventory(), stats);
        return { resolvers, createContext: () => ({ loaders: { inventoryByProductId: new DataLoader(inventoryByProductId) } }) };
      },
    },
    options,
  );
}
