// The reviews subgraph over HTTP: federation SDL, batched Product.reviews, Review entities, deterministic data.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServerPool, postGraphql, productRepresentations, readStats } from '../kit/test-client.js';
import type { RunningSubgraph } from '../kit/index.js';
import { createReviewsSubgraph, generateReviews, MAX_REVIEWS_PER_PRODUCT } from './index.js';

const PRODUCT_REVIEWS = /* GraphQL */ `query ($representations: [_Any!]!) {
  _entities(representations: $representations) { ... on Product { id reviews { id body rating author product { id } } } }
}`;

const pool = createServerPool();
let running: RunningSubgraph;
let other: RunningSubgraph;
beforeAll(async () => {
  running = await pool.start(createReviewsSubgraph({ env: {} }));
  other = await pool.start(createReviewsSubgraph({ env: {} }));
});
afterAll(() => pool.closeAll());

async function resetStats(server: RunningSubgraph): Promise<void> {
  await fetch(server.url.replace(/\/graphql$/, '/admin/stats/reset'), { method: 'POST' });
}

describe('reviews subgraph', () => {
  it('publishes its Federation v2 SDL through _service', async () => {
    const sdl: string = (await postGraphql(running.url, '{ _service { sdl } }')).body.data._service.sdl;
    expect(sdl).toMatch(/type Product\s+@key\(fields: "id"\)/);
    expect(sdl).toMatch(/type Review\s+@key\(fields: "id"\)/);
    expect(sdl).toContain('reviews: [Review!]');
  });

  it('resolves reviews of 50 products with one data-source call', async () => {
    await resetStats(running);
    const answer = await postGraphql(running.url, PRODUCT_REVIEWS, { representations: productRepresentations(50) });
    expect(answer.body.errors).toBeUndefined();
    expect(answer.body.data._entities).toHaveLength(50);
    const stats = await readStats(running);
    expect(stats.dataSourceCalls).toEqual({ reviewsByProductId: 1, reviewsById: 0 });
    expect(stats.entityRequests).toBe(1);
  });

  it('gives every product 0-20 reviews with ids r-<n>, ratings 1-5 and sometimes no author', async () => {
    const answer = await postGraphql(running.url, PRODUCT_REVIEWS, { representations: productRepresentations(1000) });
    const products: { id: string; reviews: { id: string; rating: number; author: string | null; product: { id: string } }[] }[] =
      answer.body.data._entities;
    const counts = products.map((product) => product.reviews.length);
    expect(Math.min(...counts)).toBe(0);
    expect(Math.max(...counts)).toBe(MAX_REVIEWS_PER_PRODUCT);
    const reviews = products.flatMap((product) => product.reviews.map((review) => ({ ...review, owner: product.id })));
    expect(reviews[0].id).toBe('r-1');
    expect(reviews.every((review) => /^r-\d+$/.test(review.id) && review.product.id === review.owner)).toBe(true);
    expect(reviews.every((review) => review.rating >= 1 && review.rating <= 5)).toBe(true);
    expect(reviews.some((review) => review.author === null)).toBe(true);
    expect(reviews.some((review) => review.author !== null)).toBe(true);
  });

  it('answers null reviews for an unknown product', async () => {
    const answer = await postGraphql(running.url, PRODUCT_REVIEWS, { representations: [{ __typename: 'Product', id: '0' }] });
    expect(answer.body.data._entities).toEqual([{ id: '0', reviews: null }]);
  });

  it('resolves Review entities and Query.review through the reviewsById loader', async () => {
    await resetStats(running);
    const answer = await postGraphql(
      running.url,
      /* GraphQL */ `query ($representations: [_Any!]!) {
        _entities(representations: $representations) { ... on Review { id rating product { id } } }
        review(id: "r-1") { id product { id } }
      }`,
      { representations: [{ __typename: 'Review', id: 'r-1' }, { __typename: 'Review', id: 'r-2' }, { __typename: 'Review', id: 'r-0' }] },
    );
    expect(answer.body.errors).toBeUndefined();
    expect(answer.body.data._entities.map((review: { id: string } | null) => review?.id ?? null)).toEqual(['r-1', 'r-2', null]);
    expect(answer.body.data.review).toEqual({ id: 'r-1', product: { id: '1' } });
    expect((await readStats(running)).dataSourceCalls.reviewsById).toBe(1);
  });

  it('serves identical data from separate instances', async () => {
    const variables = { representations: productRepresentations(1000) };
    const [a, b] = await Promise.all([postGraphql(running.url, PRODUCT_REVIEWS, variables), postGraphql(other.url, PRODUCT_REVIEWS, variables)]);
    expect(b.body).toEqual(a.body);
  });

  it('pins known rows, so that changing the generated data is a deliberate act', () => {
    const tables = generateReviews();
    expect(tables.byId.size).toBe(9945);
    expect(tables.byProductId.get('1')).toHaveLength(7);
    expect(tables.byId.get('r-1')).toEqual({ id: 'r-1', productId: '1', body: 'Not as described. Delivery was quick.', rating: 1, author: 'Alan' });
  });
});

describe('reviews subgraph: adding a review', () => {
  it('stores a valid review, which then appears under its product', async () => {
    const subgraph = createReviewsSubgraph({ env: {} });
    const running = await subgraph.listen(0);
    try {
      const before = await postGraphql(running.url, '{ _entities(representations: [{ __typename: "Product", id: "2" }]) { ... on Product { reviews { id } } } }');
      const count = before.body.data?._entities[0].reviews.length;
      const added = await postGraphql(running.url, 'mutation { addReview(productId: "2", rating: 5, body: " Great stool ", author: "Ada") { id rating body author } }');
      expect(added.body.errors).toBeUndefined();
      expect(added.body.data?.addReview).toMatchObject({ rating: 5, body: 'Great stool', author: 'Ada' });
      const after = await postGraphql(running.url, '{ _entities(representations: [{ __typename: "Product", id: "2" }]) { ... on Product { reviews { id } } } }');
      expect(after.body.data?._entities[0].reviews).toHaveLength(count + 1);
      expect(after.body.data?._entities[0].reviews.at(-1).id).toBe(added.body.data?.addReview.id);
    } finally {
      await running.close();
    }
  });

  it.each([
    ['a rating out of range', 'mutation { addReview(productId: "2", rating: 6, body: "x") { id } }', /rating must be 1 to 5/],
    ['an empty body', 'mutation { addReview(productId: "2", rating: 3, body: "  ") { id } }', /body must be/],
    ['an unknown product', 'mutation { addReview(productId: "nope", rating: 3, body: "x") { id } }', /no product has id "nope"/],
  ])('refuses %s with BAD_USER_INPUT', async (_, mutation, message) => {
    const running = await createReviewsSubgraph({ env: {} }).listen(0);
    try {
      const answer = await postGraphql(running.url, mutation);
      expect(answer.body.errors?.[0].message).toMatch(message);
      expect(answer.body.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
    } finally {
      await running.close();
    }
  });
});
