// The shared kit of the demo subgraphs: server builder, fault switch, stats, seeded data helpers.
export { PRODUCT_COUNT, productIds } from './catalog.js';
export { createDemoSubgraph, type DemoSubgraphSpec, type ResolverMap } from './create-demo-subgraph.js';
export {
  createFaultSwitch,
  DEFAULT_FAULT_SETTINGS,
  FAULT_ENV_VARS,
  FAULT_MODES,
  FaultSettingsError,
  faultSettingsFromEnv,
  MAX_DELAY_MS,
  validateFaultPatch,
  type FaultMode,
  type FaultSettings,
  type FaultSwitch,
} from './fault-switch.js';
export { hashSeed, intBetween, mulberry32, pick, randomFor, type Random } from './prng.js';
export { runStandalone } from './run-standalone.js';
export { readSchemaFile } from './schema-file.js';
export { createSubgraphStats, type StatsSnapshot, type SubgraphStats } from './subgraph-stats.js';
export { createTableSource, type BatchSource } from './table-source.js';
export type { Authenticate, AuthenticationResult, DemoSubgraph, RunningSubgraph, SubgraphOptions } from './types.js';
