// Counters of a demo subgraph, read by tests and demos through GET /admin/stats (and GET /admin/subscriptions).

/** Subscriptions over either transport (GraphQL over WebSocket, GraphQL over SSE). */
export interface SubscriptionCounters {
  /** Subscriptions streaming right now (a gauge: `reset()` leaves it alone). */
  open: number;
  /** GraphQL over WebSocket connections open right now, with or without subscriptions (a gauge). */
  connections: number;
  /** Subscriptions that started streaming (a subscribe that failed, e.g. a bad argument, is not counted). */
  started: number;
  /** Events sent to subscribers, over all subscriptions. */
  events: number;
}

export interface StatsSnapshot {
  /** Every HTTP request, admin and health checks and WebSocket upgrades included. */
  requests: number;
  /** Requests to `/graphql`, whatever their fate (faults included). */
  graphqlRequests: number;
  /** GraphQL requests whose query contains `_entities` (counted when yoga reads the parameters, so not for faulted requests). */
  entityRequests: number;
  /** Calls (= batches) per data source, keyed by loader name. */
  dataSourceCalls: Record<string, number>;
  /** `/graphql` requests the client gave up on before they were answered (hanging ones included; not an SSE stream the client ended). */
  aborted: number;
  /** `/graphql` requests the authentication step did not let through (401, 403, 503 when the router's keys were unreachable, 500). */
  unauthorized: number;
  /** `/graphql` requests being handled right now, SSE subscription streams included (a gauge: `reset()` leaves it alone). */
  inFlight: number;
  /** W3C `traceparent` headers of the latest `/graphql` requests (at most 200, oldest dropped): which trace each call belonged to. */
  traceparents: string[];
  subscriptions: SubscriptionCounters;
}

const TRACEPARENTS_KEPT = 200;

/** The live counters (mutated in place on the request path) plus ways to read and zero them. */
export interface SubgraphStats extends StatsSnapshot {
  /** A copy of the counters, for JSON answers and assertions. */
  snapshot(): StatsSnapshot;
  /** Zeroes every counter except the gauges (`inFlight`, `subscriptions.open`, `subscriptions.connections`), which must keep matching reality. */
  reset(): void;
}

/** Keeps a request's `traceparent` (bounded). */
export function recordTraceparent(stats: SubgraphStats, traceparent: string | string[] | undefined): void {
  if (typeof traceparent !== 'string') return;
  stats.traceparents.push(traceparent.slice(0, 64));
  if (stats.traceparents.length > TRACEPARENTS_KEPT) stats.traceparents.shift();
}

export function createSubgraphStats(): SubgraphStats {
  const stats: SubgraphStats = {
    requests: 0,
    graphqlRequests: 0,
    entityRequests: 0,
    dataSourceCalls: {},
    aborted: 0,
    unauthorized: 0,
    inFlight: 0,
    traceparents: [],
    subscriptions: { open: 0, connections: 0, started: 0, events: 0 },
    snapshot: function snapshotStats() {
      return {
        requests: stats.requests,
        graphqlRequests: stats.graphqlRequests,
        entityRequests: stats.entityRequests,
        dataSourceCalls: { ...stats.dataSourceCalls },
        aborted: stats.aborted,
        unauthorized: stats.unauthorized,
        inFlight: stats.inFlight,
        traceparents: [...stats.traceparents],
        subscriptions: { ...stats.subscriptions },
      };
    },
    reset: function resetStats() {
      stats.requests = 0;
      stats.graphqlRequests = 0;
      stats.entityRequests = 0;
      stats.aborted = 0;
      stats.unauthorized = 0;
      stats.traceparents = [];
      stats.subscriptions.started = 0;
      stats.subscriptions.events = 0;
      for (const name of Object.keys(stats.dataSourceCalls)) stats.dataSourceCalls[name] = 0;
    },
  };
  return stats;
}
