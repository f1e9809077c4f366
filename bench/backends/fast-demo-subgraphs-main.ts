// Process entry: the three fast demo subgraphs in one process (one event loop on the load core), their URLs on one stdout line.
import { FAST_DEMO_SUBGRAPH_NAMES, fastDemoSchema } from './fast-demo-subgraphs.js';
import { startFastSubgraph } from './fast-subgraph-server.js';

const running = await Promise.all(FAST_DEMO_SUBGRAPH_NAMES.map((name) => startFastSubgraph({ schema: fastDemoSchema(name) })));
const urls = Object.fromEntries(FAST_DEMO_SUBGRAPH_NAMES.map((name, i) => [name, running[i].url]));
// The bench waits for this line; the JSON after the prefix tells it where each subgraph listens.
console.log(`fast demo subgraphs ${JSON.stringify(urls)}`);

let stopping = false;
function stop(): void {
  if (stopping) return;
  stopping = true;
  void Promise.all(running.map((subgraph) => subgraph.close())).then(() => process.exit(0));
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
