// Starts the inventory subgraph on its own: PORT (default 4003), HOST, FAULT_* knobs, ROUTER_JWKS_URL/ROUTER_TOKEN_ISSUER, INVENTORY_TICK_MS; stops on SIGTERM/SIGINT.
import { describeRunning, runStandalone } from '../kit/index.js';
import { createInventorySubgraph } from './create-inventory-subgraph.js';

try {
  const subgraph = createInventorySubgraph();
  const running = await runStandalone(subgraph);
  console.log(describeRunning(subgraph, running));
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
}
