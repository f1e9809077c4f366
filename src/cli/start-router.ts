// Starts a router process's services: database, change feed, graph source, HTTP server; and stops them in order.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import type { Config } from '../config/schema.js';
import { openDatabase } from '../registry/open-database.js';
import type { Database } from '../registry/database.js';
import { migrate } from '../registry/migrate.js';
import { watchChanges, type ChangeFeed } from '../registry/change-feed.js';
import { listPolicies, PolicyBook } from '../registry/policy-store.js';
import type { RouteMetadata } from '../registry/route.js';
import { resolveRoute, SubgraphHealthBook } from '../resilience/subgraph-health.js';
import { createSubgraphExecutor } from '../gateway/subgraph-executor.js';
import { createFileGraphSource, createRegistryGraphSource, type GraphSource } from '../gateway/graph-sources.js';
import type { SubgraphEndpoint } from '../gateway/gateway-schema.js';
import { GraphHolder } from '../gateway/served-graph.js';
import { createRouter, type Router } from '../router.js';
import { createOperationQueues } from '../plugins/use-operation-queue.js';
import { databaseTicketStore, memoryTicketStore } from '../plugins/queue/ticket-store.js';
import { createLogger, type Logger } from '../telemetry/logger.js';
import { createMetrics, type RouterMetrics } from '../telemetry/metrics.js';

export interface StartRouterOptions {
  config: Config;
  /** An already open database (shared with the caller, who closes it). Default: opened from config, closed here. */
  database?: Database;
  logger?: Logger;
}

export interface RunningRouter {
  readonly url: string;
  readonly port: number;
  readonly graph: GraphHolder;
  readonly metrics: RouterMetrics;
  readonly policies: PolicyBook;
  readonly router: Router;
  /** The metadata store, unless serving a supergraph file. */
  readonly database: Database | undefined;
  /** Stops accepting, lets requests in flight finish, then releases the feed, pools and database. */
  close(): Promise<void>;
}

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

export async function startRouter(options: StartRouterOptions): Promise<RunningRouter> {
  const { config } = options;
  const logger = options.logger ?? createLogger({ level: config.logLevel });
  const metrics = createMetrics();
  const graph = new GraphHolder();
  const policies = new PolicyBook();
  const health = new SubgraphHealthBook(metrics);
  // One keep-alive pool for all subgraph calls; it outlives graph swaps, so a swap opens no new connections.
  const dispatcher = new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 60_000, connections: 256 });
  const executorFor = (endpoint: SubgraphEndpoint, metadata: RouteMetadata) => {
    const route = resolveRoute(metadata, { timeoutMs: config.subgraphTimeoutMs });
    return createSubgraphExecutor({ name: endpoint.name, url: endpoint.url, route, health: health.get(endpoint.name, route), dispatcher, metrics, defaultDeadlineMs: config.defaultDeadlineMs, resilience: config.resilience });
  };
  const overrideLabels = new Set(config.overrideLabels);

  let database: Database | undefined;
  // Waiting tickets go to the database when there is one, so any instance honours them.
  let queues = createOperationQueues({ policies, metrics, tickets: memoryTicketStore() });
  const ownsDatabase = options.database === undefined;
  let fileSource: GraphSource | undefined;
  let feed: ChangeFeed | undefined;
  try {
    if (config.supergraphFile) {
      // A supergraph composed elsewhere needs no registry; policies stay at their defaults.
      fileSource = createFileGraphSource({ file: config.supergraphFile, holder: graph, executorFor, logger, metrics, overrideLabels });
      await fileSource.start();
    } else {
      const db = (database = options.database ?? (await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir })));
      await migrate(db);
      queues = createOperationQueues({ policies, metrics, tickets: databaseTicketStore(db) });
      const registry = createRegistryGraphSource({ db, holder: graph, executorFor, logger, metrics, overrideLabels });
      // One feed for every live table: each topic reloads its own in-memory copy.
      feed = await watchChanges(
        db,
        async function onRegistryChange(topic) {
          if (topic === 'subgraphs') await registry.reload();
          else if (topic === 'policies') {
            policies.replace(await listPolicies(db));
            queues.pumpAll();
          }
        },
        { pollMs: config.registryPollMs, onError: (error) => logger.warn({ err: error }, 'registry change check failed') },
      );
    }
  } catch (error) {
    await fileSource?.stop().catch(() => {});
    await feed?.stop().catch(() => {});
    await dispatcher.close().catch(() => {});
    if (ownsDatabase) await database?.close().catch(() => {});
    throw error;
  }

  const db = database;
  const router = createRouter({
    config,
    graph,
    metrics,
    logger,
    policies,
    queues,
    isReady: db ? () => db.query('select 1').then(() => true, () => false) : undefined,
  });
  const server = createServer(router);
  // Keep-alive sockets of clients must not hold shutdown hostage.
  server.keepAliveTimeout = 5_000;
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await fileSource?.stop();
      await feed?.stop();
      await dispatcher.close();
      if (ownsDatabase) await database?.close();
    })());
  try {
    const address = await listen(server, config.port, config.host);
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${address.port}/graphql`;
    logger.info({ url, source: config.supergraphFile ?? 'registry' }, 'router listening');
    return { url, port: address.port, graph, metrics, policies, router, database, close };
  } catch (error) {
    await close().catch(() => {});
    throw error;
  }
}
