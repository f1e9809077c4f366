// The `switchyard operations` commands: the operation registry (what runs, by whom) and trusted-document manifests.
import type { Command } from 'commander';
import type { StoreCommandKit } from './cache-commands.js';
import { withDatabase } from './cli-kit.js';

// Loaded when run (main.ts says why).
const operationCommands = () => import('./operation-commands.js');

export function addOperationRegistryCommands(program: Command, kit: StoreCommandKit): Command {
  const { databaseOption, dataDirOption, storeConfig } = kit;
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

  return program;
}
