// The public federation benchmark's subgraphs (accounts, products, inventory, reviews) as a benchmark backend, on the lean server.
import { fastSubgraphsBackend } from './fast-subgraphs-backend.js';
import { FEDERATION_BENCHMARK_SUBGRAPH_NAMES, readWorkloadSdl } from './federation-benchmark-subgraphs.js';

/** The line prefix its process prints before the subgraph URLs. */
export const FEDERATION_BENCHMARK_LABEL = 'federation benchmark subgraphs';

/**
 * bench/backends/federation-benchmark-subgraphs-main.ts: the four subgraphs in one process on the load
 * core, documents parsed once, data in memory (bench/workloads/federation-benchmark/data.json), so that
 * even the heavy query's entity batches cost the subgraphs a small share of what they cost a gateway.
 */
export const federationBenchmarkBackend = fastSubgraphsBackend({
  name: 'federation-benchmark',
  description: 'the public federation benchmark subgraphs (accounts, products, inventory, reviews) on lean graphql-js servers, one process',
  entry: 'federation-benchmark-subgraphs-main.js',
  label: FEDERATION_BENCHMARK_LABEL,
  subgraphs: FEDERATION_BENCHMARK_SUBGRAPH_NAMES,
  sdlOf: readWorkloadSdl,
});
