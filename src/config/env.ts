// The only place that reads process.env: maps environment variables to configuration keys.
import type { ConfigInput } from './schema.js';

/** Environment variable for each setting; the names users and docker-compose rely on. */
export const ENV_NAMES = {
  port: 'PORT',
  host: 'HOST',
  workers: 'SWITCHYARD_WORKERS',
  keepAliveTimeoutMs: 'SWITCHYARD_KEEP_ALIVE_TIMEOUT_MS',
  headersTimeoutMs: 'SWITCHYARD_HEADERS_TIMEOUT_MS',
  requestTimeoutMs: 'SWITCHYARD_REQUEST_TIMEOUT_MS',
  databaseUrl: 'DATABASE_URL',
  redisUrl: 'REDIS_URL',
  dataDir: 'SWITCHYARD_DATA_DIR',
  nodeEnv: 'NODE_ENV',
  logLevel: 'LOG_LEVEL',
  supergraphFile: 'SWITCHYARD_SUPERGRAPH_FILE',
  graphiql: 'SWITCHYARD_GRAPHIQL',
  dashboard: 'SWITCHYARD_DASHBOARD',
  registryPollMs: 'SWITCHYARD_REGISTRY_POLL_MS',
  resilience: 'SWITCHYARD_RESILIENCE',
  queryPlans: 'SWITCHYARD_QUERY_PLANS',
  answerProjection: 'SWITCHYARD_ANSWER_PROJECTION',
  completenessExtension: 'SWITCHYARD_COMPLETENESS_EXTENSION',
  sectionCache: 'SWITCHYARD_SECTION_CACHE',
  cacheMaxBytes: 'SWITCHYARD_CACHE_MAX_BYTES',
  cacheStaleSeconds: 'SWITCHYARD_CACHE_STALE_SECONDS',
  cacheRedisPrefix: 'SWITCHYARD_CACHE_REDIS_PREFIX',
  defaultDeadlineMs: 'SWITCHYARD_DEADLINE_MS',
  deferDeadlineMs: 'SWITCHYARD_DEFER_DEADLINE_MS',
  subgraphTimeoutMs: 'SWITCHYARD_SUBGRAPH_TIMEOUT_MS',
  maxSubscriptions: 'SWITCHYARD_MAX_SUBSCRIPTIONS',
  subscriptionHeartbeatMs: 'SWITCHYARD_SUBSCRIPTION_HEARTBEAT_MS',
  overrideLabels: 'SWITCHYARD_OVERRIDE_LABELS',
  authMode: 'SWITCHYARD_AUTH_MODE',
  jwksUrl: 'JWKS_URL',
  jwtPublicKey: 'JWT_PUBLIC_KEY',
  jwtIssuer: 'JWT_ISSUER',
  jwtAudience: 'JWT_AUDIENCE',
  devIssuer: 'SWITCHYARD_DEV_ISSUER',
  tokenExchangeUrl: 'TOKEN_EXCHANGE_URL',
  tokenExchangeClientId: 'TOKEN_EXCHANGE_CLIENT_ID',
  tokenExchangeClientSecret: 'TOKEN_EXCHANGE_CLIENT_SECRET',
  subgraphTokenTtlSeconds: 'SWITCHYARD_SUBGRAPH_TOKEN_TTL_SECONDS',
  subgraphTokens: 'SWITCHYARD_SUBGRAPH_TOKENS',
  audit: 'SWITCHYARD_AUDIT',
  auditRetentionDays: 'SWITCHYARD_AUDIT_RETENTION_DAYS',
  operationRegistry: 'SWITCHYARD_OPERATION_REGISTRY',
  operationRetentionDays: 'SWITCHYARD_OPERATION_RETENTION_DAYS',
  operationDiscoveryLimitPerHour: 'SWITCHYARD_OPERATION_DISCOVERY_LIMIT',
  operationDiscoveryTotalLimitPerHour: 'SWITCHYARD_OPERATION_DISCOVERY_TOTAL_LIMIT',
  warmOperations: 'SWITCHYARD_WARM_OPERATIONS',
  trustedDocuments: 'SWITCHYARD_TRUSTED_DOCUMENTS',
  authorizationDefault: 'SWITCHYARD_AUTHORIZATION_DEFAULT',
  maxBodyBytes: 'SWITCHYARD_MAX_BODY_BYTES',
  maxDepth: 'SWITCHYARD_MAX_DEPTH',
  maxAliases: 'SWITCHYARD_MAX_ALIASES',
  maxDirectives: 'SWITCHYARD_MAX_DIRECTIVES',
  maxTokens: 'SWITCHYARD_MAX_TOKENS',
  maxJsonDepth: 'SWITCHYARD_MAX_JSON_DEPTH',
  corsOrigins: 'SWITCHYARD_CORS_ORIGINS',
  otlpEndpoint: 'OTEL_EXPORTER_OTLP_ENDPOINT',
  serviceName: 'OTEL_SERVICE_NAME',
  traceSampleRatio: 'SWITCHYARD_TRACE_SAMPLE_RATIO',
} as const satisfies Record<keyof ConfigInput, string>;

/** Reads the settings present in `env` (empty strings count as unset). */
export function configFromEnv(env: NodeJS.ProcessEnv = process.env): Partial<Record<keyof ConfigInput, string>> {
  const input: Partial<Record<keyof ConfigInput, string>> = {};
  for (const [key, name] of Object.entries(ENV_NAMES) as [keyof ConfigInput, string][]) {
    const value = env[name];
    if (value !== undefined && value !== '') input[key] = value;
  }
  return input;
}

/**
 * Set by `serve --workers` in each worker's environment: the worker's slot, 1..N, kept by its
 * replacements (a restart or a reload), so the `worker` label of its metrics stays the same. Not a
 * setting: users never set it.
 */
export const WORKER_SLOT_ENV = 'SWITCHYARD_WORKER_SLOT';

/** The worker slot a primary gave this process, or undefined outside `serve --workers`. */
export function workerSlotFromEnv(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const slot = env[WORKER_SLOT_ENV];
  return slot && /^\d+$/.test(slot) ? slot : undefined;
}

/**
 * Who runs a registry command, for the audit row of `config apply` when `--actor` is not given (a CI
 * job sets it to the pipeline or the person who merged). Not a router setting. Unset: the OS user.
 */
export const ACTOR_ENV = 'SWITCHYARD_ACTOR';

export function actorFromEnv(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const actor = env[ACTOR_ENV]?.trim();
  return actor ? actor : undefined;
}
