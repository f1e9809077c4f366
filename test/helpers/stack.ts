// Starts the demo subgraphs, a test store and a router on ephemeral ports, as one disposable stack.
import { demoSubgraphs, type DemoSubgraph, type DemoSubgraphName, type RunningSubgraph } from '../../subgraphs/index.js';
import { loadConfig } from '../../src/config/load-config.js';
import type { ConfigInput } from '../../src/config/schema.js';
import type { Database } from '../../src/registry/database.js';
import { publishSubgraph } from '../../src/registry/subgraph-store.js';
import { compositionCheck } from '../../src/cli/registry-commands.js';
import { startRouter, type RunningRouter, type StartRouterOptions } from '../../src/cli/start-router.js';
import type { RouteMetadata } from '../../src/registry/route.js';
import type { ServedGraph } from '../../src/gateway/served-graph.js';
import { createTestStore, openMigrated, type TestStore } from './database.js';
import { postGraphQL, type PostOptions } from './http.js';

export interface StartedSubgraph {
  subgraph: DemoSubgraph;
  running: RunningSubgraph;
}

export interface Stack {
  store: TestStore;
  /** The test's own connection to the store (publish, inspect). */
  db: Database;
  router: RunningRouter;
  subgraphs: Record<DemoSubgraphName, StartedSubgraph>;
  query<T = any>(query: string, options?: PostOptions): ReturnType<typeof postGraphQL<T>>;
  /** Starts another router on the same store (a second instance behind a load balancer). */
  startRouter(overrides?: Partial<ConfigInput>): Promise<RunningRouter>;
  /** Resolves with the next graph the router swaps in. */
  nextSwap(router?: RunningRouter): Promise<ServedGraph | undefined>;
  /** Republishes a demo subgraph with new route metadata and waits until the router serves it. */
  publishRoute(name: DemoSubgraphName, route: RouteMetadata): Promise<void>;
  /** One sample of the router's Prometheus text (0 when absent). */
  metric(name: string, labels: Record<string, string>): Promise<number>;
  close(): Promise<void>;
}

export interface StackOptions {
  subgraphs?: DemoSubgraphName[];
  config?: Partial<ConfigInput>;
  /** Subgraphs accept only the router's per-subgraph tokens, as in the demo. Default true. */
  requireTokens?: boolean;
  /** Logger, span exporter... of every router the stack starts. */
  routerOptions?: Omit<StartRouterOptions, 'config' | 'database'>;
}

/**
 * Quiet, ephemeral router settings for tests; `overrides` win. Answers are shaped by both
 * projections (`answerProjection: 'verify'`): graphql-js's answers, and every answer of the
 * compiled one compared with it; `assertProjectionsAgreed` fails the test on any difference.
 */
export function testConfig(store: TestStore, overrides: Partial<ConfigInput> = {}) {
  return loadConfig({ port: 0, logLevel: 'silent', databaseUrl: store.databaseUrl, dataDir: store.dataDir, registryPollMs: 50, sectionCache: false, answerProjection: 'verify', ...overrides }, {});
}

/** Fails when a router's compiled projection answered otherwise than graphql-js (verify mode counts it). */
export async function assertProjectionsAgreed(routers: readonly RunningRouter[]): Promise<void> {
  for (const router of routers) {
    const mismatches = await readMetric(router, 'switchyard_projection_mismatches_total', {}).catch(() => 0);
    if (mismatches > 0) throw new Error(`the compiled answer projection differed from graphql-js ${mismatches} time(s) on ${router.url} (the router's error log has each difference)`);
  }
}

export function nextSwap(router: RunningRouter): Promise<ServedGraph | undefined> {
  return new Promise((resolve) => {
    const off = router.graph.onSwap((graph) => {
      off();
      resolve(graph);
    });
  });
}

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const names = options.subgraphs ?? (['product', 'reviews', 'inventory'] as DemoSubgraphName[]);
  const store = await createTestStore();
  const routers: RunningRouter[] = [];
  const started: Partial<Record<DemoSubgraphName, StartedSubgraph>> = {};
  const db = await openMigrated(store);
  try {
    for (const name of names) {
      // Stock moves only when a test pushes it (POST /admin/inventory), so every subscription event is the test's own.
      const subgraph = demoSubgraphs[name]({ env: { INVENTORY_TICK_MS: '0' } });
      const running = await subgraph.listen(0);
      started[name] = { subgraph, running };
      await publishSubgraph(db, { name, url: running.url, sdl: subgraph.sdl }, compositionCheck);
    }
    const start = async (overrides: Partial<ConfigInput> = {}) => {
      const router = await startRouter({ ...options.routerOptions, config: testConfig(store, { ...options.config, ...overrides }) });
      routers.push(router);
      return router;
    };
    const router = await start();
    if (options.requireTokens ?? true) {
      // Every instance shares the keys in the store, so the first router's JWKS serves them all.
      const jwksUrl = router.url.replace(/\/graphql$/, '/.well-known/jwks.json');
      for (const { subgraph } of Object.values(started)) subgraph.requireTokens({ jwksUrl });
    }
    return {
      store,
      db,
      router,
      subgraphs: started as Record<DemoSubgraphName, StartedSubgraph>,
      query: (query, queryOptions) => postGraphQL(router.url, query, queryOptions),
      startRouter: start,
      nextSwap: (r = router) => nextSwap(r),
      async publishRoute(name, route) {
        const { running, subgraph } = started[name]!;
        const swapped = nextSwap(router);
        await publishSubgraph(db, { name, url: running.url, sdl: subgraph.sdl, route }, compositionCheck);
        await swapped;
      },
      metric: (name, labels) => readMetric(router, name, labels),
      async close() {
        const agreed = assertProjectionsAgreed(routers);
        await agreed.catch(() => {});
        for (const r of routers.reverse()) await r.close();
        for (const s of Object.values(started)) await s.running.close();
        await db.close();
        await store.destroy();
        await agreed;
      },
    };
  } catch (error) {
    for (const r of routers) await r.close().catch(() => {});
    for (const s of Object.values(started)) await s.running.close().catch(() => {});
    await db.close().catch(() => {});
    await store.destroy().catch(() => {});
    throw error;
  }
}

/** Reads one sample of a router's Prometheus text (0 when absent). */
export async function readMetric(router: RunningRouter, name: string, labels: Record<string, string>): Promise<number> {
  const text = await (await fetch(router.url.replace(/graphql$/, 'metrics'))).text();
  const selector = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(',');
  const prefix = selector ? `${name}{${selector}}` : `${name} `;
  const line = text.split('\n').find((l) => l.startsWith(prefix));
  return line ? Number(line.split(' ').at(-1)) : 0;
}
