// Estimated and actual cost of the demo graph (schema/*.graphql): the product page and a page of 50 products.
import { readFileSync } from 'node:fs';
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { composeSupergraph } from '../../gateway/compose.js';
import { buildGatewaySchema } from '../../gateway/gateway-schema.js';
import { actualTotalCost } from './actual-cost.js';
import { Supergraph } from '../../gateway/supergraph/supergraph.js';
import { estimateCost } from './estimate-cost.js';

const outcome = composeSupergraph(
  ['product', 'reviews', 'inventory'].map((name) => ({
    name,
    url: `http://${name}/graphql`,
    sdl: readFileSync(new URL(`../../../schema/${name}.graphql`, import.meta.url), 'utf8'),
  })),
);
if (!outcome.ok) throw new Error(outcome.errors.map((e) => e.message).join('\n'));
const { schema } = buildGatewaySchema(outcome.supergraphSdl, { executorFor: () => () => ({ data: null }) });
const metadata = Supergraph.fromSdl(outcome.supergraphSdl).cost;

const PRODUCT_PAGE = 'query ProductPage($id: ID!) { product(id: $id) { name price reviews { rating body author } inventory { inStock warehouse } } }';
const CATALOG_PAGE = '{ products(first: 50) { id name reviews { rating } inventory { inStock } } }';

describe('demo graph cost', () => {
  it('reads the demo SDLs’ directives through composition', () => {
    expect(metadata.listSizes.get('Query.products')).toMatchObject({ slicingArguments: ['first'], requireOneSlicingArgument: false });
    expect(metadata.listSizes.get('Product.reviews')).toMatchObject({ assumedSize: 20 });
    expect(metadata.weights.get('Product.inventory')).toBe(5);
  });

  it('estimates the product page', () => {
    // product 1 + name 0 + price 0 + reviews assumedSize 20 × Review 1 + inventory @cost 5 = 26
    expect(estimateCost(schema, metadata, parse(PRODUCT_PAGE), { variables: { id: '2' } })).toEqual({
      total: 26,
      bySubgraph: { product: 1, reviews: 20, inventory: 5 },
      notes: [],
    });
  });

  it('estimates a page of 50 products with reviews and inventory', () => {
    // 50 × (Product 1 + reviews 20 × 1 + inventory 5) = 50 × 26 = 1300
    // product 50 × 1 = 50, reviews 50 × 20 = 1000, inventory 50 × 5 = 250
    expect(estimateCost(schema, metadata, parse(CATALOG_PAGE))).toEqual({
      total: 1300,
      bySubgraph: { product: 50, reviews: 1000, inventory: 250 },
      notes: [],
    });
  });

  it('estimates the demo mutation at the mutation base', () => {
    // addReview 10 + id 0 + rating 0 = 10
    expect(estimateCost(schema, metadata, parse('mutation { addReview(productId: "1", rating: 5, body: "Great") { id rating } }'))).toEqual({
      total: 10,
      bySubgraph: { reviews: 10 },
      notes: [],
    });
  });

  it('measures the product page the README shows', () => {
    const data = {
      product: {
        name: 'Quiet Bamboo Stool',
        price: 6399,
        reviews: [
          { rating: 3, body: 'Does the job. Looks great in the living room.', author: 'Ada' },
          { rating: 3, body: 'Fine for the price. Customer service was helpful.', author: 'Radia' },
        ],
        inventory: { inStock: 39, warehouse: 'Leipzig' },
      },
    };
    // product 1 + 2 reviews × 1 + inventory 5 = 8 (estimated 26: it assumed 20 reviews)
    expect(actualTotalCost(schema, metadata, parse(PRODUCT_PAGE), data, { variables: { id: '2' } })).toBe(8);
  });
});
