// The composition root: validated config and long-lived services in, the ordered plugin list and the yoga server out.
import { createYoga, useReadinessCheck, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import type { Config } from './config/schema.js';
import type { GraphHolder } from './gateway/served-graph.js';
import type { PolicyBook } from './registry/policy-store.js';
import type { Logger } from './telemetry/logger.js';
import type { RouterMetrics } from './telemetry/metrics.js';
import type { Tracing } from './telemetry/tracing.js';
import { useMetrics } from './plugins/use-metrics.js';
import { useCors } from './plugins/use-cors.js';
import { CorsBook } from './registry/cors-book.js';
import { useDashboard } from './plugins/use-dashboard.js';
import { useGraphiQLAssets } from './plugins/use-graphiql-assets.js';
import { lazyGraphiQLAssets } from './graphiql/graphiql-assets.js';
import { graphiqlOptions, renderGraphiQLPage } from './graphiql/graphiql-page.js';
import { openingTab, type OpeningDocument } from './graphiql/opening-tab.js';
import { useTelemetry } from './plugins/use-telemetry.js';
import { useRequestState } from './plugins/use-request-state.js';
import { useDeadline } from './plugins/use-deadline.js';
import { useQueryPlans } from './plugins/use-query-plans.js';
import { useCompleteness } from './plugins/use-completeness.js';
import { useIncrementalDelivery } from './plugins/use-incremental-delivery.js';
import type { OperationQueues } from './plugins/use-operation-queue.js';
import { useCostLimit } from './plugins/use-cost-limit.js';
import { useRateLimit } from './plugins/use-rate-limit.js';
import type { TokenBuckets } from './plugins/rate-limit/token-buckets.js';
import { useAuthentication } from './plugins/use-authentication.js';
import { useAuthorization } from './plugins/use-authorization.js';
import { useIntrospectionPermission } from './plugins/use-introspection-permission.js';
import { useAudit } from './plugins/use-audit.js';
import { useJwks } from './plugins/use-jwks.js';
import { useHardening } from './plugins/use-hardening.js';
import { useRequestValidation } from './plugins/use-request-validation.js';
import type { AuditWriter } from './registry/audit-writer.js';
import type { ClientOperations } from './registry/operation-log.js';
import type { OperationRecorder } from './registry/operation-recorder.js';
import { useOperationRegistry } from './plugins/use-operation-registry.js';
import { TRUSTED_DOCUMENT_PARAMS, useTrustedDocuments } from './plugins/use-trusted-documents.js';
import type { TrustedDocumentBook } from './registry/trusted-documents.js';
import type { Authenticator } from './security/authentication/authenticate.js';
import type { Authorizer } from './security/authorization.js';
import type { KeyRing } from './security/signing-keys.js';
import { requestStateOf } from './request/request-state.js';
import { useSubscriptions } from './plugins/use-subscriptions.js';
import { HttpStreams } from './streaming/http-stream.js';
import { httpSubscriptionStreams } from './subscriptions/http-subscriptions.js';
import type { OpenSubscriptions } from './subscriptions/open-subscriptions.js';

export interface RouterDeps {
  config: Config;
  graph: GraphHolder;
  metrics: RouterMetrics;
  logger: Logger;
  /** Ops policies per operation, kept current by the registry's change feed. */
  policies: PolicyBook;
  /** The CORS allow-list, kept current by the change feed. Default: the `corsOrigins` setting alone. */
  cors?: CorsBook;
  /** Buckets of the cost rate limit (Redis shared by every router, or this process's own); default: this process's own. */
  rateLimitBuckets?: TokenBuckets;
  /** Per-operation queues (the plugin and its live-policy hook), owned by the process. */
  queues: OperationQueues;
  /** Signing keys of the per-subgraph tokens (published at /.well-known/jwks.json). */
  keyRing: KeyRing;
  /** Verifies user tokens; absent when authentication is off. */
  authenticator?: Authenticator;
  authorizer: Authorizer;
  /** Audit log writer; absent without a database (supergraph file). */
  audit?: AuditWriter;
  /** Operation registry recorder; absent without a database or when turned off. */
  operations?: OperationRecorder;
  /** The top operations by client, read from the operation registry for the ops page; absent without a database or when recording is off. */
  topOperations?: () => Promise<ClientOperations[]>;
  /** Published trusted documents, kept current by the change feed; absent without a database. */
  trustedDocuments?: TrustedDocumentBook;
  /** OpenTelemetry tracing; absent when off. */
  tracing?: Tracing;
  /** Extra readiness conditions (database reachable...). The graph being composed is always checked. */
  isReady?: () => Promise<boolean>;
  /** What GraphiQL opens on (the demo's product page); unset, GraphiQL's welcome text. */
  graphiqlDocument?: OpeningDocument;
  /** The subscriptions open on this router (docs/subscriptions.md); absent: `subscription` operations are refused. */
  subscriptions?: OpenSubscriptions;
  /** The HTTP streams' heartbeats (`@defer` and subscriptions over SSE and multipart), shared with the request listener in front of the router (start-router.ts). Default: the router's own. */
  httpStreams?: HttpStreams;
}

export type Router = YogaServerInstance<Record<string, unknown>, Record<string, unknown>>;

/**
 * Builds the router: a fetch handler that is also a Node request listener (it never listens itself;
 * the CLI does). Requests read the served graph once at their start, so a swap never changes the
 * schema under a request in flight.
 */
export function createRouter(deps: RouterDeps): Router {
  const { config, graph, metrics, logger } = deps;
  const httpStreams = deps.httpStreams ?? new HttpStreams();
  // GraphiQL's files are loaded on the first request that needs them: a router nobody opens in a browser never parses them.
  const graphiqlAssets = config.graphiql ? lazyGraphiQLAssets() : undefined;
  const production = config.nodeEnv === 'production';
  const plugins: Plugin[] = [
    // First: a preflight is answered before anything reads the request; every answer, refusals included, gets its CORS headers.
    useCors({ book: deps.cors ?? new CorsBook(config.corsOrigins), logger }),
    // Before every plugin that reads request parameters (yoga checks their types only after all
    // plugins' onParams): a malformed request is 400 before anything else looks at it, and so is one that
    // names its document twice, whatever the trusted-documents mode (off adds no plugin of its own).
    useRequestValidation({ maxJsonDepth: config.maxJsonDepth, metrics }),
    // Then /metrics must answer even when no graph is composed, and every request is counted.
    useMetrics({ metrics }),
    ...(config.dashboard ? [useDashboard({ topOperations: deps.topOperations })] : []), // Beside /metrics, which it reads: it too answers with no graph composed.
    // GraphiQL's files, like the ops page, need no graph; Yoga itself answers the page before any plugin.
    ...(graphiqlAssets ? [useGraphiQLAssets({ assets: graphiqlAssets, graphqlEndpoint: '/graphql' })] : []),
    // Every GraphQL request's state (or 503 while no graph is served), on the graph served when it starts; before
    // telemetry, whose execute hook reads the operation from it. It refuses nothing the plugins above would.
    useRequestState(graph),
    // Request id, trace and access line: before every plugin that may refuse a request, so refusals are logged and traced too.
    ...useTelemetry({ logger, tracing: deps.tracing }),
    useJwks(deps.keyRing),
    useReadinessCheck({
      endpoint: '/readyz',
      async check() {
        if (!graph.current) return false;
        return deps.isReady ? deps.isReady() : true;
      },
    }),
  ];
  // Audit sees every GraphQL request, refused ones included; recording never waits for the database.
  if (deps.audit) plugins.push(useAudit({ writer: deps.audit }));
  // Trusted documents turn a document id into its parsed document (or refuse free text) before hardening
  // and everything else reads the query; audit, before it, still records the refusals.
  const trusted = deps.trustedDocuments && config.trustedDocuments !== 'off' ? config.trustedDocuments : undefined;
  if (trusted && deps.trustedDocuments) plugins.push(useTrustedDocuments({ mode: trusted, book: deps.trustedDocuments, metrics }));
  // Hardening before everything that spends work on a request (token checks, cost, queues): it reads
  // headers, counts body bytes and document tokens, and checks limits; audit still records its refusals.
  plugins.push(
    ...useHardening({
      production,
      maxBodyBytes: config.maxBodyBytes,
      maxDepth: config.maxDepth,
      maxAliases: config.maxAliases,
      maxDirectives: config.maxDirectives,
      maxTokens: config.maxTokens,
    }),
  );
  // Identify the caller once, before the body is even parsed.
  if (deps.authenticator && config.authMode !== 'off') plugins.push(useAuthentication({ mode: config.authMode, authenticator: deps.authenticator, metrics }));
  // Completeness comes before every plugin that may refuse a request, so refusals are labelled too. Always
  // on, whatever features are: every executed answer says whether it is whole and how long it may be kept.
  plugins.push(useCompleteness({ metrics, extension: config.completenessExtension }));
  // `@defer` validation, and the incremental format the client reads (the plans stream in it).
  plugins.push(...useIncrementalDelivery({ logger, streams: httpStreams, heartbeatMs: config.subscriptionHeartbeatMs }));
  // Production introspection by permission (decision 036): the caller is known (authenticated at request parse), the
  // refusal is labelled and audited by the plugins above, and it comes before any work it saves.
  if (production) plugins.push(useIntrospectionPermission({ authorizer: deps.authorizer, authenticates: deps.authenticator !== undefined && config.authMode !== 'off', metrics }));
  // Who may see what: cheaper than costing, and a refused request costs nothing more.
  plugins.push(useAuthorization({ authorizer: deps.authorizer, metrics }));
  // Cost first (estimated once per document, before any subgraph call), then the client's cost
  // budget, then the queue, which admits only requests that passed the cheaper checks before it.
  plugins.push(useCostLimit({ policies: deps.policies, metrics }), useRateLimit({ policies: deps.policies, metrics, buckets: deps.rateLimitBuckets }), deps.queues.plugin);
  // The deadline starts once the request is admitted.
  if (config.resilience) plugins.push(useDeadline({ policies: deps.policies, defaultDeadlineMs: config.defaultDeadlineMs, defaultDeferDeadlineMs: config.deferDeadlineMs }));
  // Just before execution: only operations admitted by every check above are recorded as executed.
  if (deps.operations) plugins.push(useOperationRegistry({ recorder: deps.operations }));
  // Last: it reads the authorization decision, and replaces only the execute function the others wrap.
  if (config.queryPlans) plugins.push(useQueryPlans({ metrics, logger }));
  // Subscriptions, after every check above has run at subscribe: planned, admitted under the live limits, streamed.
  if (deps.subscriptions) plugins.push(useSubscriptions({ subscriptions: deps.subscriptions, streams: httpSubscriptionStreams(httpStreams, config.subscriptionHeartbeatMs) }));
  return createYoga({
    // The graph useRequestState pinned at the request's start: the request keeps this schema.
    schema: function currentSchema(context) {
      return requestStateOf(context).graph.schema;
    },
    graphqlEndpoint: '/graphql',
    // The body limit is use-hardening's (maxBodyBytes, smaller than yoga's 25 MB): with a
    // content-length it decides by the header alone, where yoga's own pipes every body through a
    // counting stream and rebuilds the request (2% of the CPU of a one-call request, plus garbage).
    maxRequestBodySize: false,
    // GraphQL over HTTP's persisted documents: `documentId` is a body member yoga would otherwise refuse.
    extraParamNames: trusted ? TRUSTED_DOCUMENT_PARAMS : undefined,
    healthCheckEndpoint: '/healthz',
    // CORS is useCors's, by the live allow-list: yoga's reflects any origin (use-cors.ts says why it is not used).
    cors: false,
    landingPage: false,
    // A token only matters when the router accepts development tokens and authentication is on.
    graphiql: graphiqlAssets ? graphiqlOptions(openingTab({ document: deps.graphiqlDocument, devTokenHint: config.devIssuer && config.authMode !== 'off' })) : false,
    // Yoga's own page loads GraphiQL from a CDN; this one links the files the router serves itself.
    renderGraphiQL: graphiqlAssets ? async (options) => renderGraphiQLPage(await graphiqlAssets(), options) : undefined,
    // Unexpected errors reach clients as "Unexpected error." with INTERNAL_SERVER_ERROR; details go to the log.
    maskedErrors: { isDev: false },
    logging: yogaLogging(logger),
    plugins,
  }) as unknown as Router;
}

/** Yoga's own log lines, into the router's logger. */
function yogaLogging(logger: Logger) {
  return {
    debug: (...args: unknown[]) => logger.debug({ args }, 'yoga'),
    info: (...args: unknown[]) => logger.info({ args }, 'yoga'),
    warn: (...args: unknown[]) => logger.warn({ args }, 'yoga'),
    error: (...args: unknown[]) => logger.error({ args }, 'yoga'),
  };
}
