// Scenario: the tail latency of product pages while ten publishes swap the graph, with and without warm plans (issue 16, decision 009).
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fastDemoBackend, productIdFor } from '../backends/demo-subgraphs.js';
import { switchyardRegistryVariant } from '../gateways/switchyard.js';
import type { GraphQLRequestBody, MeasuredRun, Scenario } from '../lib/types.js';
import { openDatabase } from '../../src/registry/open-database.js';
import { publishSubgraph } from '../../src/registry/subgraph-store.js';
import { compositionCheck } from '../../src/cli/registry-commands.js';

/** Publishes per measured window. */
const PUBLISHES = 10;
/** Longest wait, in ms, for a router to serve a publish before the next one is sent anyway. */
const SWAP_TIMEOUT_MS = 5_000;

/**
 * Product pages as the builds of several apps ask for them: the same page with other selections, so a
 * router plans tens of documents after each swap, as it would in production (one document would make
 * warming a single plan). 48 documents: every combination of the optional parts below but the last 16.
 */
const OPTIONAL_PARTS = ['price', 'reviews { id rating }', 'reviews { body author }', 'inventory { inStock }', 'inventory { warehouse }', '__typename'];
const DOCUMENTS = Array.from({ length: 48 }, (_, k) => {
  const parts = OPTIONAL_PARTS.filter((_part, bit) => (k >> bit) & 1);
  return `query ProductPage${k}($id: ID!) { product(id: $id) { id name ${parts.join(' ')} } }`;
});

function productPages(n: number): GraphQLRequestBody {
  const k = n % DOCUMENTS.length;
  return { query: DOCUMENTS[k]!, operationName: `ProductPage${k}`, variables: { id: productIdFor(n) } };
}

/** Each publish moves the reviews subgraph's timeout by 1 ms: a new graph to build and swap in, nothing else changed. */
let published = 0;

async function schemaVersion(url: string): Promise<number> {
  const text = await (await fetch(url.replace(/\/graphql$/, '/metrics'))).text();
  const match = /^switchyard_schema_version (\S+)$/m.exec(text);
  return match ? Number(match[1]) : NaN;
}

/**
 * Ten publishes spread over the measured window, through the variant's own registry (its embedded
 * database's socket, as `switchyard subgraph publish` reaches it): each waits until the router serves
 * it, so every publish is a swap under load.
 */
async function publishTenTimes(run: MeasuredRun): Promise<string> {
  const reviews = run.backend.subgraphs?.find((subgraph) => subgraph.name === 'reviews');
  if (!reviews) throw new Error('publish-warmup: the backend lists no reviews subgraph');
  const db = await openDatabase({ dataDir: path.join(run.workDir, `${run.variant}-data`), maxConnections: 1 });
  const started = Date.now();
  const interval = run.durationMs / (PUBLISHES + 1);
  let swaps = 0;
  let inside = 0;
  try {
    for (let i = 1; i <= PUBLISHES; i++) {
      const wait = started + i * interval - Date.now();
      if (wait > 0) await delay(wait);
      const before = await schemaVersion(run.url);
      published += 1;
      await publishSubgraph(db, { name: reviews.name, url: reviews.url, sdl: reviews.sdl, route: { timeoutMs: 5_000 + published } }, compositionCheck);
      const deadline = Date.now() + SWAP_TIMEOUT_MS;
      while (Date.now() < deadline) {
        if ((await schemaVersion(run.url)) > before) {
          swaps += 1;
          if (Date.now() - started <= run.durationMs) inside += 1;
          break;
        }
        await delay(20);
      }
    }
  } finally {
    await db.close();
  }
  // Fewer swaps inside the window than the other variant's makes its p99 look better than it is.
  return `${run.variant}: ${PUBLISHES} publishes, ${swaps} served, ${inside} of them inside the ${run.durationMs / 1000} s window (all done after ${((Date.now() - started) / 1000).toFixed(1)} s)`;
}

export const warmOff = switchyardRegistryVariant({
  name: 'warm-off',
  description: 'registry mode; SWITCHYARD_WARM_OPERATIONS=0: each document is planned by its first request after a swap',
  env: { SWITCHYARD_WARM_OPERATIONS: '0' },
});

export const warmOn = switchyardRegistryVariant({
  name: 'warm-on',
  description: 'registry mode; SWITCHYARD_WARM_OPERATIONS=500 (the default): the top documents of the last day planned before each swap',
  env: { SWITCHYARD_WARM_OPERATIONS: '500' },
});

/** Read the p99 columns: throughput barely moves, the tail during swaps is what warming is for. */
export const publishWarmup: Scenario = {
  name: 'publish-warmup',
  summary: 'p99 of 48 product-page documents (3 subgraphs) while 10 publishes swap the graph, registry mode: warm plans off vs on',
  backend: fastDemoBackend,
  variants: [warmOff, warmOn],
  request: productPages,
  whileMeasured: publishTenTimes,
  // Ten swaps, each waited for, must land inside the window for both variants: a warmed swap takes
  // longer to land (it plans 48 documents first, yielding to requests in between).
  minDurationMs: 12_000,
};
