// Scenario: the demo product page from one router process and from two (`serve --workers 2`, decision 012).
import { demoSubgraphsBackend, fastDemoBackend, productPageRequest } from '../backends/demo-subgraphs.js';
import { switchyardDefaults, switchyardTwoWorkers } from '../gateways/switchyard.js';
import type { Scenario } from '../lib/types.js';

/**
 * One worker (the shipped single process, pinned to the gateway core) against two. The second worker is
 * pinned to the load core, which the subgraphs and the load generator also need: on the 2-core
 * development machine the ratio says what a second process gains on a machine without an idle core,
 * and the gain on a machine with cores to spare is larger. Run only when named (it is not a
 * comparison the default run's time budget covers): `npm run bench -- --scenario workers-scaling`.
 */
export const workersScaling: Scenario = {
  name: 'workers-scaling',
  summary: 'demo product page: one router process (gateway core) vs serve --workers 2 (gateway and load cores)',
  backend: fastDemoBackend,
  alternativeBackends: [demoSubgraphsBackend],
  variants: [switchyardDefaults, switchyardTwoWorkers],
  request: productPageRequest,
  onlyWhenNamed: true,
};
