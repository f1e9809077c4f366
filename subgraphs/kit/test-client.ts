// Test helpers for the demo subgraphs: start servers on port 0, post GraphQL, read admin endpoints.
import type { DemoSubgraph, RunningSubgraph } from './types.js';
import type { StatsSnapshot } from './subgraph-stats.js';

export interface GraphqlAnswer<TData = any> {
  status: number;
  body: { data?: TData | null; errors?: { message: string; extensions?: Record<string, unknown> }[] };
}

/** POSTs a GraphQL request and parses the JSON answer. */
export async function postGraphql<TData = any>(url: string, query: string, variables?: Record<string, unknown>, init: RequestInit = {}): Promise<GraphqlAnswer<TData>> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json' },
    body: JSON.stringify({ query, variables }),
    ...init,
  });
  return { status: response.status, body: (await response.json()) as GraphqlAnswer<TData>['body'] };
}

/** The base address (without `/graphql`) of a running subgraph, for /admin and /healthz. */
export function baseUrl(running: RunningSubgraph): string {
  return running.url.slice(0, -'/graphql'.length);
}

export async function readStats(running: RunningSubgraph): Promise<StatsSnapshot> {
  const response = await fetch(`${baseUrl(running)}/admin/stats`);
  return (await response.json()) as StatsSnapshot;
}

/** Polls `/admin/stats` (each fetch awaited, no fixed sleeps) until `accept` holds or `timeoutMs` passes. */
export async function waitForStats(running: RunningSubgraph, accept: (stats: StatsSnapshot) => boolean, timeoutMs = 5_000): Promise<StatsSnapshot> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const stats = await readStats(running);
    if (accept(stats)) return stats;
    if (Date.now() > deadline) throw new Error(`stats never matched: ${JSON.stringify(stats)}`);
  }
}

/** Starts subgraphs on ephemeral ports and closes all of them at once (for `afterAll`/`afterEach`). */
export function createServerPool(): { start(subgraph: DemoSubgraph): Promise<RunningSubgraph>; closeAll(): Promise<void> } {
  const running = new Set<RunningSubgraph>();
  return {
    start: async function startOnEphemeralPort(subgraph) {
      const server = await subgraph.listen(0);
      running.add(server);
      return server;
    },
    closeAll: async function closeAllServers() {
      const servers = [...running];
      running.clear();
      await Promise.all(servers.map((server) => server.close()));
    },
  };
}

/** `count` entity representations of catalogue products, ids "1".."count". */
export function productRepresentations(count: number, from = 1): { __typename: 'Product'; id: string }[] {
  return Array.from({ length: count }, (_, i) => ({ __typename: 'Product' as const, id: String(from + i) }));
}

/** POSTs JSON to an admin route and parses the answer. */
export async function postAdmin(running: RunningSubgraph, path: string, body: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${baseUrl(running)}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}

/** The next `count` values of a stream (awaited one by one, no timers); the stream stays open. */
export async function take<T>(stream: AsyncIterator<T>, count: number): Promise<T[]> {
  const values: T[] = [];
  while (values.length < count) {
    const next = await stream.next();
    if (next.done) throw new Error(`stream ended after ${values.length} of ${count} values`);
    values.push(next.value);
  }
  return values;
}
