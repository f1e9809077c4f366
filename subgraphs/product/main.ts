// Starts the product subgraph on its own: PORT (default 4001), HOST, FAULT_* knobs; stops on SIGTERM/SIGINT.
import { runStandalone } from '../kit/index.js';
import { createProductSubgraph } from './create-product-subgraph.js';

try {
  const running = await runStandalone(createProductSubgraph());
  console.log(`${running.name} subgraph listening on ${running.url}`);
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
}
