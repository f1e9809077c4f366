// Argument values that reach real fixture data (and a few that miss it), by coordinate `Type.field.arg`.
import type { KnownValues } from './generate-query.js';

/** Ids are taken from the fixtures in test/fixtures/federation and the demo subgraphs; each list has one id that finds nothing. */
export const KNOWN_VALUES: KnownValues = Object.freeze({
  'Query.keyUser.id': ['u1', 'u2', 'u3', 'u9'],
  'Query.provUser.id': ['r1', 'r2', 'r9'],
  'Query.shrProduct.id': ['s1', 's2', 's9'],
  'Query.ovrProduct.id': ['1', '5'],
  'Query.hidProduct.id': ['h1', 'h2', 'h3', 'h9'],
  'Query.hidProducts.state': ['ACTIVE'],
  'Query.mediaItem.id': ['m1', 'm2', 'm3', 'm9'],
  'Query.book.id': ['m1', 'm2', 'm3'],
  'Query.search.term': ['space', ''],
  'ReqProduct.shippingQuote.zone': ['EU', 'US'],
  'Query.product.id': ['1', '2', '7', 'nope'],
  'Query.products.first': [0, 2, 3],
  'Query.review.id': ['r-1', 'r-2', 'r-40', 'nope'],
});
