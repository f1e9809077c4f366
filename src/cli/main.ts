// The `switchyard` command line: parses arguments, runs one command, owns the process's exit code and signals.
import cluster from 'node:cluster';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { ConfigError, loadConfig } from '../config/load-config.js';
import { AuthConfigError } from '../security/authentication/auth-result.js';
import type { Config } from '../config/schema.js';
import { PACKAGE_ROOT } from '../config/paths.js';
import { migrate } from '../registry/migrate.js';
import { CompositionRejectedError, InvalidSubgraphError } from '../registry/subgraph-store.js';
import { InvalidPolicyError } from '../registry/policy-store.js';
import { parseRoute, type RouteMetadata } from '../registry/route.js';
import { grantPermission, InvalidPermissionError, listPermissions, revokePermission } from '../registry/permission-store.js';
import { queryAudit } from '../registry/audit-store.js';
import { KeyRing } from '../security/signing-keys.js';
import { mintDevToken } from '../security/authentication/dev-token.js';
import { DEMO_SUBGRAPH_NAMES, isDemoSubgraphName } from '../../subgraphs/demo-names.js';
import { InvalidManifestError } from '../registry/trusted-documents.js';
import { InvalidCacheRuleError } from '../registry/cache-store.js';
import { addCacheCommands } from './cache-commands.js';
import { addPolicyCommands } from './policy-commands.js';
import { CliError, formatCompositionErrors, integer, withDatabase } from './cli-kit.js';
import { announceReady, leavePrimary, startWorkerPool, workerSlot, type WorkerPool } from './serve-workers.js';

/*
 * Commands load what they run when they run: the router, the demo subgraphs, composition and schema
 * checks take about 1.5 s to load, which every `policy set` or `cache purge` would otherwise pay.
 */
const routerModule = () => import('./start-router.js');
const demoModule = () => import('./demo.js');
const loggerModule = () => import('../telemetry/logger.js');
const subgraphsModule = () => import('../../subgraphs/index.js');
const operationCommands = () => import('./operation-commands.js');
const registryCommands = () => import('./registry-commands.js');

const version = (JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;


function routeArgument(value: string): RouteMetadata {
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    throw new InvalidArgumentError('must be JSON, e.g. \'{"timeoutMs":500,"fallback":{"enabled":true}}\'');
  }
  const parsed = parseRoute(json);
  if (!parsed.ok) throw new InvalidArgumentError(parsed.problems.join('; '));
  return parsed.route;
}

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

const databaseOption = () => new Option('--database-url <url>', 'PostgreSQL URL (default: DATABASE_URL, else the embedded database)');
const dataDirOption = () => new Option('--data-dir <dir>', 'folder of the embedded database (default: SWITCHYARD_DATA_DIR or .switchyard)');

function storeConfig(options: { databaseUrl?: string; dataDir?: string }): Config {
  return loadConfig({ databaseUrl: options.databaseUrl, dataDir: options.dataDir }, undefined, { purpose: 'store' });
}

/** Runs until SIGINT or SIGTERM, then closes what `close` owns and exits. */
function untilSignal(close: () => Promise<void>): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.error(`received ${signal}, shutting down`);
    close().then(
      () => process.exit(0),
      (error: Error) => {
        console.error(error.message);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}

function buildProgram(): Command {
  const program = new Command('switchyard').description('GraphQL federation router').version(version).showHelpAfterError();
  // Root options only before a command: `operations publish --version V` is the command's own flag, not ours.
  program.enablePositionalOptions();

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

  const subgraph = program.command('subgraph').description('demo subgraphs and the subgraph registry');

  subgraph
    .command('serve')
    .description('run one demo subgraph')
    .argument('<name>', `one of ${DEMO_SUBGRAPH_NAMES.join(', ')}`)
    .addOption(new Option('-p, --port <port>', 'port').argParser(integer('port')).default(0))
    .addOption(new Option('--host <host>', 'interface to bind').default('127.0.0.1'))
    .action(async (name: string, options: { port: number; host: string }) => {
      if (!isDemoSubgraphName(name)) throw new CliError(`unknown demo subgraph "${name}": use one of ${DEMO_SUBGRAPH_NAMES.join(', ')}`, 2);
      const { demoSubgraphs } = await subgraphsModule();
      const running = await demoSubgraphs[name]().listen(options.port, options.host);
      console.log(`${name} subgraph on ${running.url}`);
      untilSignal(() => running.close());
    });

  subgraph
    .command('publish')
    .description('compose a subgraph with the registered ones and store it if the result composes')
    .argument('<name>', 'subgraph name')
    .requiredOption('--url <url>', 'where the router reaches the subgraph')
    .option('--schema <file>', 'SDL file (default: read { _service { sdl } } from --url)')
    .addOption(new Option('--timeout-ms <ms>', 'timeout of one attempt to this subgraph').argParser(integer('timeout', 1)))
    .addOption(new Option('--route <json>', 'route metadata as JSON: timeoutMs, breaker, retry, hedge, fallback (see README)').argParser(routeArgument))
    .option('--since <window>', 'operations seen in this window are checked first (7d, 24h, or an ISO time)', '7d')
    .option('--force', 'publish even if operations in use would break (written to the audit log with the operations it breaks)')
    .addOption(databaseOption())
    .addOption(dataDirOption())
    .action(async (name: string, options: { url: string; schema?: string; timeoutMs?: number; route?: RouteMetadata; since: string; force?: boolean; databaseUrl?: string; dataDir?: string }) => {
      const route = options.route || options.timeoutMs !== undefined ? { ...options.route, ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}) } : undefined;
      const [{ guardPublish, parseSince }, { publish }] = await Promise.all([operationCommands(), registryCommands()]);
      const since = parseSince(options.since);
      const { changed } = await withDatabase(storeConfig(options), async (db) => {
        // The same check as `subgraph check`, first: an operation in use that would break refuses the publish.
        const guard = await guardPublish(db, { name, url: options.url, schemaFile: options.schema, since, force: options.force ?? false });
        const outcome = await publish(db, { name, url: options.url, sdl: guard.sdl, route });
        if (outcome.changed && guard.afterPublish) {
          await guard.afterPublish();
          console.error(`warning: published ${name} although operations in use break (--force); written to the audit log`);
        }
        return outcome;
      });
      console.log(changed ? `published ${name}` : `${name} is already published with this URL and schema`);
    });

  subgraph
    .command('check')
    .description('compose a candidate schema, diff the API schema and validate the operations seen in the window against it')
    .argument('<name>', 'subgraph name')
    .option('--schema <file>', 'candidate SDL file')
    .option('--url <url>', 'read the candidate SDL from this running subgraph ({ _service { sdl } })')
    .option('--since <window>', 'check operations seen in this window (7d, 24h, 30m, or an ISO time)', '7d')
    .option('--json', 'machine-readable output')
    .addOption(databaseOption())
    .addOption(dataDirOption())
    .action(async (name: string, options: { schema?: string; url?: string; since: string; json?: boolean; databaseUrl?: string; dataDir?: string }) => {
      const { checkExitCode, checkJson, formatCheck, parseSince, runCheck } = await operationCommands();
      const since = parseSince(options.since);
      const { result } = await withDatabase(storeConfig(options), (db) => runCheck(db, { name, schemaFile: options.schema, url: options.url, since }));
      console.log(options.json ? checkJson(name, since, result) : formatCheck(name, since, result));
      process.exitCode = checkExitCode(result);
    });

  subgraph
    .command('list')
    .description('list the registered subgraphs')
    .option('--json', 'machine-readable output')
    .addOption(databaseOption())
    .addOption(dataDirOption())
    .action(async (options: { json?: boolean; databaseUrl?: string; dataDir?: string }) => {
      const { listCommand } = await registryCommands();
      console.log(await withDatabase(storeConfig(options), (db) => listCommand(db, options.json ?? false)));
    });

  subgraph
    .command('remove')
    .description('remove a subgraph (refused if the others would no longer compose)')
    .argument('<name>', 'subgraph name')
    .addOption(databaseOption())
    .addOption(dataDirOption())
    .action(async (name: string, options: { databaseUrl?: string; dataDir?: string }) => {
      const { removeCommand } = await registryCommands();
      await withDatabase(storeConfig(options), (db) => removeCommand(db, name));
      console.log(`removed ${name}`);
    });

  addPolicyCommands(program, { databaseOption, dataDirOption, storeConfig });
  addCacheCommands(program, { databaseOption, dataDirOption, storeConfig });

  const operations = program.command('operations').description('the operation registry: what runs, by whom, how often');

  operations
    .command('list')
    .description('list the operations seen in a window, most executed first')
    .option('--since <window>', 'only operations seen in this window (7d, 24h, 30m, or an ISO time)', '7d')
    .option('--client <name>', 'only this client')
    .option('--json', 'machine-readable output')
    .addOption(databaseOption())
    .addOption(dataDirOption())
    .action(async (options: { since: string; client?: string; json?: boolean; databaseUrl?: string; dataDir?: string }) => {
      const { operationsListCommand, parseSince } = await operationCommands();
      const since = parseSince(options.since);
      console.log(await withDatabase(storeConfig(options), (db) => operationsListCommand(db, { since, client: options.client, json: options.json ?? false })));
    });

  operations
    .command('publish')
    .description('register a trusted-document manifest (Apollo persisted query manifest or Relay format)')
    .argument('<file>', 'the manifest (JSON)')
    .requiredOption('--client <name>', 'the client these documents belong to')
    .option('--version <version>', 'the client version that ships them', '')
    .addOption(databaseOption())
    .addOption(dataDirOption())
    .action(async (file: string, options: { client: string; version: string; databaseUrl?: string; dataDir?: string }) => {
      const { operationsPublishCommand } = await operationCommands();
      console.log(await withDatabase(storeConfig(options), (db) => operationsPublishCommand(db, { file, clientName: options.client, clientVersion: options.version })));
    });

  const permission = program.command('permission').description('authorization rules, live on every router within a second');
  for (const action of ['grant', 'revoke'] as const) {
    permission
      .command(action)
      .description(action === 'grant' ? 'let a principal read a coordinate or run an operation' : 'remove a rule')
      .argument('<principal>', 'sub:ID, scope:NAME, client:ID, role:NAME, authenticated or anonymous')
      .argument('<coordinate>', 'Type.field or operation:Name')
      .addOption(databaseOption())
      .addOption(dataDirOption())
      .action(async (principal: string, coordinate: string, options: { databaseUrl?: string; dataDir?: string }) => {
        const changed = await withDatabase(storeConfig(options), (db) => (action === 'grant' ? grantPermission(db, principal, coordinate) : revokePermission(db, principal, coordinate)));
        if (action === 'grant') console.log(changed ? `granted ${principal} ${coordinate}` : `${principal} already has ${coordinate}`);
        else if (changed) console.log(`revoked ${principal} ${coordinate}`);
        else throw new CliError(`no rule gives ${principal} ${coordinate}`);
      });
  }
  permission
    .command('list')
    .description('list the rules (a coordinate with rules is protected: only its principals may use it)')
    .option('--json', 'machine-readable output')
    .addOption(databaseOption())
    .addOption(dataDirOption())
    .action(async (options: { json?: boolean; databaseUrl?: string; dataDir?: string }) => {
      const rules = await withDatabase(storeConfig(options), listPermissions);
      if (options.json) console.log(JSON.stringify(rules, null, 2));
      else if (rules.length === 0) console.log('no rule is set: the default applies to every coordinate');
      else for (const rule of rules) console.log(`${rule.coordinate.padEnd(32)}  ${rule.principal}`);
    });

  program
    .command('token')
    .description('development tokens from the built-in issuer (accepted by routers outside production)')
    .command('mint')
    .description('print a development token')
    .requiredOption('--sub <id>', 'subject (the user)')
    .option('--scope <scopes>', 'space-separated scopes', '')
    .option('--client <id>', 'client id (client_id claim)')
    .option('--role <roles>', 'space-separated roles', '')
    .addOption(new Option('--ttl <seconds>', 'lifetime').argParser(integer('ttl', 1)).default(3600))
    .addOption(databaseOption())
    .addOption(dataDirOption())
    .action(async (options: { sub: string; scope: string; client?: string; role: string; ttl: number; databaseUrl?: string; dataDir?: string }) => {
      const token = await withDatabase(storeConfig(options), async (db) => {
        const ring = await KeyRing.open(db, { purposes: ['dev-issuer'] });
        const split = (value: string) => value.split(/\s+/).filter(Boolean);
        return mintDevToken(ring, { sub: options.sub, scopes: split(options.scope), clientId: options.client, roles: split(options.role), ttlSeconds: options.ttl });
      });
      console.log(token);
    });

  program
    .command('audit')
    .description('read the audit log, newest first')
    .addOption(new Option('--limit <n>', 'rows').argParser(integer('limit', 1)).default(50))
    .option('--json', 'machine-readable output')
    .option('--since <time>', 'only rows at or after this time (ISO 8601)')
    .option('--operation <name>', 'only this operation')
    .addOption(databaseOption())
    .addOption(dataDirOption())
    .action(async (options: { limit: number; json?: boolean; since?: string; operation?: string; databaseUrl?: string; dataDir?: string }) => {
      const since = options.since ? new Date(options.since) : undefined;
      if (since && Number.isNaN(since.getTime())) throw new CliError(`--since must be a date and time, e.g. 2026-11-29T20:00:00Z (got "${options.since}")`, 2);
      const rows = await withDatabase(storeConfig(options), (db) => queryAudit(db, { limit: options.limit, since, operation: options.operation }));
      if (options.json) {
        console.log(JSON.stringify(rows, null, 2));
        return;
      }
      if (rows.length === 0) console.log('no audit entry');
      for (const row of rows) {
        const who = row.subject ?? 'anonymous';
        const codes = row.errorCodes.length ? ` ${row.errorCodes.join(',')}` : '';
        console.log(`${row.at.toISOString()}  ${String(row.status).padEnd(3)}  ${(row.operationName ?? '(anonymous)').padEnd(20)}  ${who.padEnd(16)}  ${Math.round(row.durationMs)}ms  [${row.subgraphs.join(' ')}]${row.complete ? '' : ' partial'}${codes}`);
        // Administrative notes (a forced publish) say why on the next line.
        if (row.detail !== null && row.detail !== undefined) console.log(`    ${JSON.stringify(row.detail)}`);
      }
    });

  program
    .command('supergraph')
    .description('print the supergraph SDL composed from the registry')
    .addOption(databaseOption())
    .addOption(dataDirOption())
    .action(async (options: { databaseUrl?: string; dataDir?: string }) => {
      const { supergraphCommand } = await registryCommands();
      process.stdout.write(await withDatabase(storeConfig(options), supergraphCommand));
    });

  program
    .command('migrate')
    .description('apply the metadata store migrations')
    .addOption(databaseOption())
    .addOption(dataDirOption())
    .action(async (options: { databaseUrl?: string; dataDir?: string }) => {
      const applied = await withDatabase(storeConfig(options), (db) => migrate(db));
      console.log(applied.length ? `applied migrations ${applied.join(', ')}` : 'the database is up to date');
    });

  return program;
}

/** Turns known failures into one clear message and an exit code; anything else shows its stack. */
function report(error: unknown): number {
  if (error instanceof ConfigError) {
    console.error(error.message);
    return 2;
  }
  // A safety net: loadConfig catches the known conflicts; a setting a service still refuses at start
  // is reported the same way, as configuration, never as a stack trace.
  if (error instanceof AuthConfigError) {
    console.error(new ConfigError([error.message]).message);
    return 2;
  }
  if (error instanceof CompositionRejectedError) {
    console.error(formatCompositionErrors(error));
    return 1;
  }
  if (error instanceof InvalidSubgraphError || error instanceof InvalidManifestError || error instanceof InvalidPolicyError || error instanceof InvalidPermissionError || error instanceof InvalidCacheRuleError) {
    console.error(`error: ${error.message}`);
    return 2;
  }
  if (error instanceof CliError) {
    console.error(`error: ${error.message}`);
    return error.exitCode;
  }
  console.error(error);
  return 1;
}

buildProgram()
  .parseAsync(process.argv)
  .catch((error: unknown) => {
    process.exitCode = report(error);
    // A worker of `serve --workers` is held alive by its channel to the primary: let go of it, so the
    // worker exits with this code and the primary sees the failure.
    if (cluster.isWorker) cluster.worker?.disconnect();
  });
