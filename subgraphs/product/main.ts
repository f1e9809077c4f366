// Starts the product subgraph on its own: PORT (default 4001), HOST, FAULT_* knobs, ROUTER_JWKS_URL/ROUTER_TOKEN_ISSUER; stops on SIGTERM/SIGINT.
import { describeRunning, runStandalone } from '../kit/index.js';
import { createProductSubgraph } from './create-product-subgraph.js';

try {
  const subgraph = createProductSubgraph();
  const running = await runStandalone(subgraph);
  console.log(describeRunning(subgraph, running));
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
}
