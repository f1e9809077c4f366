// The demo catalogue as a benchmark backend: the fast stand-ins by default, the real demo subgraphs on request.
import path from 'node:path';
import { PACKAGE_ROOT } from '../../src/config/paths.js';
import { countSubgraphRequests, writeSupergraph } from '../lib/supergraph.js';
import type { Backend, RunningBackend, StartContext } from '../lib/types.js';
import { FAST_DEMO_SUBGRAPH_NAMES, readDemoSdl } from './fast-demo-subgraphs.js';
import { fastSubgraphsBackend } from './fast-subgraphs-backend.js';

/** The demo catalogue holds ids "1".."1000" (subgraphs/kit/catalog.ts). */
const CATALOGUE_SIZE = 1000;

/** The product id of request `n`: cycles through the whole catalogue, so 50 requests in flight never share an id. */
export function productIdFor(n: number): string {
  return String((n % CATALOGUE_SIZE) + 1);
}

/** The demo product page: product, then reviews and inventory in parallel (three subgraph calls). */
export const PRODUCT_PAGE = /* GraphQL */ `
  query ProductPage($id: ID!) {
    product(id: $id) { id name price reviews { id rating body author } inventory { inStock warehouse } }
  }
`;

/** Request `n` of the product page, its id from productIdFor. */
export function productPageRequest(n: number): { query: string; operationName: string; variables: { id: string } } {
  return { query: PRODUCT_PAGE, operationName: 'ProductPage', variables: { id: productIdFor(n) } };
}

/** The line prefix its process prints before the subgraph URLs. */
export const FAST_DEMO_LABEL = 'fast demo subgraphs';

/**
 * The demo schema and data served by bench/backends/fast-demo-subgraphs-main.ts: one process on the load
 * core, a few times cheaper per call than the yoga-based demo subgraphs, so that the gateway stays the
 * bottleneck. Same SDL files, same generated tables: the data check hashes are those of the real demo.
 */
export const fastDemoBackend = fastSubgraphsBackend({
  name: 'fast-demo',
  description: 'demo schema and data on lean graphql-js servers (bench/backends/fast-subgraph-server.ts), one process',
  entry: 'fast-demo-subgraphs-main.js',
  label: FAST_DEMO_LABEL,
  subgraphs: FAST_DEMO_SUBGRAPH_NAMES,
  sdlOf: readDemoSdl,
});

/**
 * The real demo subgraphs (`switchyard subgraph serve NAME`, graphql-yoga, DataLoader), one process each on
 * the load core. Kept for comparison: on 2 cores they need about as much CPU per product page as the router,
 * so with them the load core saturates first (the bench warns) and the figures understate router costs.
 */
export const demoSubgraphsBackend: Backend = {
  name: 'demo',
  description: 'demo subgraphs (switchyard subgraph serve), one process each',
  async start(context: StartContext): Promise<RunningBackend> {
    const processes = await Promise.all(
      FAST_DEMO_SUBGRAPH_NAMES.map((name) =>
        context.supervisor.start({
          name: `${name} subgraph`,
          command: process.execPath,
          args: [path.join(PACKAGE_ROOT, 'bin', 'switchyard.js'), 'subgraph', 'serve', name, '--port', '0'],
          env: { LOG_LEVEL: 'silent', NODE_ENV: 'production' },
          core: context.cores.load,
          cwd: PACKAGE_ROOT,
        }),
      ),
    );
    const urls = processes.map((p) => p.announced);
    const subgraphs = FAST_DEMO_SUBGRAPH_NAMES.map((name, i) => ({ name, url: urls[i], sdl: readDemoSdl(name) }));
    const supergraphFile = writeSupergraph(context.workDir, 'demo', subgraphs);
    return { supergraphFile, subgraphs, processes, subgraphRequests: () => countSubgraphRequests(urls) };
  },
};
