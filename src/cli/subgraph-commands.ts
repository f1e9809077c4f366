// The `switchyard subgraph` commands (serve a demo subgraph; publish, check, list and remove registered ones).
import { type Command, InvalidArgumentError, Option } from 'commander';
import { parseRoute, type RouteMetadata } from '../registry/route.js';
import { DEMO_SUBGRAPH_NAMES, isDemoSubgraphName } from '../../subgraphs/demo-names.js';
import type { StoreCommandKit } from './cache-commands.js';
import { CliError, integer, untilSignal, withDatabase } from './cli-kit.js';

// Loaded when run (main.ts says why).
const subgraphsModule = () => import('../../subgraphs/index.js');
const operationCommands = () => import('./operation-commands.js');
const registryCommands = () => import('./registry-commands.js');

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

export function addSubgraphCommands(program: Command, kit: StoreCommandKit): Command {
  const { databaseOption, dataDirOption, storeConfig } = kit;
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

  return program;
}
