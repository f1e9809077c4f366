// The `switchyard cache` commands: section cache rules (set, list, remove) and purges, written to the registry.
import type { Command, Option } from 'commander';
import type { Config } from '../config/schema.js';
import {
  canonicalEntityKey,
  DEFAULT_STALE_SECONDS,
  listCacheRules,
  recordPurge,
  removeCacheRule,
  setCacheRule,
  type CacheRuleRecord,
  type CacheScope,
  type PurgeInput,
} from '../registry/cache-store.js';
import { CliError, withDatabase } from './cli-kit.js';

interface StoreFlags {
  databaseUrl?: string;
  dataDir?: string;
}

/** The database flags and config every registry command shares, handed over by main.ts so all commands read them alike. */
export interface StoreCommandKit {
  databaseOption: () => Option;
  dataDirOption: () => Option;
  storeConfig: (options: StoreFlags) => Config;
}

/** Exit code of bad input (README: 0 success, 1 refused or failed, 2 bad input). */
const BAD_INPUT = 2;

/**
 * A number of seconds as typed, or `null` for "none" where `clearable`. Only the syntax is checked
 * here; the store refuses negative or fractional values with its own message.
 */
function secondsFlag(flag: string, raw: string, clearable = false): number | null {
  if (clearable && raw === 'none') return null;
  if (!/^\s*[+-]?\d+(\.\d+)?\s*$/.test(raw)) {
    throw new CliError(`${flag} must be a whole number of seconds${clearable ? ', or none to clear it' : ''} (got ${JSON.stringify(raw)})`, BAD_INPUT);
  }
  return Number(raw);
}

function describeRule(rule: CacheRuleRecord): { maxAge: string; scope: string; stale: string } {
  return {
    maxAge: `${rule.maxAgeSeconds}s`,
    scope: rule.scope ?? '-',
    stale: rule.staleSeconds === undefined ? `${DEFAULT_STALE_SECONDS}s (default)` : `${rule.staleSeconds}s`,
  };
}

function formatRules(rules: CacheRuleRecord[]): string {
  if (rules.length === 0) return 'no cache rule is set: only @cacheControl hints in the subgraph SDL apply';
  const rows = [['COORDINATE', 'MAX-AGE', 'SCOPE', 'STALE'], ...rules.map((rule) => {
    const { maxAge, scope, stale } = describeRule(rule);
    return [rule.coordinate, maxAge, scope, stale];
  })];
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return rows.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]))).join('  ')).join('\n');
}

/**
 * Reads the purge flags into one purge, refusing (exit 2, before the database is opened) a call that
 * names nothing, `--key` without `--type`, `--all` with anything else, or a `--key` that is not JSON.
 * Whether the key is a JSON object is the store's check.
 */
function purgeFromFlags(flags: { type?: string; key?: string; subgraph?: string; all?: boolean }): PurgeInput {
  if (flags.all) {
    if (flags.type !== undefined || flags.key !== undefined || flags.subgraph !== undefined) {
      throw new CliError('--all purges everything: give it alone, without --type, --key or --subgraph', BAD_INPUT);
    }
    return { all: true };
  }
  if (flags.key !== undefined && flags.type === undefined) {
    throw new CliError(`--key needs --type: the same key may belong to entities of several types, e.g. --type Product --key '{"id":"1"}'`, BAD_INPUT);
  }
  if (flags.type === undefined && flags.subgraph === undefined) {
    throw new CliError(`name what to purge: --type T [--key '{"id":"1"}'], --subgraph S, or --all`, BAD_INPUT);
  }
  let entityKey: Record<string, unknown> | undefined;
  if (flags.key !== undefined) {
    try {
      entityKey = JSON.parse(flags.key) as Record<string, unknown>;
    } catch {
      throw new CliError(`--key must be JSON, e.g. '{"id":"1"}' (got ${JSON.stringify(flags.key)})`, BAD_INPUT);
    }
  }
  return {
    ...(flags.type !== undefined ? { typeName: flags.type } : {}),
    ...(entityKey !== undefined ? { entityKey } : {}),
    ...(flags.subgraph !== undefined ? { subgraph: flags.subgraph } : {}),
  };
}

function describePurge(purge: PurgeInput): string {
  if (purge.all) return 'everything';
  const parts = [];
  if (purge.typeName) parts.push(`type ${purge.typeName}${purge.entityKey ? ` ${canonicalEntityKey(purge.entityKey)}` : ''}`);
  if (purge.subgraph) parts.push(`subgraph ${purge.subgraph}`);
  return parts.join(', ');
}

/** Adds `cache set|list|remove|purge` to the program. */
export function addCacheCommands(program: Command, kit: StoreCommandKit): Command {
  const cache = program.command('cache').description('section cache rules and purges, live on every router within a second (docs/caching.md)');

  cache
    .command('set')
    .description('set the max age (and scope) of a type or field, overriding @cacheControl in the subgraph SDL')
    .argument('<coordinate>', 'Type or Type.field')
    .option('--max-age <seconds>', 'how long an answer may be served from the cache (required; 0 = never cached)')
    .option('--scope <scope>', 'public (shared by everyone), private (per principal), or none to clear it')
    .option('--stale-seconds <seconds>', `how long past its max age an entry serves as the fallback while its subgraph fails (default ${DEFAULT_STALE_SECONDS}), or none to clear it`)
    .addOption(kit.databaseOption())
    .addOption(kit.dataDirOption())
    .action(async (coordinate: string, options: { maxAge?: string; scope?: string; staleSeconds?: string } & StoreFlags) => {
      if (options.maxAge === undefined) throw new CliError('give --max-age SECONDS (0 means never cached)', BAD_INPUT);
      const maxAgeSeconds = secondsFlag('--max-age', options.maxAge) as number;
      const staleSeconds = options.staleSeconds === undefined ? undefined : secondsFlag('--stale-seconds', options.staleSeconds, true);
      const scope = options.scope === undefined ? undefined : options.scope.toLowerCase() === 'none' ? null : (options.scope.toLowerCase() as CacheScope);
      const rule = await withDatabase(kit.storeConfig(options), (db) => setCacheRule(db, { coordinate, maxAgeSeconds, scope, staleSeconds }));
      const { maxAge, scope: shownScope, stale } = describeRule(rule);
      console.log(`cache rule ${rule.coordinate}: max-age ${maxAge}, scope ${shownScope === '-' ? 'not set' : shownScope}, stale ${stale}`);
    });

  cache
    .command('list')
    .description('list the cache rules')
    .option('--json', 'machine-readable output')
    .addOption(kit.databaseOption())
    .addOption(kit.dataDirOption())
    .action(async (options: { json?: boolean } & StoreFlags) => {
      const rules = await withDatabase(kit.storeConfig(options), listCacheRules);
      console.log(options.json ? JSON.stringify(rules, null, 2) : formatRules(rules));
    });

  cache
    .command('remove')
    .description('remove the rule of a type or field (the @cacheControl hint in the SDL applies again)')
    .argument('<coordinate>', 'Type or Type.field')
    .addOption(kit.databaseOption())
    .addOption(kit.dataDirOption())
    .action(async (coordinate: string, options: StoreFlags) => {
      const removed = await withDatabase(kit.storeConfig(options), (db) => removeCacheRule(db, coordinate));
      if (!removed) throw new CliError(`no cache rule for "${coordinate}"`);
      console.log(`removed the cache rule of ${coordinate}`);
    });

  cache
    .command('purge')
    .description('purge cached parts on every router: of a type (one entity with --key), of a subgraph, or all')
    .option('--type <type>', 'entries of this type')
    .option('--key <json>', `only the entity with this key, e.g. '{"id":"1"}' (needs --type)`)
    .option('--subgraph <name>', 'entries fetched from this subgraph')
    .option('--all', 'everything')
    .addOption(kit.databaseOption())
    .addOption(kit.dataDirOption())
    .action(async (options: { type?: string; key?: string; subgraph?: string; all?: boolean } & StoreFlags) => {
      const purge = purgeFromFlags(options);
      const seq = await withDatabase(kit.storeConfig(options), (db) => recordPurge(db, purge));
      console.log(`purge ${seq}: ${describePurge(purge)}`);
    });

  return cache;
}
