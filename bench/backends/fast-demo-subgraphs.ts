// The demo subgraphs' schemas and data (same SDL files, same generated tables) behind the lean server: the product-page backend that stays off the critical path.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { parse, type GraphQLSchema } from 'graphql';
import { PACKAGE_ROOT } from '../../src/config/paths.js';
import { generateInventory } from '../../subgraphs/inventory/index.js';
import { generateProducts } from '../../subgraphs/product/index.js';
import { generateReviews } from '../../subgraphs/reviews/index.js';

export const FAST_DEMO_SUBGRAPH_NAMES = ['product', 'reviews', 'inventory'] as const;
export type FastDemoSubgraphName = (typeof FAST_DEMO_SUBGRAPH_NAMES)[number];

type Resolvers = Record<string, Record<string, (...args: any[]) => unknown>>;
type SubgraphResolvers = Extract<Parameters<typeof buildSubgraphSchema>[0], { typeDefs: unknown }>['resolvers'];

interface ProductReference {
  id: string;
}

/**
 * The same answers as subgraphs/<name>/, without DataLoader: a lookup in an in-memory Map needs no
 * batching, and the router's entity calls arrive already batched. `__resolveReference` hands out copies
 * because @apollo/subgraph tags the returned object with `__typename`, which throws on a frozen row.
 */
function resolversFor(name: FastDemoSubgraphName): Resolvers {
  switch (name) {
    case 'product': {
      const products = generateProducts();
      return {
        Query: {
          product: (_: unknown, args: { id: string }) => products.get(args.id) ?? null,
          products: (_: unknown, args: { first?: number | null }) => [...products.values()].slice(0, Math.max(0, args.first ?? 10)),
        },
        Product: {
          __resolveReference: (reference: ProductReference) => {
            const row = products.get(reference.id);
            return row ? { ...row } : null;
          },
        },
      };
    }
    case 'reviews': {
      const tables = generateReviews();
      return {
        Query: {
          review: (_: unknown, args: { id: string }) => tables.byId.get(args.id) ?? null,
        },
        Product: {
          __resolveReference: (reference: ProductReference) => ({ id: reference.id }),
          reviews: (product: ProductReference) => tables.byProductId.get(product.id) ?? null,
        },
        Review: {
          __resolveReference: (reference: { id: string }) => {
            const row = tables.byId.get(reference.id);
            return row ? { ...row } : null;
          },
          product: (review: { productId: string }) => ({ id: review.productId }),
        },
      };
    }
    case 'inventory': {
      const inventory = generateInventory();
      return {
        Product: {
          __resolveReference: (reference: ProductReference) => ({ id: reference.id }),
          inventory: (product: ProductReference) => inventory.get(product.id) ?? null,
        },
      };
    }
  }
}

export function readDemoSdl(name: FastDemoSubgraphName): string {
  return readFileSync(path.join(PACKAGE_ROOT, 'schema', `${name}.graphql`), 'utf8');
}

export function fastDemoSchema(name: FastDemoSubgraphName): GraphQLSchema {
  return buildSubgraphSchema({ typeDefs: parse(readDemoSdl(name)), resolvers: resolversFor(name) as SubgraphResolvers });
}
