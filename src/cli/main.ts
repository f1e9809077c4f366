// The `switchyard` command line: parses arguments, runs one command, owns the process's exit code and signals.
import cluster from 'node:cluster';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Command, Option } from 'commander';
import { ConfigError, loadConfig } from '../config/load-config.js';
import { AuthConfigError } from '../security/authentication/auth-result.js';
import type { Config } from '../config/schema.js';
import { PACKAGE_ROOT } from '../config/paths.js';
import { CompositionRejectedError, InvalidSubgraphError } from '../registry/subgraph-store.js';
import { InvalidPolicyError } from '../registry/policy-store.js';
import { InvalidPermissionError } from '../registry/permission-store.js';
import { InvalidManifestError } from '../registry/trusted-documents.js';
import { InvalidCacheRuleError } from '../registry/cache-store.js';
import { InvalidCorsRuleError } from '../registry/cors-store.js';
import { addAccessCommands } from './access-commands.js';
import { addCacheCommands, type StoreCommandKit } from './cache-commands.js';
import { addConfigCommands } from './config-commands.js';
import { addCorsCommands } from './cors-commands.js';
import { addOperationRegistryCommands } from './operation-registry-commands.js';
import { addPolicyCommands } from './policy-commands.js';
import { addServeCommands } from './serve-commands.js';
import { addStoreCommands } from './store-commands.js';
import { addSubgraphCommands } from './subgraph-commands.js';
import { CliError, formatCompositionErrors } from './cli-kit.js';

/*
 * Commands load what they run when they run: the router, the demo subgraphs, composition and schema
 * checks take about 1.5 s to load, which every `policy set` or `cache purge` would otherwise pay.
 * So the `addXCommands` files import only what declaring their commands needs, and the rest lazily.
 */

const version = (JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

const databaseOption = () => new Option('--database-url <url>', 'PostgreSQL URL (default: DATABASE_URL, else the embedded database)');
const dataDirOption = () => new Option('--data-dir <dir>', 'folder of the embedded database (default: SWITCHYARD_DATA_DIR or .switchyard)');

function storeConfig(options: { databaseUrl?: string; dataDir?: string }): Config {
  return loadConfig({ databaseUrl: options.databaseUrl, dataDir: options.dataDir }, undefined, { purpose: 'store' });
}

/** The database flags and config every registry command shares, so all commands read them alike. */
const kit: StoreCommandKit = { databaseOption, dataDirOption, storeConfig };

function buildProgram(): Command {
  const program = new Command('switchyard').description('GraphQL federation router').version(version).showHelpAfterError();
  // Root options only before a command: `operations publish --version V` is the command's own flag, not ours.
  program.enablePositionalOptions();
  // In this order: it is the order of `switchyard --help`.
  addServeCommands(program, kit);
  addSubgraphCommands(program, kit);
  addPolicyCommands(program, kit);
  addCacheCommands(program, kit);
  addCorsCommands(program, kit);
  addOperationRegistryCommands(program, kit);
  addAccessCommands(program, kit);
  addConfigCommands(program, kit);
  addStoreCommands(program, kit);
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
  if (
    error instanceof InvalidSubgraphError ||
    error instanceof InvalidManifestError ||
    error instanceof InvalidPolicyError ||
    error instanceof InvalidPermissionError ||
    error instanceof InvalidCacheRuleError ||
    error instanceof InvalidCorsRuleError
  ) {
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