// Process entry: the federation benchmark's four subgraphs in one process (one event loop on the load core), their URLs on one stdout line.
import { FEDERATION_BENCHMARK_SUBGRAPH_NAMES, federationBenchmarkSchema } from './federation-benchmark-subgraphs.js';
import { startFastSubgraph } from './fast-subgraph-server.js';

const running = await Promise.all(FEDERATION_BENCHMARK_SUBGRAPH_NAMES.map((name) => startFastSubgraph({ schema: federationBenchmarkSchema(name) })));
const urls = Object.fromEntries(FEDERATION_BENCHMARK_SUBGRAPH_NAMES.map((name, i) => [name, running[i].url]));
// The bench waits for this line; the JSON after the prefix tells it where each subgraph listens.
console.log(`federation benchmark subgraphs ${JSON.stringify(urls)}`);

let stopping = false;
function stop(): void {
  if (stopping) return;
  stopping = true;
  void Promise.all(running.map((subgraph) => subgraph.close())).then(() => process.exit(0));
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
