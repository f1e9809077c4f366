// The public federation benchmark's four subgraphs (bench/workloads/federation-benchmark/) as executable schemas over in-memory data, for the lean server.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { parse, type GraphQLSchema } from 'graphql';
import { PACKAGE_ROOT } from '../../src/config/paths.js';

export const FEDERATION_BENCHMARK_SUBGRAPH_NAMES = ['accounts', 'products', 'inventory', 'reviews'] as const;
export type FederationBenchmarkSubgraphName = (typeof FEDERATION_BENCHMARK_SUBGRAPH_NAMES)[number];

/** The workload's files: SDL per subgraph, queries, data. */
export const WORKLOAD_DIR = path.join(PACKAGE_ROOT, 'bench', 'workloads', 'federation-benchmark');

interface User {
  id: string;
  name: string;
  username: string;
  birthday: number;
}
interface Product {
  upc: string;
  name: string;
  price: number;
  weight: number;
}
interface Review {
  id: string;
  body: string;
  productUpc: string;
}
interface WorkloadData {
  users: User[];
  products: Product[];
  inventory: { upc: string; inStock: boolean }[];
  reviews: Review[];
}

type Resolvers = Record<string, Record<string, (...args: any[]) => unknown>>;
type SubgraphResolvers = Extract<Parameters<typeof buildSubgraphSchema>[0], { typeDefs: unknown }>['resolvers'];

export function readWorkloadSdl(name: FederationBenchmarkSubgraphName): string {
  return readFileSync(path.join(WORKLOAD_DIR, 'subgraphs', `${name}.graphql`), 'utf8');
}

/** A query of the workload by file name (`heavy`, `hello`, `product`), as the client sends it. */
export function readWorkloadQuery(name: string): string {
  return readFileSync(path.join(WORKLOAD_DIR, 'queries', `${name}.graphql`), 'utf8');
}

function readData(): WorkloadData {
  return JSON.parse(readFileSync(path.join(WORKLOAD_DIR, 'data.json'), 'utf8')) as WorkloadData;
}

const byKey = <T, K extends keyof T>(rows: readonly T[], key: K) => new Map(rows.map((row) => [row[key], row]));

/** `@requires(fields: "price weight")`: free shipping above 1000, else half the weight (upstream returns null). */
function shippingEstimate(product: { price?: number | null; weight?: number | null }): number | null {
  if (product.price == null || product.weight == null) return null;
  return product.price > 1000 ? 0 : Math.round(product.weight / 2);
}

/**
 * Every lookup is a Map read: no batching, no I/O. Entity resolvers hand out copies because
 * @apollo/subgraph tags the returned object with `__typename`; the shared rows stay untouched.
 * The upstream quirks are kept (see the workload's README): a review's author is user 1, and
 * `User.reviews` is reviews 1 and 2 for every user.
 */
function resolversFor(name: FederationBenchmarkSubgraphName, data: WorkloadData): Resolvers {
  switch (name) {
    case 'accounts': {
      const users = byKey(data.users, 'id');
      return {
        Query: {
          me: () => ({ ...data.users[0] }),
          user: (_: unknown, args: { id: string }) => users.get(args.id) ?? null,
          users: () => data.users,
          hello: () => 'Hello, world!',
        },
        User: {
          __resolveReference: (reference: { id: string }) => {
            const row = users.get(reference.id);
            return row ? { ...row } : null;
          },
        },
      };
    }
    case 'products': {
      const products = byKey(data.products, 'upc');
      return {
        Query: {
          topProducts: (_: unknown, args: { first?: number | null }) => data.products.slice(0, Math.max(0, args.first ?? 5)),
        },
        Product: {
          __resolveReference: (reference: { upc: string }) => {
            const row = products.get(reference.upc);
            return row ? { ...row } : null;
          },
        },
      };
    }
    case 'inventory': {
      const inventory = byKey(data.inventory, 'upc');
      return {
        Product: {
          // The representation carries price and weight when shippingEstimate is selected (@requires).
          __resolveReference: (reference: { upc: string; price?: number; weight?: number }) => ({
            upc: reference.upc,
            price: reference.price,
            weight: reference.weight,
            inStock: inventory.get(reference.upc)?.inStock ?? null,
          }),
          shippingEstimate,
        },
      };
    }
    case 'reviews': {
      const reviews = byKey(data.reviews, 'id');
      const usernames = new Map(data.users.map((user) => [user.id, user.username]));
      const reviewsByProduct = new Map<string, Review[]>();
      for (const review of data.reviews) reviewsByProduct.set(review.productUpc, [...(reviewsByProduct.get(review.productUpc) ?? []), review]);
      const everyUsersReviews = data.reviews.filter((review) => review.id === '1' || review.id === '2');
      const author = { id: data.users[0].id, username: data.users[0].username };
      return {
        Review: {
          __resolveReference: (reference: { id: string }) => {
            const row = reviews.get(reference.id);
            return row ? { ...row } : null;
          },
          product: (review: Review) => ({ upc: review.productUpc }),
          // @provides(fields: "username"): the author's username is answered here, not by accounts.
          author: () => ({ ...author }),
        },
        User: {
          __resolveReference: (reference: { id: string }) => ({ id: reference.id, username: usernames.get(reference.id) ?? null }),
          reviews: () => everyUsersReviews,
        },
        Product: {
          __resolveReference: (reference: { upc: string }) => ({ upc: reference.upc }),
          reviews: (product: { upc: string }) => reviewsByProduct.get(product.upc) ?? [],
        },
      };
    }
  }
}

/** Reads the data once per call: the main entry builds the four schemas once at start. */
export function federationBenchmarkSchema(name: FederationBenchmarkSubgraphName): GraphQLSchema {
  return buildSubgraphSchema({ typeDefs: parse(readWorkloadSdl(name)), resolvers: resolversFor(name, readData()) as SubgraphResolvers });
}
