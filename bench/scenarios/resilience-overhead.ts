// Scenario: what the aggregation resilience layer costs on the happy path of the demo product page (issue 3: under 5%).
import { demoSubgraphsBackend, fastDemoBackend, productPageRequest } from '../backends/demo-subgraphs.js';
import { resilienceOff, resilienceOn } from '../gateways/switchyard.js';
import type { Scenario } from '../lib/types.js';

/** Three subgraphs per request (product, then reviews and inventory in parallel): every wrapper runs three times. */
export const resilienceOverhead: Scenario = {
  name: 'resilience-overhead',
  summary: 'demo product page (3 subgraphs), resilience layer on vs off',
  backend: fastDemoBackend,
  alternativeBackends: [demoSubgraphsBackend],
  variants: [resilienceOff, resilienceOn],
  request: productPageRequest,
  target: { variant: resilienceOn.name, minRatio: 0.95, statement: 'the resilience layer costs under 5% of throughput' },
};
