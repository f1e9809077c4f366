// The `switchyard demo` and `switchyard serve` commands: run the router (alone, as workers, or with the demo subgraphs) until a signal.
import cluster from 'node:cluster';
import { type Command, Option } from 'commander';
import { loadConfig } from '../config/load-config.js';
import type { Config } from '../config/schema.js';
import type { StoreCommandKit } from './cache-commands.js';
import { integer, untilSignal } from './cli-kit.js';
import { announceReady, leavePrimary, startWorkerPool, workerSlot, type WorkerPool } from './serve-workers.js';

// Loaded when run (main.ts says why).
const routerModule = () => import('./start-router.js');
const demoModule = () => import('./demo.js');
const loggerModule = () => import('../telemetry/logger.js');

function workersArgument(value: string): number | 'auto' {
  if (value === 'auto') return value;
  return integer('workers', 1)(value);
}

/**
 * `serve --workers N` (N > 1), in the primary process: forks the routers, prints the usual ready line
 * once all of them listen, reloads them on SIGHUP and stops them on SIGINT or SIGTERM.
 */
async function serveWithWorkers(config: Config): Promise<void> {
  const { createLogger } = await loggerModule();
  const logger = createLogger({ level: config.logLevel });
  let pool: WorkerPool | undefined = undefined;
  // Registered first: SIGHUP's default action would end the primary while its workers start.
  process.on('SIGHUP', function reloadWorkers() {
    if (pool) void pool.reload();
    else logger.info('reload ignored: the workers are still starting');
  });
  pool = await startWorkerPool({
    workers: config.workers,
    logger,
    onGiveUp(reason) {
      console.error(`error: ${reason}`);
      process.exit(1);
    },
  });
  console.log(`Switchyard router on ${pool.url} (${config.workers} worker processes)`);
  const running = pool;
  untilSignal(() => running.close());
}

export function addServeCommands(program: Command, kit: StoreCommandKit): Command {
  const { databaseOption, dataDirOption } = kit;
  program
    .command('demo')
    .description('run the three demo subgraphs and the router on the embedded database')
    .addOption(new Option('-p, --port <port>', 'router port (default: PORT or 4000)').argParser(integer('port')))
    .addOption(new Option('--subgraph-port-base <port>', 'port of the first demo subgraph; 0 = ephemeral').argParser(integer('port')).default(4001))
    .addOption(databaseOption())
    .addOption(dataDirOption())
    .action(async (options: { port?: number; subgraphPortBase: number; databaseUrl?: string; dataDir?: string }) => {
      // The demo is one process on the embedded database, whatever SWITCHYARD_WORKERS says for `serve`.
      const config = loadConfig({ port: options.port, databaseUrl: options.databaseUrl, dataDir: options.dataDir, workers: 1 });
      const { startDemo } = await demoModule();
      const demo = await startDemo({ config, subgraphPortBase: options.subgraphPortBase });
      const lines = [
        '',
        `Switchyard demo is running (database: ${config.databaseUrl ? 'PostgreSQL' : `embedded, in ${config.dataDir}`})`,
        `  router      ${demo.router.url}${config.graphiql ? '  (open it in a browser: GraphiQL, on the product page)' : ''}`,
        ...demo.subgraphs.map((s) => `  ${s.name.padEnd(10)}  ${s.url}`),
        `  metrics     ${demo.router.url.replace(/\/graphql$/, '/metrics')}`,
        ...(config.dashboard ? [`  dashboard   ${demo.router.url.replace(/\/graphql$/, '/dashboard')}  (live charts for ops)`] : []),
        '',
        'Try:',
        `  curl -s ${demo.router.url} -H 'content-type: application/json' \\`,
        `    -d '{"query":"{ product(id: \\"1\\") { name price reviews { rating body } inventory { inStock } } }"}'`,
        '',
        'Authentication is optional in the demo: anonymous requests work, and a development token identifies you:',
        `  npx switchyard token mint --sub alice --scope "reviews:read"`,
        `  npx switchyard permission grant scope:reviews:read Product.reviews   # now only that scope sees reviews`,
        '',
        'In another terminal: npx switchyard subgraph list, policy list, audit   (Ctrl-C stops the demo)',
        '',
      ];
      console.log(lines.join('\n'));
      untilSignal(() => demo.close());
    });

  program
    .command('serve')
    .description('run the router alone')
    .addOption(new Option('-p, --port <port>', 'port (default: PORT or 4000)').argParser(integer('port')))
    .addOption(new Option('--host <host>', 'interface to bind (default: HOST or 127.0.0.1)'))
    .addOption(databaseOption())
    .addOption(dataDirOption())
    .addOption(new Option('--supergraph <file>', 'serve this supergraph file (composed elsewhere), reloaded when it changes'))
    .addOption(new Option('--workers <n|auto>', 'router processes sharing the port; auto = one per core (default: SWITCHYARD_WORKERS or 1)').argParser(workersArgument))
    .action(async (options: { port?: number; host?: string; databaseUrl?: string; dataDir?: string; supergraph?: string; workers?: number | 'auto' }) => {
      const config = loadConfig({ port: options.port, host: options.host, databaseUrl: options.databaseUrl, dataDir: options.dataDir, supergraphFile: options.supergraph, workers: options.workers });
      if (config.workers > 1 && cluster.isPrimary) return serveWithWorkers(config);
      // One process, or one worker of the primary above (it re-runs this command): the same router.
      const slot = workerSlot();
      const { startRouter } = await routerModule();
      const router = await startRouter({ config, metricLabels: slot ? { worker: slot } : undefined });
      if (slot) announceReady(router.url);
      else console.log(`Switchyard router on ${router.url}`);
      untilSignal(async () => {
        await router.close();
        if (slot) await leavePrimary();
      });
    });
  return program;
}
