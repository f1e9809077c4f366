// Starts the inventory subgraph on its own: PORT (default 4003), HOST, FAULT_* knobs; stops on SIGTERM/SIGINT.
import { runStandalone } from '../kit/index.js';
import { createInventorySubgraph } from './create-inventory-subgraph.js';

try {
  const running = await runStandalone(createInventorySubgraph());
  console.log(`${running.name} subgraph listening on ${running.url}`);
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
}
