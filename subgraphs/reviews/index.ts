// The reviews demo subgraph's public entry.
export { createReviewsSubgraph, type ReviewsContext } from './create-reviews-subgraph.js';
export { generateReviews, MAX_REVIEWS_PER_PRODUCT, type ReviewRow, type ReviewTables } from './review-data.js';
