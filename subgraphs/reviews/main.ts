// Starts the reviews subgraph on its own: PORT (default 4002), HOST, FAULT_* knobs; stops on SIGTERM/SIGINT.
import { runStandalone } from '../kit/index.js';
import { createReviewsSubgraph } from './create-reviews-subgraph.js';

try {
  const running = await runStandalone(createReviewsSubgraph());
  console.log(`${running.name} subgraph listening on ${running.url}`);
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
}
