// The reviews subgraph's tables: 0-20 reviews per catalogue product, generated from the product id alone.
import { intBetween, pick, productIds, randomFor } from '../kit/index.js';

export interface ReviewRow {
  /** `r-<n>`, numbered through the catalogue in product id order. */
  readonly id: string;
  readonly productId: string;
  readonly body: string;
  /** 1 to 5. */
  readonly rating: number;
  /** Null when the reviewer stayed anonymous. */
  readonly author: string | null;
}

export interface ReviewTables {
  readonly byId: ReadonlyMap<string, ReviewRow>;
  /** Every catalogue product has an entry, possibly empty. */
  readonly byProductId: ReadonlyMap<string, readonly ReviewRow[]>;
}

export const MAX_REVIEWS_PER_PRODUCT = 20;

const AUTHORS = ['Ada', 'Grace', 'Linus', 'Margaret', 'Dennis', 'Barbara', 'Ken', 'Radia', 'Edsger', 'Frances', 'Alan', 'Katherine'];
const OPENINGS: Readonly<Record<number, readonly string[]>> = {
  1: ['Broke within a week.', 'Not as described.', 'Would not buy again.'],
  2: ['Disappointing overall.', 'Works, barely.', 'Cheaply made.'],
  3: ['Does the job.', 'Average, nothing special.', 'Fine for the price.'],
  4: ['Very good.', 'Solid purchase.', 'Happy with it.'],
  5: ['Excellent!', 'Exceeded my expectations.', 'Best thing I bought this year.'],
};
const DETAILS = ['Delivery was quick.', 'The packaging was wasteful.', 'My kids love it.', 'Looks great in the living room.', 'Instructions were unclear.', 'Customer service was helpful.'];

/** Anonymous reviews: about one in seven. */
const ANONYMOUS_SHARE = 0.15;

/**
 * Same catalogue, same reviews, in every process. Review numbers run through products in id
 * order, so they are stable as long as the catalogue is; each product's reviews come from a
 * generator seeded by the product id.
 */
export function generateReviews(ids: readonly string[] = productIds()): ReviewTables {
  const byId = new Map<string, ReviewRow>();
  const byProductId = new Map<string, readonly ReviewRow[]>();
  let number = 0;
  for (const productId of ids) {
    const random = randomFor('reviews', productId);
    const reviews: ReviewRow[] = [];
    const count = intBetween(random, 0, MAX_REVIEWS_PER_PRODUCT);
    for (let i = 0; i < count; i++) {
      number += 1;
      const rating = intBetween(random, 1, 5);
      const body = `${pick(random, OPENINGS[rating])} ${pick(random, DETAILS)}`;
      const author = random() < ANONYMOUS_SHARE ? null : pick(random, AUTHORS);
      const review = Object.freeze({ id: `r-${number}`, productId, body, rating, author });
      reviews.push(review);
      byId.set(review.id, review);
    }
    byProductId.set(productId, Object.freeze(reviews));
  }
  return { byId, byProductId };
}

/**
 * Adds a review (the demo's one write): numbered after every existing review, kept in memory for
 * the life of this subgraph instance. The caller has validated the input and the product id.
 */
export function appendReview(tables: ReviewTables, input: { productId: string; rating: number; body: string; author: string | null }): ReviewRow {
  const byId = tables.byId as Map<string, ReviewRow>;
  const byProductId = tables.byProductId as Map<string, readonly ReviewRow[]>;
  const review: ReviewRow = Object.freeze({ id: `r-${byId.size + 1}`, ...input });
  byId.set(review.id, review);
  byProductId.set(input.productId, Object.freeze([...(byProductId.get(input.productId) ?? []), review]));
  return review;
}
