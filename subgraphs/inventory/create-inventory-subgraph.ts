// The inventory subgraph: adds Product.inventory (a value type it owns), batched through DataLoader, and streams stock changes.
import DataLoader from 'dataloader';
import { createGraphQLError } from 'graphql-yoga';
import { createDemoSubgraph, createTableSource, type DemoSubgraph, type ResolverMap, type SubgraphOptions } from '../kit/index.js';
import { inventoryAdminRoutes } from './inventory-admin.js';
import { generateInventory, type InventoryRow } from './inventory-data.js';
import { createInventoryFeed, tickMsFrom, type InventoryFeed } from './inventory-feed.js';

export interface InventorySubgraphOptions extends SubgraphOptions {
  /**
   * Mean ms between two moves of a watched product's stock (each wait uniform in 0.5..1.5 × tickMs); 0 turns
   * the moves off, so only `POST /admin/inventory` changes stock (tests). Wins over `INVENTORY_TICK_MS`. Default 1000.
   */
  tickMs?: number;
}

/** Per request: a fresh loader, so no cached row outlives the request that loaded it; the feed is the subgraph's one live stock. */
export interface InventoryContext {
  loaders: { inventoryByProductId: DataLoader<string, InventoryRow | null> };
  feed: InventoryFeed;
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
  Inventory: {
    // The reference the router completes with the product's fields from the subgraphs that own them.
    product: function resolveInventoryProduct(row: InventoryRow): ProductReference {
      return { id: row.productId };
    },
  },
  Subscription: {
    inventoryChanged: {
      subscribe: function subscribeInventoryChanged(_: unknown, args: { productId?: string | null }, context: InventoryContext) {
        const productId = args.productId ?? undefined;
        if (productId !== undefined && !context.feed.has(productId)) {
          throw createGraphQLError(`no product has id "${productId}"`, { extensions: { code: 'BAD_USER_INPUT' } });
        }
        return context.feed.watch(productId);
      },
      resolve: (row: InventoryRow) => row,
    },
  },
};

export function createInventorySubgraph(options: InventorySubgraphOptions = {}): DemoSubgraph {
  // Validated before anything else starts, so a bad knob fails at creation like the fault settings do.
  const tickMs = tickMsFrom(options.tickMs, options.env ?? process.env);
  return createDemoSubgraph<InventoryContext>(
    {
      name: 'inventory',
      defaultPort: 4003,
      setup(stats) {
        // One mutable table: stock changes land in it, so the loader below and later queries see them.
        const table = generateInventory();
        const inventoryByProductId = createTableSource('inventoryByProductId', table, stats);
        const feed = createInventoryFeed(table, { tickMs });
        return {
          resolvers,
          createContext: () => ({ loaders: { inventoryByProductId: new DataLoader(inventoryByProductId) }, feed }),
          adminRoutes: inventoryAdminRoutes(feed),
        };
      },
    },
    options,
  );
}
