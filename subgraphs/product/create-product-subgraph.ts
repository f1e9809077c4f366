// The product subgraph: owns Product (name, price) and the catalogue queries, batched through DataLoader.
import DataLoader from 'dataloader';
// yoga's helper rather than graphql's GraphQLError: under vitest our source may get graphql's ESM copy
// while yoga runs on the CommonJS one, and yoga would mask an error that fails its instanceof check.
import { createGraphQLError } from 'graphql-yoga';
import { createDemoSubgraph, createTableSource, PRODUCT_COUNT, productIds, type DemoSubgraph, type ResolverMap, type SubgraphOptions } from '../kit/index.js';
import { generateProducts, type ProductRow } from './product-data.js';

/** Per request: a fresh loader, so no cached row outlives the request that loaded it. */
export interface ProductContext {
  loaders: { productsById: DataLoader<string, ProductRow | null> };
}

/** `products(first:)` when the argument is omitted or null, as in the SDL. */
const DEFAULT_PAGE = 10;

const resolvers: ResolverMap = {
  Query: {
    product: function resolveProduct(_: unknown, args: { id: string }, context: ProductContext) {
      return context.loaders.productsById.load(args.id);
    },
    products: async function resolveProducts(_: unknown, args: { first?: number | null }, context: ProductContext) {
      const first = args.first ?? DEFAULT_PAGE;
      if (first < 0) throw createGraphQLError(`first must not be negative (got ${first})`, { extensions: { code: 'BAD_USER_INPUT' } });
      const rows = await context.loaders.productsById.loadMany(productIds(Math.min(first, PRODUCT_COUNT)));
      return rows.filter((row): row is ProductRow => row !== null && !(row instanceof Error));
    },
  },
  Product: {
    // @apollo/subgraph tags the returned object with `__typename` through Object.defineProperty,
    // which throws on a frozen table row: hand it a copy.
    __resolveReference: async function resolveProductReference(reference: { id: string }, context: ProductContext) {
      const row = await context.loaders.productsById.load(reference.id);
      return row && { ...row };
    },
  },
};

export function createProductSubgraph(options: SubgraphOptions = {}): DemoSubgraph {
  return createDemoSubgraph<ProductContext>(
    {
      name: 'product',
      defaultPort: 4001,
      setup(stats) {
        const productsById = createTableSource('productsById', generateProducts(), stats);
        return { resolvers, createContext: () => ({ loaders: { productsById: new DataLoader(productsById) } }) };
      },
    },
    options,
  );
}
