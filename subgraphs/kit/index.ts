// The shared kit of the demo subgraphs: server builder, fault switch, stats, router-token check, seeded data helpers.
export { AdminInputError, createAdminApi, kitAdminRoutes, type AdminHandler, type AdminRoute, type KitAdminTargets } from './admin-api.js';
export { PRODUCT_COUNT, productIds } from './catalog.js';
export { createDemoSubgraph, type DemoSubgraphSpec, type FieldResolver, type ResolverMap, type SubscriptionResolver } from './create-demo-subgraph.js';
export { createEventSource, DEFAULT_EVENT_BUFFER, type EventSource, type EventSourceOptions, type SubscribeOptions } from './event-source.js';
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
export { describeRunning, runStandalone } from './run-standalone.js';
export { readSchemaFile } from './schema-file.js';
export { createSubgraphStats, type StatsSnapshot, type SubgraphStats, type SubscriptionCounters } from './subgraph-stats.js';
export { createTableSource, type BatchSource } from './table-source.js';
export {
  createTokenGate,
  DEFAULT_TOKEN_ISSUER,
  ROUTER_ACTOR,
  ROUTER_TOKEN_TYPE,
  TOKEN_ENV_VARS,
  TokenRequirementError,
  tokenRequirementFromEnv,
  validateTokenRequirement,
  type ConnectionTokenCheck,
  type TokenGate,
} from './token-gate.js';
export {
  createTokenVerifier,
  type RefusedToken,
  type TokenCheck,
  type TokenVerifier,
  type TokenVerifierOptions,
  type VerifiedToken,
} from './token-verifier.js';
export { createWebSocketTransport, DEFAULT_WEBSOCKET_KEEP_ALIVE_MS, envelopedOperations, type EnvelopedOperations, WEBSOCKET_CLOSE, type WebSocketEndpoint, type WebSocketTransportParts } from './websocket-transport.js';
export type {
  Authenticate,
  AuthenticationRefusal,
  AuthenticationResult,
  CallerContext,
  DemoSubgraph,
  RunningSubgraph,
  SubgraphCaller,
  SubgraphOptions,
  TokenRequirement,
} from './types.js';
