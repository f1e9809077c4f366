// `switchyard demo`: the three demo subgraphs, the embedded database and the router, in one process.
import type { Config } from '../config/schema.js';
import { openDatabase } from '../registry/open-database.js';
import { migrate } from '../registry/migrate.js';
import { demoSubgraphs, type DemoSubgraph, type DemoSubgraphName, type RunningSubgraph } from '../../subgraphs/index.js';
import { publishSubgraph } from '../registry/subgraph-store.js';
import { compositionCheck } from './registry-commands.js';
import { startRouter, type RunningRouter } from './start-router.js';
import type { OpeningDocument, TabDocument } from '../graphiql/opening-tab.js';

export interface DemoOptions {
  config: Config;
  /** Port of the first subgraph; the others follow. 0 gives each an ephemeral port. Default 4001. */
  subgraphPortBase: number;
  /** Where the subgraphs read their start-up knobs (`FAULT_*`, `INVENTORY_TICK_MS`); tests pass `{ INVENTORY_TICK_MS: '0' }`. Default `process.env`. */
  subgraphEnv?: NodeJS.ProcessEnv;
}

export interface RunningDemo {
  router: RunningRouter;
  subgraphs: RunningSubgraph[];
  close(): Promise<void>;
}

const DEMO_ORDER: DemoSubgraphName[] = ['product', 'reviews', 'inventory'];

/** The README's product page: one query, a field or more from each subgraph. GraphiQL opens on it in the demo. */
export const PRODUCT_PAGE: OpeningDocument = {
  query: /* GraphQL */ `query ProductPage($id: ID!) { product(id: $id) { name price reviews { rating body author } inventory { inStock warehouse } } }`,
  variables: { id: '2' },
};

/** The same page with its reviews deferred (`@defer`): GraphiQL's second tab in the demo, where the reviews show after the rest. */
export const PRODUCT_PAGE_DEFERRED: TabDocument = {
  query: /* GraphQL */ `query ProductPageDeferred($id: ID!) { product(id: $id) { name price inventory { inStock warehouse } ... @defer(label: "reviews") { reviews { rating body author } } } }`,
  variables: { id: '2' },
  // Short lines: the editor is about 60 characters wide on a laptop screen.
  note: [
    'The product page with its reviews deferred:',
    'the router answers the rest at once, then the',
    'reviews when their subgraph does. GraphiQL',
    'shows each part as it arrives.',
  ],
};

/**
 * The inventory subgraph's stock feed, through the router: GraphiQL's third tab in the demo. The product's
 * name, price and reviews come from the other subgraphs, fetched for each event. The note names the
 * inventory subgraph's admin API where it really listens (its port follows `subgraphPortBase`).
 */
export function stockUpdates(inventoryUrl: string): TabDocument {
  return {
    query: /* GraphQL */ `subscription StockUpdates($id: ID) { inventoryChanged(productId: $id) { inStock product { name price reviews { rating } } } }`,
    variables: { id: '2' },
    note: [
      "The product's stock, live: while this runs, an",
      'event arrives about once a second; the ■ button',
      '(where ▶ was) stops it. To push a change yourself:',
      `  curl -XPOST ${new URL('/admin/inventory', inventoryUrl).href} \\`,
      `    -d '{"productId":"2","inStock":7}'`,
    ],
  };
}

/**
 * 1. Start the demo subgraphs (product, reviews, inventory).
 * 2. Open the database (embedded unless DATABASE_URL) and migrate it.
 * 3. Publish each subgraph whose URL or schema differs from the registry (first start, or new ports).
 * 4. Start the router on that database; it composes what the registry holds.
 * 5. Point the subgraphs at the router's JWKS: they then refuse calls without a token made for them.
 */
export async function startDemo(options: DemoOptions): Promise<RunningDemo> {
  const subgraphs: RunningSubgraph[] = [];
  const demo: DemoSubgraph[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  try {
    for (const [index, name] of DEMO_ORDER.entries()) {
      const port = options.subgraphPortBase === 0 ? 0 : options.subgraphPortBase + index;
      const subgraph = demoSubgraphs[name]({ env: options.subgraphEnv });
      demo.push(subgraph);
      const running = await subgraph.listen(port, '127.0.0.1');
      subgraphs.push(running);
      cleanups.push(() => running.close());
    }
    const db = await openDatabase({ databaseUrl: options.config.databaseUrl, dataDir: options.config.dataDir });
    cleanups.push(() => db.close());
    await migrate(db);
    for (const [index, name] of DEMO_ORDER.entries()) {
      await publishSubgraph(db, { name, url: subgraphs[index].url, sdl: demo[index].sdl }, compositionCheck);
    }
    const router = await startRouter({ config: options.config, database: db, graphiqlDocument: { ...PRODUCT_PAGE, moreTabs: [PRODUCT_PAGE_DEFERRED, stockUpdates(subgraphs[DEMO_ORDER.indexOf('inventory')].url)] } });
    cleanups.push(() => router.close());
    // From now on each subgraph accepts only tokens the router minted for it (checked against the router's JWKS).
    const jwksUrl = router.url.replace(/\/graphql$/, '/.well-known/jwks.json');
    for (const subgraph of demo) subgraph.requireTokens({ jwksUrl });
    return {
      router,
      subgraphs,
      async close() {
        for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
      },
    };
  } catch (error) {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
    throw error;
  }
}
