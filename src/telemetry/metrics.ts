// The router's Prometheus metrics: one registry per router instance, label cardinality kept bounded.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { ANONYMOUS_OPERATION, METRIC, OTHER_CLIENT, OTHER_OPERATION, UNKNOWN_CLIENT } from './metric-names.js';

/** Outcome of one attempt to a subgraph: a GraphQL answer (with or without errors), or how it failed. */
export type SubgraphOutcome = 'ok' | 'graphql_error' | 'http_error' | 'network_error' | 'timeout' | 'deadline' | 'cancelled' | 'circuit_open' | 'token_error';

export interface RouterMetrics {
  readonly registry: Registry;
  readonly requests: Counter<'operation' | 'status'>;
  readonly requestDuration: Histogram<'operation'>;
  /** Payloads per streamed answer (a deferred query's), and the time to its first and its last. */
  readonly streamPayloads: Histogram<'operation'>;
  readonly firstPayloadDuration: Histogram<'operation'>;
  readonly lastPayloadDuration: Histogram<'operation'>;
  readonly subgraphRequests: Counter<'subgraph' | 'outcome'>;
  readonly subgraphDuration: Histogram<'subgraph'>;
  readonly circuitState: Gauge<'subgraph'>;
  readonly retries: Counter<'subgraph'>;
  readonly hedges: Counter<'subgraph'>;
  /** Hedges not started because the router's own event loop was late, not the subgraph. */
  readonly hedgesBusy: Counter<'subgraph'>;
  readonly deduplicated: Counter<'subgraph'>;
  readonly staleSections: Counter<'subgraph'>;
  readonly partialResponses: Counter<'operation'>;
  readonly missingSections: Counter<'subgraph' | 'code'>;
  readonly queueInflight: Gauge<'operation'>;
  readonly queueWaiting: Gauge<'operation'>;
  readonly queueRejected: Counter<'operation' | 'reason'>;
  readonly queueWait: Histogram<'operation'>;
  readonly operationCost: Histogram<'kind'>;
  readonly costRejected: Counter<'operation'>;
  readonly rateLimited: Counter<'operation'>;
  /** Rate-limit decisions taken from the router's own buckets because the shared store (Redis) did not answer. */
  readonly rateLimitFallbacks: Counter;
  readonly authFailures: Counter<'reason'>;
  readonly forbidden: Counter<'scope'>;
  readonly subgraphTokens: Counter<'subgraph' | 'result'>;
  /** Look-ups of the router's token caches by result (hit, miss): verified user tokens, per-subgraph tokens. */
  readonly tokenCacheRequests: Counter<'cache' | 'result'>;
  /** Section cache look-ups by subgraph, part type (entity type or Query) and result (hit, miss, stale, bypass). */
  readonly cacheRequests: Counter<'subgraph' | 'type' | 'result'>;
  /** Section cache failures by backend (redis, memory): the cache stepped aside and the subgraph was called. */
  readonly cacheErrors: Counter<'backend'>;
  /** Reads the section cache's memory use at every scrape. */
  watchSectionCache(bytes: () => number): void;
  /** Reads a cache's own hit and miss counters at every scrape (caches that count for themselves). */
  watchCache(cache: string, stats: () => { hits: number; misses: number }): void;
  /** Reads the audit writer's counters at every scrape. */
  watchAudit(stats: () => { buffered: number; spilled: number }): void;
  /** Reads the operation recorder's counter at every scrape. */
  watchOperations(stats: () => { recorded: number }): void;
  /**
   * Executions served but not recorded in the operation registry, by client (`clientLabel`) and reason:
   * `discovery_limit` (new documents past the hourly limits) or `backlog` (this router's memory full).
   */
  readonly operationsUnrecorded: Counter<'client' | 'reason'>;
  /** Requests refused by trusted documents, by error code (DOCUMENT_NOT_TRUSTED, PERSISTED_DOCUMENT_NOT_FOUND, BAD_REQUEST), and those naming their document twice, in every mode (AMBIGUOUS_DOCUMENT, PERSISTED_QUERY_HASH_MISMATCH). */
  readonly trustedDocumentRefusals: Counter<'code'>;
  /** Operations executed, by path: `plan` (a query plan), `stitching`, or `plan_error` (a plan runner failure: the request fails, nothing is re-run). */
  readonly executions: Counter<'path'>;
  /** Documents planned, by outcome: planned, unsupported (runs by stitching), invalid or failed (planner bugs; run by stitching). */
  readonly plans: Counter<'outcome'>;
  /** Answers whose compiled projection differed from graphql-js's (`SWITCHYARD_ANSWER_PROJECTION=verify` only): a bug. */
  readonly projectionMismatches: Counter;
  readonly schemaVersion: Gauge;
  readonly schemaReloads: Counter<'result'>;
  readonly schemaLastReload: Gauge;
  /** Subscriptions open on this router, by operation. */
  readonly subscriptionsActive: Gauge<'operation'>;
  /** Subscriptions ended, by reason: client, complete, TOKEN_EXPIRED, FORBIDDEN, SUBGRAPH_UNAVAILABLE, SUBGRAPH_ERROR, SUBSCRIPTION_SCHEMA_RELOAD, SHUTTING_DOWN. */
  readonly subscriptionsEnded: Counter<'reason'>;
  /** Subscriptions refused at subscribe for a limit, by which limit: router, operation, principal. */
  readonly subscriptionsRefused: Counter<'limit'>;
  /** Upstream subscriptions open, and the connections carrying them, per subgraph. */
  readonly subscriptionUpstreams: Gauge<'subgraph'>;
  readonly subscriptionUpstreamConnections: Gauge<'subgraph'>;
  readonly subscriptionUpstreamReconnects: Counter<'subgraph'>;
  /** Events from subgraphs, per subgraph, and to clients, per operation; events a slow client did not take in time. */
  readonly subscriptionEventsIn: Counter<'subgraph'>;
  readonly subscriptionEventsOut: Counter<'operation'>;
  readonly subscriptionEventsDropped: Counter<'operation'>;
  /** Time from a subgraph's event to its completed answer (the entity fetches of the plan), per operation. */
  readonly subscriptionEventDuration: Histogram<'operation'>;
  /** Maps an operation name to a label value: at most `maxOperations` distinct names, the rest fold into one. */
  operationLabel(name: string | null | undefined): string;
  /** Maps a client name to a label value: '' to `(unknown)`, at most `maxClients` distinct names, the rest fold into `(other)`. */
  clientLabel(name: string): string;
}

export interface MetricsOptions {
  /** Distinct operation names kept as label values before folding into `(other)`. Default 200. */
  maxOperations?: number;
  /**
   * Distinct client names kept as label values before folding into `(other)`. Default 50: a fleet's
   * named apps fit, and names a caller makes up in a header cannot add more series than that.
   */
  maxClients?: number;
  /** Also export Node.js process metrics (CPU, memory, event loop). Default true. */
  processMetrics?: boolean;
  /**
   * Labels every exported series carries, e.g. `{ worker: '2' }` under `serve --workers` (each worker
   * process is scraped on its own; decision 012). Default: none, so one process's output is unchanged.
   */
  defaultLabels?: Readonly<Record<string, string>>;
}

const LATENCY_BUCKETS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function createMetrics(options: MetricsOptions = {}): RouterMetrics {
  const registry = new Registry();
  if (options.defaultLabels) registry.setDefaultLabels({ ...options.defaultLabels });
  if (options.processMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: 'switchyard_' });
  const maxOperations = options.maxOperations ?? 200;
  const knownOperations = new Set<string>();
  const maxClients = options.maxClients ?? 50;
  const knownClients = new Set<string>();
  const watchedCaches: WatchedCache[] = [];
  // Registered first, as before the groups below existed: /metrics lists series in registration order.
  const tokenCacheRequests = tokenCacheCounter(registry, watchedCaches);
  // The groups in the order /metrics lists them.
  return {
    registry,
    ...requestMetrics(registry),
    ...admissionMetrics(registry),
    tokenCacheRequests,
    ...sectionCacheMetrics(registry),
    ...watchers(registry, watchedCaches),
    ...executionMetrics(registry),
    ...operationRegistryMetrics(registry),
    ...subscriptionMetrics(registry),
    operationLabel(name) {
      if (!name) return ANONYMOUS_OPERATION;
      if (knownOperations.has(name)) return name;
      if (knownOperations.size >= maxOperations) return OTHER_OPERATION;
      knownOperations.add(name);
      return name;
    },
    clientLabel(name) {
      if (!name) return UNKNOWN_CLIENT;
      if (knownClients.has(name)) return name;
      if (knownClients.size >= maxClients) return OTHER_CLIENT;
      knownClients.add(name);
      return name;
    },
  };
}

/** A cache whose hit and miss totals `watchCache` reports, and what was reported last. */
interface WatchedCache {
  cache: string;
  stats: () => { hits: number; misses: number };
  reported: { hits: number; misses: number };
}

/** Token cache look-ups, read from the watched caches' own totals at each scrape. */
function tokenCacheCounter(registry: Registry, watchedCaches: WatchedCache[]) {
  return new Counter({
    name: METRIC.tokenCacheRequests,
    help: 'Token cache look-ups by cache (verified_token, subgraph_token) and result (hit, miss).',
    labelNames: ['cache', 'result'],
    registers: [registry],
    collect() {
      for (const watched of watchedCaches) {
        const { hits, misses } = watched.stats();
        if (hits > watched.reported.hits) this.inc({ cache: watched.cache, result: 'hit' }, hits - watched.reported.hits);
        if (misses > watched.reported.misses) this.inc({ cache: watched.cache, result: 'miss' }, misses - watched.reported.misses);
        watched.reported = { hits, misses };
      }
    },
  });
}

/** Requests at the router, and the calls they make to subgraphs with their resilience (breaker, retry, hedge, dedupe, stale sections). */
function requestMetrics(registry: Registry) {
  return {
  requests: new Counter({ name: METRIC.requests, help: 'GraphQL requests by operation name and HTTP status.', labelNames: ['operation', 'status'], registers: [registry] }),
  requestDuration: new Histogram({ name: METRIC.requestDuration, help: 'Request latency at the router, in seconds.', labelNames: ['operation'], buckets: LATENCY_BUCKETS, registers: [registry] }),
  streamPayloads: new Histogram({ name: METRIC.streamPayloads, help: 'Payloads per streamed answer (a query with @defer).', labelNames: ['operation'], buckets: [1, 2, 3, 4, 6, 8, 12, 16, 32], registers: [registry] }),
  firstPayloadDuration: new Histogram({ name: METRIC.firstPayloadDuration, help: 'Time to the first payload of a streamed answer, in seconds.', labelNames: ['operation'], buckets: LATENCY_BUCKETS, registers: [registry] }),
  lastPayloadDuration: new Histogram({ name: METRIC.lastPayloadDuration, help: 'Time to the last payload of a streamed answer, in seconds.', labelNames: ['operation'], buckets: LATENCY_BUCKETS, registers: [registry] }),
  subgraphRequests: new Counter({ name: METRIC.subgraphRequests, help: 'Calls to subgraphs by outcome.', labelNames: ['subgraph', 'outcome'], registers: [registry] }),
  subgraphDuration: new Histogram({ name: METRIC.subgraphDuration, help: 'Latency of subgraph calls, in seconds.', labelNames: ['subgraph'], buckets: LATENCY_BUCKETS, registers: [registry] }),
  circuitState: new Gauge({ name: METRIC.circuitState, help: 'Circuit breaker state per subgraph: 0 closed, 1 open, 2 half-open.', labelNames: ['subgraph'], registers: [registry] }),
  retries: new Counter({ name: METRIC.retries, help: 'Retry attempts sent to subgraphs.', labelNames: ['subgraph'], registers: [registry] }),
  hedges: new Counter({ name: METRIC.hedges, help: 'Hedge (backup) attempts sent to subgraphs.', labelNames: ['subgraph'], registers: [registry] }),
  hedgesBusy: new Counter({
    name: METRIC.hedgesBusy,
    help: 'Hedges not started because the hedge timer fired late: the router was too busy for a backup to help.',
    labelNames: ['subgraph'],
    registers: [registry],
  }),
  deduplicated: new Counter({ name: METRIC.deduplicated, help: 'Subgraph calls that joined an identical call in flight instead of being sent.', labelNames: ['subgraph'], registers: [registry] }),
  staleSections: new Counter({ name: METRIC.staleSections, help: 'Sections answered from a stale cached copy because their subgraph failed.', labelNames: ['subgraph'], registers: [registry] }),
  partialResponses: new Counter({ name: METRIC.partialResponses, help: 'Responses with at least one missing or stale section.', labelNames: ['operation'], registers: [registry] }),
  missingSections: new Counter({ name: METRIC.missingSections, help: 'Sections missing from responses, by subgraph and error code.', labelNames: ['subgraph', 'code'], registers: [registry] }),
  };
}

/** Admission (queues, cost, rate limits) and security (authentication, authorization, subgraph tokens). */
function admissionMetrics(registry: Registry) {
  return {
  queueInflight: new Gauge({ name: METRIC.queueInflight, help: 'Requests in flight per operation queue (this instance).', labelNames: ['operation'], registers: [registry] }),
  queueWaiting: new Gauge({ name: METRIC.queueWaiting, help: 'Requests waiting per operation queue (this instance).', labelNames: ['operation'], registers: [registry] }),
  queueRejected: new Counter({ name: METRIC.queueRejected, help: 'Requests refused by an operation queue, by reason (full, timeout, aborted).', labelNames: ['operation', 'reason'], registers: [registry] }),
  queueWait: new Histogram({ name: METRIC.queueWait, help: 'Time spent waiting in an operation queue, in seconds.', labelNames: ['operation'], buckets: LATENCY_BUCKETS, registers: [registry] }),
  operationCost: new Histogram({ name: METRIC.operationCost, help: 'Cost of operations, estimated before execution and actual after it.', labelNames: ['kind'], buckets: [1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 50000], registers: [registry] }),
  costRejected: new Counter({ name: METRIC.costRejected, help: 'Requests refused because their estimated cost exceeded the limit.', labelNames: ['operation'], registers: [registry] }),
  rateLimited: new Counter({ name: METRIC.rateLimited, help: 'Requests refused by the cost rate limit.', labelNames: ['operation'], registers: [registry] }),
  rateLimitFallbacks: new Counter({ name: METRIC.rateLimitFallbacks, help: "Rate-limit decisions taken from this router's own buckets because Redis did not answer.", registers: [registry] }),
  authFailures: new Counter({ name: METRIC.authFailures, help: 'Requests refused by authentication, by reason (missing, invalid, unavailable).', labelNames: ['reason'], registers: [registry] }),
  forbidden: new Counter({ name: METRIC.forbidden, help: 'Authorization denials: whole requests, requests with denied fields, or introspection refused in production.', labelNames: ['scope'], registers: [registry] }),
  subgraphTokens: new Counter({ name: METRIC.subgraphTokens, help: 'Per-subgraph tokens obtained (minted or exchanged, cached or not) and failures.', labelNames: ['subgraph', 'result'], registers: [registry] }),
  };
}

function sectionCacheMetrics(registry: Registry) {
  return {
  cacheRequests: new Counter({
    name: METRIC.cacheRequests,
    help: 'Section cache look-ups by subgraph, part type and result: hit, miss, stale (served while the subgraph failed), bypass (private part, anonymous viewer).',
    labelNames: ['subgraph', 'type', 'result'],
    registers: [registry],
  }),
  cacheErrors: new Counter({ name: METRIC.cacheErrors, help: 'Section cache backend failures; the cache stepped aside and the subgraph was called.', labelNames: ['backend'], registers: [registry] }),
  };
}

/** Series read at scrape time from a component's own stats, registered when the component starts. */
function watchers(registry: Registry, watchedCaches: WatchedCache[]): Pick<RouterMetrics, 'watchSectionCache' | 'watchCache' | 'watchAudit' | 'watchOperations'> {
  return {
  watchSectionCache(bytes) {
    new Gauge({
      name: METRIC.cacheBytes,
      help: 'Bytes of section cache entries held in this process.',
      registers: [registry],
      collect() {
        this.set(bytes());
      },
    });
  },
  watchCache(cache, stats) {
    watchedCaches.push({ cache, stats, reported: { hits: 0, misses: 0 } });
  },
  watchAudit(stats) {
    new Gauge({
      name: METRIC.auditBuffered,
      help: 'Audit entries in memory, not yet written.',
      registers: [registry],
      collect() {
        this.set(stats().buffered);
      },
    });
    let reported = 0;
    new Counter({
      name: METRIC.auditSpilled,
      help: 'Audit entries written to the local spill file because the database was unreachable (replayed later).',
      registers: [registry],
      collect() {
        const spilled = stats().spilled;
        if (spilled > reported) this.inc(spilled - reported);
        reported = spilled;
      },
    });
  },
  watchOperations(stats) {
    let reported = 0;
    new Counter({
      name: METRIC.operationsRecorded,
      help: 'Executions recorded in the operation registry (counted in memory, written in batches).',
      registers: [registry],
      collect() {
        const recorded = stats().recorded;
        if (recorded > reported) this.inc(recorded - reported);
        reported = recorded;
      },
    });
  },
  };
}

/** Trusted documents, how operations execute (plans, stitching, projection) and the served schema. */
function executionMetrics(registry: Registry) {
  return {
  trustedDocumentRefusals: new Counter({
    name: METRIC.trustedDocumentRefusals,
    help: 'Requests refused by trusted documents before parsing, by error code: DOCUMENT_NOT_TRUSTED (free text under enforce), PERSISTED_DOCUMENT_NOT_FOUND (unknown id), BAD_REQUEST (neither); in every mode, AMBIGUOUS_DOCUMENT (a documentId with query text, or with another hash) and PERSISTED_QUERY_HASH_MISMATCH (a persisted-query hash that is not the text\'s).',
    labelNames: ['code'],
    registers: [registry],
  }),
  executions: new Counter({ name: METRIC.executions, help: 'Operations executed, by path: plan (a query plan made once per document and decision), stitching (subscriptions, or every operation with query plans off), or plan_error (the plan runner failed: a bug; the request failed).', labelNames: ['path'], registers: [registry] }),
  projectionMismatches: new Counter({ name: METRIC.projectionMismatches, help: 'Planned answers whose compiled projection differed from graphql-js execute (counted only with SWITCHYARD_ANSWER_PROJECTION=verify; the answer given is graphql-js\'s). Anything but 0 is a bug.', registers: [registry] }),
  plans: new Counter({ name: METRIC.plans, help: 'Documents planned (once per document and graph), by outcome: planned, unsupported (runs by stitching), invalid (a subgraph document failed validation against its subgraph; a planner bug) or failed (the planner threw; a bug).', labelNames: ['outcome'], registers: [registry] }),
  schemaVersion: new Gauge({ name: METRIC.schemaVersion, help: 'Generation of the schema being served (increments on every swap).', registers: [registry] }),
  schemaReloads: new Counter({ name: METRIC.schemaReloads, help: 'Schema reloads by result (swapped, unchanged, failed).', labelNames: ['result'], registers: [registry] }),
  schemaLastReload: new Gauge({ name: METRIC.schemaLastReload, help: 'Unix time of the last schema swap, in seconds.', registers: [registry] }),
  };
}

/** Subscriptions toward clients and subgraphs (docs/subscriptions.md). */
function subscriptionMetrics(registry: Registry) {
  return {
  subscriptionsActive: new Gauge({ name: METRIC.subscriptionsActive, help: 'Subscriptions open on this router, by operation.', labelNames: ['operation'], registers: [registry] }),
  subscriptionsEnded: new Counter({ name: METRIC.subscriptionsEnded, help: 'Subscriptions ended, by reason: client (the client left), complete (the subgraph ended it), or the error code the client got.', labelNames: ['reason'], registers: [registry] }),
  subscriptionsRefused: new Counter({ name: METRIC.subscriptionsRefused, help: 'Subscriptions refused with SUBSCRIPTION_LIMIT, by limit: router, operation or principal.', labelNames: ['limit'], registers: [registry] }),
  subscriptionUpstreams: new Gauge({ name: METRIC.subscriptionUpstreams, help: 'Upstream subscriptions open, per subgraph (each shared by every client with the same document, variables and token holder).', labelNames: ['subgraph'], registers: [registry] }),
  subscriptionUpstreamConnections: new Gauge({ name: METRIC.subscriptionUpstreamConnections, help: 'Connections carrying upstream subscriptions, per subgraph.', labelNames: ['subgraph'], registers: [registry] }),
  subscriptionUpstreamReconnects: new Counter({ name: METRIC.subscriptionUpstreamReconnects, help: 'Reconnection attempts after a subgraph dropped a subscription connection.', labelNames: ['subgraph'], registers: [registry] }),
  subscriptionEventsIn: new Counter({ name: METRIC.subscriptionEventsIn, help: 'Subscription events received from subgraphs.', labelNames: ['subgraph'], registers: [registry] }),
  subscriptionEventsOut: new Counter({ name: METRIC.subscriptionEventsOut, help: 'Subscription events sent to clients, by operation.', labelNames: ['operation'], registers: [registry] }),
  subscriptionEventsDropped: new Counter({ name: METRIC.subscriptionEventsDropped, help: 'Subscription events not sent because the client had too many waiting (the oldest go first).', labelNames: ['operation'], registers: [registry] }),
  subscriptionEventDuration: new Histogram({ name: METRIC.subscriptionEventDuration, help: 'Time to complete one subscription event with its entity fetches, in seconds.', labelNames: ['operation'], buckets: LATENCY_BUCKETS, registers: [registry] }),
  };
}

/** What the operation registry could not keep (its recorded executions are read by `watchOperations`). */
function operationRegistryMetrics(registry: Registry) {
  return {
  operationsUnrecorded: new Counter({
    name: METRIC.operationsUnrecorded,
    help: 'Executions served but not recorded in the operation registry, by client (a bounded set of names, then (other)) and reason: discovery_limit (new documents past the hourly limits), backlog (the router had too many distinct documents waiting to be written).',
    labelNames: ['client', 'reason'],
    registers: [registry],
  }),
  };
}
