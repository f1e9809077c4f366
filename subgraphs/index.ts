// The demo subgraphs' public entry: factories, the name map and the kit's types.
export { DEMO_SUBGRAPH_NAMES, demoSubgraphs, isDemoSubgraphName, type DemoSubgraphName } from './demo-subgraphs.js';
export { createInventorySubgraph, type InventorySubgraphOptions } from './inventory/index.js';
export {
  DEFAULT_FAULT_SETTINGS,
  FAULT_ENV_VARS,
  FAULT_MODES,
  FaultSettingsError,
  PRODUCT_COUNT,
  runStandalone,
  TOKEN_ENV_VARS,
  TokenRequirementError,
  WEBSOCKET_CLOSE,
  type Authenticate,
  type AuthenticationRefusal,
  type AuthenticationResult,
  type CallerContext,
  type DemoSubgraph,
  type FaultMode,
  type FaultSettings,
  type FaultSwitch,
  type RunningSubgraph,
  type StatsSnapshot,
  type SubgraphCaller,
  type SubgraphOptions,
  type SubgraphStats,
  type SubscriptionCounters,
  type TokenRequirement,
} from './kit/index.js';
export { createProductSubgraph } from './product/index.js';
export { createReviewsSubgraph } from './reviews/index.js';
