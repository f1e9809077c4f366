// Starts a router process's services: database, change feed, graph source, HTTP server; and stops them in order.
import { Agent } from 'undici';
import type { Config } from '../config/schema.js';
import { waitWithin } from '../errors/wait-within.js';
import { openDatabase } from '../registry/open-database.js';
import type { Database } from '../registry/database.js';
import { migrate } from '../registry/migrate.js';
import { isRegistryTopic, watchChanges, type RegistryTopic } from '../registry/change-feed.js';
import { DEFAULT_COST_LIMIT, listPolicies, PolicyBook } from '../registry/policy-store.js';
import { CorsBook } from '../registry/cors-book.js';
import { listCorsRules } from '../registry/cors-store.js';
import type { RouteMetadata } from '../registry/route.js';
import { resolveRoute, SubgraphHealthBook } from '../resilience/subgraph-health.js';
import { createSubgraphExecutor } from '../gateway/subgraph-executor.js';
import { createFileGraphSource, createRegistryGraphSource, type RegistryGraphSource } from '../gateway/graph-sources.js';
import type { SubgraphEndpoint } from '../gateway/gateway-schema.js';
import { GraphHolder } from '../gateway/served-graph.js';
import { createRouter, type Router } from '../router.js';
import { UpstreamHub } from '../subscriptions/upstream-hub.js';
import { OpenSubscriptions, type OpenSubscriptionsOptions } from '../subscriptions/open-subscriptions.js';
import { serveWebSockets, type RunningWebSockets } from '../subscriptions/websocket-server.js';
import { HttpStreams } from '../streaming/http-stream.js';
import { httpSubscriptionStreams, serveHttpSubscriptions } from '../subscriptions/http-subscriptions.js';
import { createOperationQueues, type OperationQueues } from '../plugins/use-operation-queue.js';
import { memoryBuckets } from '../plugins/rate-limit/token-buckets.js';
import { databaseTicketStore, memoryTicketStore } from '../plugins/queue/ticket-store.js';
import { forbiddenField } from '../security/forbidden-field.js';
import { createAuditWriter, type AuditWriter } from '../registry/audit-writer.js';
import { defaultSpillDir } from '../registry/audit-writer-options.js';
import { createOperationRecorder, type OperationRecorder } from '../registry/operation-recorder.js';
import { topOperationsByClient } from '../registry/operation-log.js';
import { listTrustedDocuments, TrustedDocumentBook } from '../registry/trusted-documents.js';
import { listPermissions, PermissionBook } from '../registry/permission-store.js';
import { createAuthenticator, type Authenticator } from '../security/authentication/authenticate.js';
import { Authorizer, installGuards } from '../security/authorization.js';
import { KeyRing } from '../security/signing-keys.js';
import { withTokenCache, type CachedTokenSource } from '../security/subgraph-token-cache.js';
import { createLocalMinter, createTokenExchangeClient, type SubgraphTokenSource } from '../security/subgraph-tokens.js';
import { createLogger, type Logger } from '../telemetry/logger.js';
import { startSectionCache, type RouterSectionCacheHandle } from './start-section-cache.js';
import { startRetention } from './start-retention.js';
import { createTracing } from '../telemetry/tracing.js';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { createMetrics, type RouterMetrics } from '../telemetry/metrics.js';
import type { OpeningDocument } from '../graphiql/opening-tab.js';
import type { GraphQLSchema } from 'graphql';
import { ResourceStack } from './resource-stack.js';
import { listen, serveDraining } from './serve-draining.js';
import { connectRateLimitBuckets } from './connect-rate-limit-buckets.js';

export interface StartRouterOptions {
  config: Config;
  /** An already open database (shared with the caller, who closes it). Default: opened from config, closed here. */
  database?: Database;
  logger?: Logger;
  /** Finished spans go here, exported at once (tests); tracing is then on whatever the config says. */
  spanExporter?: SpanExporter;
  /** What GraphiQL opens on (the demo's product page); unset, GraphiQL's welcome text. */
  graphiqlDocument?: OpeningDocument;
  /** Labels on every metric this router exports (`{ worker }` under `serve --workers`). Default: none. */
  metricLabels?: Readonly<Record<string, string>>;
}

export interface RunningRouter {
  readonly url: string;
  readonly port: number;
  readonly graph: GraphHolder;
  readonly metrics: RouterMetrics;
  readonly policies: PolicyBook;
  readonly permissions: PermissionBook;
  readonly keyRing: KeyRing;
  readonly router: Router;
  /** The metadata store, unless serving a supergraph file. */
  readonly database: Database | undefined;
  /** Client subscriptions open on this router, and the upstream subscriptions and WebSockets that carry them (tests, ops). */
  readonly subscriptions: OpenSubscriptions;
  readonly upstreams: UpstreamHub;
  readonly websockets: RunningWebSockets;
  /**
   * Stops accepting, lets requests in flight finish, then releases the feed, writers, pools and database,
   * in the reverse of the order they were opened. A release that fails is logged and the rest still run.
   */
  close(): Promise<void>;
}

export async function startRouter(options: StartRouterOptions): Promise<RunningRouter> {
  const logger = options.logger ?? createLogger({ level: options.config.logLevel });
  // One close path for a normal stop and for a start that fails half way: each service is pushed as it opens.
  const resources = new ResourceStack((message, error, level) => logger[level]({ err: error }, message));
  try {
    return await startServices(options, logger, resources);
  } catch (error) {
    await resources.close();
    throw error;
  }
}

/** Opens every service in order, pushing each one's release on `resources` the moment it is open. */
async function startServices(options: StartRouterOptions, logger: Logger, resources: ResourceStack): Promise<RunningRouter> {
  const { config } = options;
  const metrics = createMetrics({ defaultLabels: options.metricLabels });
  const tracing = createTracing({ serviceName: config.serviceName, otlpEndpoint: config.otlpEndpoint, sampleRatio: config.traceSampleRatio, exporter: options.spanExporter });
  // Released last: the spans of the drained requests are flushed (an unreachable collector only delays exit by its timeout).
  if (tracing) resources.push(() => tracing.shutdown(), 'tracing: spans could not be exported', 'warn');
  // One keep-alive pool for all subgraph calls; it outlives graph swaps, so a swap opens no new connections.
  const dispatcher = new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 60_000, connections: 256 });
  resources.push(() => dispatcher.close(), 'subgraph connections could not be closed');
  // Rate-limit buckets: shared by every router through Redis when configured, else this process's own.
  const rateLimitBuckets = config.redisUrl ? await connectRateLimitBuckets(config.redisUrl, metrics, logger) : memoryBuckets();
  resources.push(() => rateLimitBuckets.close?.(), 'rate limit: Redis connection could not be closed');
  const store = config.supergraphFile ? undefined : await openMetadataStore(options, metrics, logger, resources);
  const database = store?.database;
  // Without a registry (a supergraph file) nothing can set policies: the shipped `*` cost limit is built in.
  // With one, it is a row (migration 007) that ops change or clear.
  const policies = new PolicyBook(config.supergraphFile ? { costLimit: DEFAULT_COST_LIMIT } : {});
  const permissions = new PermissionBook();
  // The start list (SWITCHYARD_CORS_ORIGINS, else the environment's default), the registry's rules merged in live.
  const cors = new CorsBook(config.corsOrigins);
  // Waiting tickets go to the database when there is one, so any instance honours them.
  const queues = createOperationQueues({ policies, metrics, tickets: database ? databaseTicketStore(database) : memoryTicketStore() });
  // A supergraph composed elsewhere needs no registry: keys live in memory, policies (but the built-in cost limit) and permissions stay empty.
  const keyRing = database ? await KeyRing.open(database) : await KeyRing.ephemeral();
  const graph = new GraphHolder();
  const sectionCache =
    config.sectionCache && config.queryPlans ? await startSectionCache({ config, metrics, logger, perUserTokens: config.subgraphTokens, database, tracer: tracing?.tracer }) : undefined;
  if (sectionCache) resources.push(() => sectionCache.close(), 'section cache could not be closed');
  const sourceDeps = graphSourceDeps({ config, graph, metrics, logger, tracing, dispatcher, keyRing, sectionCache });
  if (database) {
    const registry = createRegistryGraphSource({ db: database, warmOperations: config.warmOperations, ...sourceDeps });
    const handlers = topicHandlers({ database, registry, permissions, keyRing, trustedDocuments: store?.trustedDocuments, policies, queues, sectionCache, cors });
    // One feed for every live table: each topic reloads its own in-memory copy.
    const feed = await watchChanges(
      database,
      async function onRegistryChange(topic) {
        // A topic this router does not know (a newer router's migration) has nothing to reload here.
        if (isRegistryTopic(topic)) await handlers[topic]();
      },
      { pollMs: config.registryPollMs, onError: (error) => logger.warn({ err: error }, 'registry change check failed') },
    );
    resources.push(() => feed.stop(), 'registry change feed could not be stopped');
  } else {
    const fileSource = createFileGraphSource({ file: config.supergraphFile!, ...sourceDeps });
    resources.push(() => fileSource.stop(), 'supergraph file watcher could not be stopped');
    await fileSource.start();
  }

  const authorizer = new Authorizer({ book: permissions, defaultPolicy: config.authorizationDefault });
  const { hub, subscriptions } = openSubscriptions({ config, graph, metrics, logger, tracing, authorizer, permissions, policies, tokens: sourceDeps.tokens }, resources);
  const httpStreams = new HttpStreams();
  const router = createRouter({
    config,
    graph,
    metrics,
    logger,
    policies,
    cors,
    queues,
    rateLimitBuckets,
    keyRing,
    authenticator: config.authMode !== 'off' ? createRouterAuthenticator(config, keyRing) : undefined,
    authorizer,
    subscriptions,
    httpStreams,
    audit: store?.audit,
    operations: store?.operations,
    topOperations: database ? topOperationsOf(database) : undefined,
    trustedDocuments: store?.trustedDocuments,
    tracing,
    isReady: database ? () => database.query('select 1').then(() => true, () => false) : undefined,
    graphiqlDocument: options.graphiqlDocument,
  });
  const server = serveDraining(router, serveHttpSubscriptions(router, httpSubscriptionStreams(httpStreams, config.subscriptionHeartbeatMs), { path: '/graphql', maxBodyBytes: config.maxBodyBytes, logger }), config, resources);
  const websockets = serveWebSockets(server, router, { heartbeatMs: config.subscriptionHeartbeatMs, maxPayloadBytes: config.maxBodyBytes, logger });
  // Before the drain (pushed last, so run first): streams are answers in flight the drain would wait for.
  resources.push(() => endSubscriptions(subscriptions, websockets), 'subscriptions could not be ended');
  const address = await listen(server, config.port, config.host);
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${address.port}/graphql`;
  logger.info({ url, source: config.supergraphFile ?? 'registry' }, 'router listening');
  return { url, port: address.port, graph, metrics, policies, permissions, keyRing, router, database, subscriptions, upstreams: hub, websockets, close: () => resources.close() };
}

/** What a registry topic reloads when its version moves: one handler per topic, so a topic added without one fails the typecheck. */
type TopicHandlers = { readonly [topic in RegistryTopic]: () => Promise<unknown> };

interface TopicReloads {
  readonly database: Database;
  readonly registry: RegistryGraphSource;
  readonly permissions: PermissionBook;
  readonly keyRing: KeyRing;
  readonly trustedDocuments: TrustedDocumentBook | undefined;
  readonly policies: PolicyBook;
  readonly queues: OperationQueues;
  readonly sectionCache: RouterSectionCacheHandle | undefined;
  readonly cors: CorsBook;
}

/** The in-memory copy each topic of the change feed reloads. */
function topicHandlers(reloads: TopicReloads): TopicHandlers {
  const { database, registry, permissions, keyRing, trustedDocuments, policies, queues, sectionCache, cors } = reloads;
  return {
    subgraphs: () => registry.reload(),
    permissions: async () => permissions.replace(await listPermissions(database)),
    signing_keys: () => keyRing.reload(database),
    trusted_documents: async () => trustedDocuments?.replace(await listTrustedDocuments(database)),
    policies: async () => {
      policies.replace(await listPolicies(database));
      // Waiters are admitted at once when a capacity was raised.
      queues.pumpAll();
    },
    // The section cache's rules and purges, when it is on (without it, nothing to reload).
    cache_rules: async () => sectionCache?.onRegistryChange('cache_rules'),
    cache_purges: async () => sectionCache?.onRegistryChange('cache_purges'),
    cors: async () => cors.replace(await listCorsRules(database)),
  };
}

/** Subscriptions (docs/subscriptions.md, decision 031): upstream shares per subgraph, client streams, their limits and ends. */
function openSubscriptions(
  deps: Pick<OpenSubscriptionsOptions, 'graph' | 'metrics' | 'logger' | 'authorizer' | 'permissions' | 'policies'> & { config: Config; metrics: RouterMetrics; tracing: ReturnType<typeof createTracing>; tokens: SubgraphTokenSource | undefined },
  resources: ResourceStack,
): { hub: UpstreamHub; subscriptions: OpenSubscriptions } {
  const { config, metrics } = deps;
  const hub = new UpstreamHub({
    tokens: deps.tokens,
    onUpstreams: (subgraph, delta) => metrics.subscriptionUpstreams.inc({ subgraph }, delta),
    onConnections: (subgraph, delta) => metrics.subscriptionUpstreamConnections.inc({ subgraph }, delta),
    onEventIn: (subgraph) => metrics.subscriptionEventsIn.inc({ subgraph }),
    onReconnect: (subgraph) => metrics.subscriptionUpstreamReconnects.inc({ subgraph }),
  });
  const subscriptions = new OpenSubscriptions({
    hub,
    graph: deps.graph,
    authorizer: deps.authorizer,
    permissions: deps.permissions,
    policies: deps.policies,
    maxSubscriptions: config.maxSubscriptions,
    perUserTokens: config.subgraphTokens,
    defaultDeadlineMs: config.defaultDeadlineMs,
    metrics,
    logger: deps.logger,
    tracer: deps.tracing?.tracer,
  });
  resources.push(() => {
    subscriptions.close();
    hub.close();
  }, 'subscriptions could not be closed');
  return { hub, subscriptions };
}

/** Longest wait for streams to send their last events at shutdown, in ms. */
const SUBSCRIPTION_FLUSH_MS = 2_000;

/**
 * Shutdown and `--workers` reloads: every subscription ends with SHUTTING_DOWN after the events
 * already completed (SSE streams end without `complete`, so their clients reconnect), then every
 * WebSocket closes with 1012 (service restart): clients reconnect, to another router.
 */
async function endSubscriptions(subscriptions: OpenSubscriptions, websockets: RunningWebSockets): Promise<void> {
  await waitWithin(subscriptions.shutdown(), SUBSCRIPTION_FLUSH_MS);
  // Every last `error` message is written already (the transports write ends as they happen): the close frame follows it.
  websockets.closeAll(1012, 'service restart');
  await websockets.close();
}

interface MetadataStore {
  readonly database: Database;
  readonly audit: AuditWriter | undefined;
  readonly operations: OperationRecorder | undefined;
  readonly trustedDocuments: TrustedDocumentBook;
}

/** The registry's database, migrated, and the writers that need it; each one's release is pushed on `resources`. */
async function openMetadataStore(options: StartRouterOptions, metrics: RouterMetrics, logger: Logger, resources: ResourceStack): Promise<MetadataStore> {
  const { config } = options;
  const database = options.database ?? (await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir }));
  // A database the caller passed in is the caller's to close.
  if (!options.database) resources.push(() => database.close(), 'database could not be closed');
  await migrate(database);
  let audit: AuditWriter | undefined;
  if (config.audit) {
    const writer = (audit = createAuditWriter({ db: database, spillDir: defaultSpillDir(config.dataDir), onError: (error) => logger.warn({ err: error }, 'audit log: database unreachable or entry refused; spilling to disk') }));
    metrics.watchAudit(() => writer.stats());
    // Released after the drain: every request has recorded its entry; flush them before the database goes.
    resources.push(() => writer.close(), 'audit log: entries could not be saved');
  }
  let operations: OperationRecorder | undefined;
  if (config.operationRegistry) {
    const recorder = (operations = createOperationRecorder({
      db: database,
      discoveryLimitPerHour: config.operationDiscoveryLimitPerHour,
      discoveryTotalLimitPerHour: config.operationDiscoveryTotalLimitPerHour,
      onUnrecorded: (client, executions, reason) => metrics.operationsUnrecorded.inc({ client: metrics.clientLabel(client), reason }, executions),
      onError: (error) => logger.warn({ err: error }, 'operation registry: write failed; retrying on the next interval'),
    }));
    metrics.watchOperations(() => recorder.stats());
    // Likewise the operation counts of the drained requests.
    resources.push(() => recorder.close(), 'operation registry: counts could not be saved');
  }
  // Retention (decision 030): today's audit partition is made before the first request; stopped before the writers flush.
  const retention = await startRetention({ database, config, logger });
  resources.push(() => retention.stop(), 'retention: the run under way could not finish', 'warn');
  return { database, audit, operations, trustedDocuments: new TrustedDocumentBook() };
}

interface GraphSourceSetup {
  readonly config: Config;
  readonly graph: GraphHolder;
  readonly metrics: RouterMetrics;
  readonly logger: Logger;
  readonly tracing: ReturnType<typeof createTracing>;
  readonly dispatcher: Agent;
  readonly keyRing: KeyRing;
  readonly sectionCache: RouterSectionCacheHandle | undefined;
}

/** What either graph source needs: where to swap graphs in, how to reach subgraphs, and the section cache. */
function graphSourceDeps(setup: GraphSourceSetup) {
  const { config, metrics, tracing, dispatcher } = setup;
  const health = new SubgraphHealthBook(metrics);
  let tokens: SubgraphTokenSource | undefined;
  if (config.subgraphTokens) {
    const source = subgraphTokenSource(config, setup.keyRing);
    metrics.watchCache('subgraph_token', () => source.stats());
    tokens = source;
  }
  const executorFor = (endpoint: SubgraphEndpoint, metadata: RouteMetadata) => {
    const route = resolveRoute(metadata, { timeoutMs: config.subgraphTimeoutMs });
    return createSubgraphExecutor({
      name: endpoint.name,
      url: endpoint.url,
      route,
      health: health.get(endpoint.name, route),
      dispatcher,
      metrics,
      defaultDeadlineMs: config.defaultDeadlineMs,
      resilience: config.resilience,
      tokens,
      headerRules: metadata.headers,
      tracer: tracing?.tracer,
    });
  };
  return {
    holder: setup.graph,
    tokens,
    executorFor,
    logger: setup.logger,
    metrics,
    overrideLabels: new Set(config.overrideLabels),
    // Every built schema gets the authorization guards before it serves a request.
    decorateSchema: (schema: GraphQLSchema) => installGuards(schema, forbiddenField),
    queryPlans: config.queryPlans,
    answerProjection: config.answerProjection,
    sectionCache: setup.sectionCache?.shared,
  };
}

/** The ops page's view of the operation registry: the 10 busiest clients of the last day, 5 operations each. */
const topOperationsOf = (db: Database) => () => topOperationsByClient(db, { since: new Date(Date.now() - 24 * 60 * 60 * 1000), clients: 10, perClient: 5 });

/** Per-subgraph tokens: exchanged at an RFC 8693 endpoint when configured, else minted with the router's keys; cached either way. */
function subgraphTokenSource(config: Config, keyRing: KeyRing): CachedTokenSource {
  const minter = createLocalMinter(keyRing, { lifetimeSeconds: config.subgraphTokenTtlSeconds });
  if (!config.tokenExchangeUrl) return withTokenCache(minter);
  return withTokenCache(
    createTokenExchangeClient({
      url: config.tokenExchangeUrl,
      clientId: config.tokenExchangeClientId,
      clientSecret: config.tokenExchangeClientSecret,
      // Anonymous callers have no token to exchange: the router vouches for them itself.
      anonymous: minter,
    }),
  );
}

/** User tokens: the identity provider's JWKS or static key when configured, plus the development issuer outside production. */
function createRouterAuthenticator(config: Config, keyRing: KeyRing): Authenticator {
  return createAuthenticator({
    source: config.jwksUrl ? { kind: 'jwks', url: config.jwksUrl } : config.jwtPublicKey ? { kind: 'public-key', key: config.jwtPublicKey } : undefined,
    issuer: config.jwtIssuer,
    audience: config.jwtAudience,
    devIssuer: config.devIssuer ? { keyRing } : undefined,
  });
}
