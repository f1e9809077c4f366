// The reviews subgraph: owns Review and adds Product.reviews, batched through DataLoader.
import DataLoader from 'dataloader';
import { createDemoSubgraph, createTableSource, type DemoSubgraph, type ResolverMap, type SubgraphOptions } from '../kit/index.js';
import { createGraphQLError } from 'graphql-yoga';
import { appendReview, generateReviews, type ReviewRow } from './review-data.js';

/** Per request: fresh loaders, so no cached row outlives the request that loaded it. */
export interface ReviewsContext {
  loaders: {
    reviewsByProductId: DataLoader<string, readonly ReviewRow[] | null>;
    reviewsById: DataLoader<string, ReviewRow | null>;
  };
  /** Stores a new review (validated) and returns it. */
  addReview(input: { productId: string; rating: number; body: string; author: string | null }): ReviewRow;
}

interface AddReviewArgs {
  productId: string;
  rating: number;
  body: string;
  author?: string | null;
}

function badInput(message: string) {
  return createGraphQLError(message, { extensions: { code: 'BAD_USER_INPUT' } });
}

/** What this subgraph knows of a product: its key. */
interface ProductReference {
  id: string;
}

const resolvers: ResolverMap = {
  Query: {
    review: function resolveReview(_: unknown, args: { id: string }, context: ReviewsContext) {
      return context.loaders.reviewsById.load(args.id);
    },
  },
  Mutation: {
    addReview: function resolveAddReview(_: unknown, args: AddReviewArgs, context: ReviewsContext) {
      if (!Number.isInteger(args.rating) || args.rating < 1 || args.rating > 5) throw badInput(`rating must be 1 to 5 (got ${args.rating})`);
      const body = args.body.trim();
      if (body.length === 0 || body.length > 2000) throw badInput('body must be 1 to 2000 characters');
      return context.addReview({ productId: args.productId, rating: args.rating, body, author: args.author?.trim() || null });
    },
  },
  Product: {
    // Only the key is needed to resolve a Product here; its reviews load (batched) only when asked for.
    __resolveReference: function resolveProductReference(reference: ProductReference): ProductReference {
      return { id: reference.id };
    },
    reviews: function resolveProductReviews(product: ProductReference, _: unknown, context: ReviewsContext) {
      return context.loaders.reviewsByProductId.load(product.id);
    },
  },
  Review: {
    // A copy: @apollo/subgraph tags it with `__typename` through Object.defineProperty, which throws on a frozen row.
    __resolveReference: async function resolveReviewReference(reference: { id: string }, context: ReviewsContext) {
      const row = await context.loaders.reviewsById.load(reference.id);
      return row && { ...row };
    },
    product: function resolveReviewProduct(review: ReviewRow): ProductReference {
      return { id: review.productId };
    },
  },
};

export function createReviewsSubgraph(options: SubgraphOptions = {}): DemoSubgraph {
  return createDemoSubgraph<ReviewsContext>(
    {
      name: 'reviews',
      defaultPort: 4002,
      setup(stats) {
        const tables = generateReviews();
        const reviewsByProductId = createTableSource('reviewsByProductId', tables.byProductId, stats);
        const reviewsById = createTableSource('reviewsById', tables.byId, stats);
        return {
          resolvers,
          createContext: () => ({
            loaders: { reviewsByProductId: new DataLoader(reviewsByProductId), reviewsById: new DataLoader(reviewsById) },
            addReview(input) {
              if (!tables.byProductId.has(input.productId)) throw badInput(`no product has id "${input.productId}"`);
              return appendReview(tables, input);
            },
          }),
        };
      },
    },
    options,
  );
}
