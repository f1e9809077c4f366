// Starts the Federation v2 fixture subgraphs (and optionally the demo subgraphs), publishes them to a test store, and starts routers on it.
import { demoSubgraphs, DEMO_SUBGRAPH_NAMES, type RunningSubgraph } from '../../subgraphs/index.js';
import { compositionCheck } from '../../src/cli/registry-commands.js';
import { startRouter, type RunningRouter } from '../../src/cli/start-router.js';
import type { ConfigInput } from '../../src/config/schema.js';
import type { Database } from '../../src/registry/database.js';
import { publishSubgraph } from '../../src/registry/subgraph-store.js';
import { ALL_FEDERATION_FIXTURES, type FederationFixture } from '../fixtures/federation/index.js';
import { createTestStore, openMigrated, type TestStore } from './database.js';
import { startFixtureSubgraph, type RunningFixture } from './fixture-subgraph.js';
import { assertProjectionsAgreed, testConfig } from './stack.js';

export interface FederationStackOptions {
  /** Default every fixture, in their composing order. */
  fixtures?: readonly FederationFixture[];
  /** Also publish the three demo subgraphs (product, reviews, inventory), without token checks. Default false. */
  demo?: boolean;
}

export interface FederationStack {
  store: TestStore;
  db: Database;
  /** Running fixture subgraphs by registry name (their `requests` record what the routers sent). */
  fixtures: Map<string, RunningFixture>;
  /** Starts a router on the stack's store; it is closed with the stack. */
  startRouter(overrides?: Partial<ConfigInput>): Promise<RunningRouter>;
  close(): Promise<void>;
}

export async function startFederationStack(options: FederationStackOptions = {}): Promise<FederationStack> {
  const list = options.fixtures ?? ALL_FEDERATION_FIXTURES;
  const store = await createTestStore();
  const fixtures = new Map<string, RunningFixture>();
  const demos: RunningSubgraph[] = [];
  const routers: RunningRouter[] = [];
  let db: Database | undefined;
  const close = async () => {
    for (const r of routers.reverse()) await r.close().catch(() => {});
    await Promise.all([...fixtures.values()].map((f) => f.close().catch(() => {})));
    await Promise.all(demos.map((d) => d.close().catch(() => {})));
    await db?.close().catch(() => {});
    await store.destroy().catch(() => {});
  };
  try {
    const started = await Promise.all(list.map((f) => startFixtureSubgraph({ sdl: f.sdl, resolvers: f.resolvers })));
    list.forEach((f, i) => fixtures.set(f.name, started[i]));
    db = await openMigrated(store);
    for (const f of list) await publishSubgraph(db, { name: f.name, url: fixtures.get(f.name)!.url, sdl: f.sdl }, compositionCheck);
    if (options.demo) {
      for (const name of DEMO_SUBGRAPH_NAMES) {
        // Stock moves only when a test pushes it (POST /admin/inventory), so every subscription event is the test's own.
        const subgraph = demoSubgraphs[name]({ env: { INVENTORY_TICK_MS: '0' } });
        const running = await subgraph.listen(0);
        demos.push(running);
        await publishSubgraph(db, { name, url: running.url, sdl: subgraph.sdl }, compositionCheck);
      }
    }
    const opened = db;
    return {
      store,
      db: opened,
      fixtures,
      async startRouter(overrides = {}) {
        const router = await startRouter({ config: testConfig(store, overrides) });
        routers.push(router);
        return router;
      },
      async close() {
        const agreed = await assertProjectionsAgreed(routers).then(
          () => undefined,
          (error: unknown) => error,
        );
        await close();
        if (agreed) throw agreed;
      },
    };
  } catch (error) {
    await close();
    throw error;
  }
}
