// Scenarios: Switchyard side by side with other federation gateways (Hive Gateway, its Rust query planner, Apollo Gateway) on three workloads.
import { demoSubgraphsBackend, fastDemoBackend, productPageRequest } from '../backends/demo-subgraphs.js';
import { federationBenchmarkBackend } from '../backends/federation-benchmark.js';
import { readWorkloadQuery } from '../backends/federation-benchmark-subgraphs.js';
import { apolloGateway, hiveGateway, hiveGatewayRouterRuntime } from '../gateways/peers.js';
import { switchyardDefaults } from '../gateways/switchyard.js';
import type { Scenario, Variant } from '../lib/types.js';

/**
 * Hive Gateway first: it is the baseline (every ratio is gateway / Hive Gateway, paired per round) because
 * Switchyard runs on the same stitching runtime (@graphql-tools/federation), so the ratio reads as "what
 * Switchyard's own layers cost or save". Switchyard second, so that it is measured right after its baseline.
 */
const PEERS: readonly Variant[] = [hiveGateway, switchyardDefaults, hiveGatewayRouterRuntime, apolloGateway];

/** Read once, when the scenario list loads: request() runs for every request. */
const HEAVY_QUERY = { query: readWorkloadQuery('heavy'), operationName: 'TestQuery' };
const HELLO_QUERY = { query: readWorkloadQuery('hello'), operationName: 'Hello' };

/** The public benchmark's nested query: users → reviews → product → reviews → author → reviews → product, and topProducts likewise. */
export const peersHeavy: Scenario = {
  name: 'peers-heavy',
  summary: 'federation benchmark, nested query (4 subgraphs, @requires, @provides, ~87 KB answer): Switchyard vs Hive Gateway, Hive Gateway + Rust planner, Apollo Gateway',
  backend: federationBenchmarkBackend,
  variants: PEERS,
  // No variables in this query: the unique Authorization header is all that differs between requests.
  request: () => HEAVY_QUERY,
  checkRequests: [0, 1],
};

/** The demo product page of the other scenarios, ids 1..1000 in turn: three subgraph calls (product, then reviews and inventory). */
export const peersProductPage: Scenario = {
  name: 'peers-product-page',
  summary: 'demo product page (3 subgraphs, id varying per request): Switchyard vs Hive Gateway, Hive Gateway + Rust planner, Apollo Gateway',
  backend: fastDemoBackend,
  alternativeBackends: [demoSubgraphsBackend],
  variants: PEERS,
  request: productPageRequest,
};

/** `{ hello }` on accounts: one subgraph call with a tiny answer, so each gateway's fixed cost per request is what is timed. */
export const peersHello: Scenario = {
  name: 'peers-hello',
  summary: 'federation benchmark, `{ hello }`: one field from one subgraph (fixed cost per request): Switchyard vs Hive Gateway, Hive Gateway + Rust planner, Apollo Gateway',
  backend: federationBenchmarkBackend,
  variants: PEERS,
  request: () => HELLO_QUERY,
  checkRequests: [0, 1],
};
