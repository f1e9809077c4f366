// Starts a router process's services: database, graph source, HTTP server; and stops them in order.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import type { Config } from '../config/schema.js';
import { openDatabase } from '../registry/open-database.js';
import type { Database } from '../registry/database.js';
import { migrate } from '../registry/migrate.js';
import { createSubgraphExecutor } from '../gateway/subgraph-executor.js';
import { createFileGraphSource, createRegistryGraphSource, type GraphSource } from '../gateway/graph-sources.js';
import { GraphHolder } from '../gateway/served-graph.js';
import { createRouter, type Router } from '../router.js';
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
  readonly router: Router;
  /** The metadata store, unless serving a supergraph file. */
  readonly database: Database | undefined;
  /** Stops accepting, lets requests in flight finish, then releases the source, pools and database. */
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
  // One keep-alive pool for all subgraph calls; it outlives graph swaps, so a swap opens no new connections.
  const dispatcher = new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 60_000, connections: 256 });
  const executorFor = (endpoint: { name: string; url: string }, route: { timeoutMs?: number }) =>
    createSubgraphExecutor({ name: endpoint.name, url: endpoint.url, timeoutMs: route.timeoutMs ?? config.subgraphTimeoutMs, dispatcher, metrics });

  const overrideLabels = new Set(config.overrideLabels);
  let database: Database | undefined;
  const ownsDatabase = options.database === undefined;
  let source: GraphSource;
  if (config.supergraphFile) {
    // A supergraph composed elsewhere needs no registry.
    source = createFileGraphSource({ file: config.supergraphFile, holder: graph, executorFor, logger, metrics, overrideLabels });
  } else {
    database = options.database ?? (await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir }));
    await migrate(database);
    source = createRegistryGraphSource({ db: database, pollMs: config.registryPollMs, holder: graph, executorFor, logger, metrics, overrideLabels });
  }

  const db = database;
  const router = createRouter({
    config,
    graph,
    metrics,
    logger,
    isReady: db ? () => db.query('select 1').then(() => true, () => false) : undefined,
  });
  const server = createServer(router);
  // Keep-alive sockets of clients must not hold shutdown hostage.
  server.keepAliveTimeout = 5_000;
  try {
    await source.start();
    const address = await listen(server, config.port, config.host);
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${address.port}/graphql`;
    logger.info({ url, source: config.supergraphFile ?? 'registry' }, 'router listening');
    let closing: Promise<void> | undefined;
    return {
      url,
      port: address.port,
      graph,
      metrics,
      router,
      database,
      close() {
        closing ??= (async () => {
          await new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeIdleConnections();
          });
          await source.stop();
          await dispatcher.close();
          if (ownsDatabase) await database?.close();
        })();
        return closing;
      },
    };
  } catch (error) {
    await source.stop().catch(() => {});
    await dispatcher.close().catch(() => {});
    if (ownsDatabase) await database?.close().catch(() => {});
    throw error;
  }
}
