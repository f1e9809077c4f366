// Scenarios: the section cache on the demo product page (issue 14: at least 3× the throughput at a 90% hit ratio, no slower at 0%).
import { demoSubgraphsBackend, fastDemoBackend, productPageRequest } from '../backends/demo-subgraphs.js';
import { switchyardVariant } from '../gateways/switchyard.js';
import type { Scenario } from '../lib/types.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export const cacheOff = switchyardVariant({
  name: 'cache-off',
  description: 'section cache off: every part fetched from its subgraph',
  env: { SWITCHYARD_SECTION_CACHE: 'false' },
});

/** The demo hints: catalogue 60 s, reviews 30 s, inventory 5 s, all public. */
export const cacheMemory = switchyardVariant({
  name: 'cache-memory',
  description: 'section cache on, this process only (the demo hints: 60 s, 30 s, 5 s)',
  env: { SWITCHYARD_SECTION_CACHE: 'true' },
});

/** Shared through Redis as a fleet would run it; each run its own key prefix, so no earlier run's parts are read. */
export const cacheRedis = switchyardVariant({
  name: 'cache-redis',
  description: 'section cache on, memory plus Redis (misses read Redis, answers written to it)',
  env: () => ({ SWITCHYARD_SECTION_CACHE: 'true', REDIS_URL, SWITCHYARD_CACHE_REDIS_PREFIX: `switchyard:bench:${process.pid}:${Date.now()}:` }),
});

/** Every look-up misses and every answer is serialised and offered to a store that keeps nothing: the cache's whole cost, none of its gain. */
export const cacheNoHits = switchyardVariant({
  name: 'cache-no-hits',
  description: 'section cache on with SWITCHYARD_CACHE_MAX_BYTES=0: a 0% hit ratio',
  env: { SWITCHYARD_SECTION_CACHE: 'true', SWITCHYARD_CACHE_MAX_BYTES: '0' },
});

/**
 * Product ids cycle over the 1,000-product catalogue, so a part is reused only after 999 other pages: a
 * realistic hit ratio, set by the max ages against the request rate (the subgraph fetches per page say it).
 *
 * Served by the real demo subgraphs (decision 016): a cache is the lever against the load behind the
 * router, and only subgraphs that do real work (yoga, DataLoader) have load to take away. On the fast
 * stand-ins (`--backend fast-demo`) a subgraph call costs the subgraphs almost nothing and the router
 * its fixed ~280 µs, so the figure there is the router's own saving per call, bounded by its fixed
 * cost per request: read it as that, not as the cache's gain.
 */
export const sectionCacheHits: Scenario = {
  name: 'section-cache',
  summary: 'demo product page on the real demo subgraphs, ids over a 1,000-product catalogue: section cache (memory; memory + Redis) vs off',
  backend: demoSubgraphsBackend,
  alternativeBackends: [fastDemoBackend],
  variants: [cacheOff, cacheMemory, cacheRedis],
  request: productPageRequest,
  target: { variant: cacheMemory.name, minRatio: 3, statement: 'the section cache gives at least 3× the throughput at a 90% hit ratio' },
};

export const sectionCacheMisses: Scenario = {
  name: 'section-cache-misses',
  summary: 'demo product page: section cache at a 0% hit ratio vs off',
  backend: fastDemoBackend,
  variants: [cacheOff, cacheNoHits],
  request: productPageRequest,
  target: { variant: cacheNoHits.name, minRatio: 0.95, statement: 'a cache that never hits costs under 5% of throughput' },
};
