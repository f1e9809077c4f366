// Process entry: the federation benchmark's four subgraphs in one process (one event loop on the load core), their URLs on one stdout line.
import { FEDERATION_BENCHMARK_SUBGRAPH_NAMES, federationBenchmarkSchema } from './federation-benchmark-subgraphs.js';
import { serveFastSubgraphs } from './fast-subgraph-server.js';
import { FEDERATION_BENCHMARK_LABEL } from './federation-benchmark.js';

await serveFastSubgraphs(FEDERATION_BENCHMARK_LABEL, Object.fromEntries(FEDERATION_BENCHMARK_SUBGRAPH_NAMES.map((name) => [name, federationBenchmarkSchema(name)])));
