// Scenario: a one-field, one-subgraph query, so the router's fixed cost per request dominates; resilience on vs off.
import { demoSubgraphsBackend, fastDemoBackend, productIdFor } from '../backends/demo-subgraphs.js';
import { resilienceOff, resilienceOn } from '../gateways/switchyard.js';
import type { Scenario } from '../lib/types.js';

const PRODUCT_NAME = /* GraphQL */ `
  query ProductName($id: ID!) {
    product(id: $id) { id name }
  }
`;

/** One subgraph call per request: the per-request part of the layer (deadline, completeness) weighs most here. */
export const passthrough: Scenario = {
  name: 'passthrough',
  summary: 'one field from one subgraph (fixed cost per request), resilience layer on vs off',
  backend: fastDemoBackend,
  alternativeBackends: [demoSubgraphsBackend],
  variants: [resilienceOff, resilienceOn],
  request: (n) => ({ query: PRODUCT_NAME, operationName: 'ProductName', variables: { id: productIdFor(n) } }),
  target: { variant: resilienceOn.name, minRatio: 0.95, statement: 'the resilience layer costs under 5% of throughput' },
};
