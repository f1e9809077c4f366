// Counters of a demo subgraph, read by tests and demos through GET /admin/stats.

export interface StatsSnapshot {
  /** Every HTTP request, admin and health checks included. */
  requests: number;
  /** Requests to `/graphql`, whatever their fate (faults included). */
  graphqlRequests: number;
  /** GraphQL requests whose query contains `_entities` (counted when yoga reads the parameters, so not for faulted requests). */
  entityRequests: number;
  /** Calls (= batches) per data source, keyed by loader name. */
  dataSourceCalls: Record<string, number>;
  /** `/graphql` requests the client gave up on before they were answered (hanging ones included). */
  aborted: number;
  /** `/graphql` requests the authentication step did not let through (401, 403, 503 when the router's keys were unreachable, 500). */
  unauthorized: number;
  /** `/graphql` requests being handled right now (a gauge: `reset()` leaves it alone). */
  inFlight: number;
  /** W3C `traceparent` headers of the latest `/graphql` requests (at most 200, oldest dropped): which trace each call belonged to. */
  traceparents: string[];
}

const TRACEPARENTS_KEPT = 200;

/** The live counters (mutated in place on the request path) plus ways to read and zero them. */
export interface SubgraphStats extends StatsSnapshot {
  /** A copy of the counters, for JSON answers and assertions. */
  snapshot(): StatsSnapshot;
  /** Zeroes every counter except the `inFlight` gauge, which must keep matching reality. */
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
      };
    },
    reset: function resetStats() {
      stats.requests = 0;
      stats.graphqlRequests = 0;
      stats.entityRequests = 0;
      stats.aborted = 0;
      stats.unauthorized = 0;
      stats.traceparents = [];
      for (const name of Object.keys(stats.dataSourceCalls)) stats.dataSourceCalls[name] = 0;
    },
  };
  return stats;
}
