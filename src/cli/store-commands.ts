// The `switchyard audit`, `supergraph` and `migrate` commands: read the audit log, print the composed supergraph, migrate the metadata store.
import { type Command, Option } from 'commander';
import { migrate } from '../registry/migrate.js';
import { queryAudit } from '../registry/audit-store.js';
import type { StoreCommandKit } from './cache-commands.js';
import { CliError, integer, withDatabase } from './cli-kit.js';

// Loaded when run (main.ts says why).
const registryCommands = () => import('./registry-commands.js');

export function addStoreCommands(program: Command, kit: StoreCommandKit): Command {
  const { databaseOption, dataDirOption, storeConfig } = kit;
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
