// The `switchyard config` commands: the registry's live configuration as one YAML file, exported, diffed and applied in one transaction.
import { readFile, writeFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import type { Command } from 'commander';
import { actorFromEnv } from '../config/env.js';
import type { StoreCommandKit } from './cache-commands.js';
import { CliError, withDatabase } from './cli-kit.js';

// Loaded when run (main.ts says why): the file schema and the YAML library.
const configDocument = () => import('../registry/config-document.js');
const configStore = () => import('../registry/config-store.js');
const configDiff = () => import('../registry/config-diff.js');

/** Exit code of bad input (README: 0 success, 1 refused or failed, 2 bad input). */
const BAD_INPUT = 2;

interface StoreFlags {
  databaseUrl?: string;
  dataDir?: string;
}

/** Who applies: `--actor`, else SWITCHYARD_ACTOR, else the OS user (null when even that cannot be read). */
function actorOf(flag: string | undefined): string | null {
  if (flag?.trim()) return flag.trim();
  const fromEnv = actorFromEnv();
  if (fromEnv) return fromEnv;
  try {
    return userInfo().username;
  } catch {
    return null;
  }
}

async function exportAction(options: { output?: string } & StoreFlags, kit: StoreCommandKit): Promise<void> {
  const [{ writeConfigYaml }, { readLiveConfig }] = await Promise.all([configDocument(), configStore()]);
  const yaml = writeConfigYaml(await withDatabase(kit.storeConfig(options), (db) => readLiveConfig(db)));
  if (options.output === undefined) {
    process.stdout.write(yaml);
    return;
  }
  await writeFile(options.output, yaml).catch((error: Error) => {
    throw new CliError(`cannot write ${options.output}: ${error.message}`);
  });
  console.log(`exported the live configuration to ${options.output}`);
}

async function applyAction(file: string, options: { dryRun?: boolean; prune?: boolean; actor?: string } & StoreFlags, kit: StoreCommandKit): Promise<void> {
  const [{ InvalidConfigFileError, readConfigYaml }, { applyConfig, ConfigNotApplicableError }, { formatDiff }] = await Promise.all([configDocument(), configStore(), configDiff()]);
  const text = await readFile(file, 'utf8').catch((error: Error) => {
    throw new CliError(`cannot read ${file}: ${error.message}`, BAD_INPUT);
  });
  try {
    // Checked whole before the database is opened: an invalid file opens nothing and changes nothing.
    const desired = readConfigYaml(text, file);
    const applyOptions = { prune: options.prune ?? false, dryRun: options.dryRun ?? false, actor: actorOf(options.actor), source: file };
    const outcome = await withDatabase(kit.storeConfig(options), (db) => applyConfig(db, desired, applyOptions));
    console.log(formatDiff(outcome.diff));
    const { added, changed, removed } = outcome.counts;
    if (applyOptions.dryRun) console.log('dry run: nothing was changed');
    else if (outcome.applied) console.log(`applied in one transaction (${added} added, ${changed} changed, ${removed} removed); live on every router within a second`);
  } catch (error) {
    if (error instanceof InvalidConfigFileError) throw new CliError(error.message, BAD_INPUT);
    if (error instanceof ConfigNotApplicableError) throw new CliError(error.message, 1);
    throw error;
  }
}

/** Adds `config export|apply` to the program. */
export function addConfigCommands(program: Command, kit: StoreCommandKit): Command {
  const config = program.command('config').description('the live configuration as one YAML file: export it, review the difference, apply it (docs/operations.md)');

  config
    .command('export')
    .description('write subgraph URLs and routes, policies, permissions, cache rules, trusted-document manifests (by id) and CORS origins as YAML')
    .option('-o, --output <file>', 'write to this file (default: standard output)')
    .addOption(kit.databaseOption())
    .addOption(kit.dataDirOption())
    .action((options: { output?: string } & StoreFlags) => exportAction(options, kit));

  config
    .command('apply')
    .description('show the difference between a file and the live configuration, and apply it in one transaction, live on every router within a second')
    .argument('<file>', 'a YAML file as `config export` writes it')
    .option('--dry-run', 'show the difference; change nothing')
    .option('--prune', 'also remove what the file does not name, in the sections it holds (never subgraphs)')
    .option('--actor <name>', 'who applies, for the audit row (default: SWITCHYARD_ACTOR, else the OS user)')
    .addOption(kit.databaseOption())
    .addOption(kit.dataDirOption())
    .action((file: string, options: { dryRun?: boolean; prune?: boolean; actor?: string } & StoreFlags) => applyAction(file, options, kit));

  return config;
}
