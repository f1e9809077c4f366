// The `switchyard cors` commands: the CORS allow-list (set, list, remove), live on every router within a second.
import type { Command } from 'commander';
import { corsRuleInputProblems, DEFAULT_CORS_METHODS, listCorsRules, removeCorsRule, setCorsRule, type CorsRuleInput, type CorsRuleRecord } from '../registry/cors-store.js';
import type { StoreCommandKit } from './cache-commands.js';
import { CliError, withDatabase } from './cli-kit.js';

/** Exit code of bad input (README: 0 success, 1 refused or failed, 2 bad input). */
const BAD_INPUT = 2;

interface StoreFlags {
  databaseUrl?: string;
  dataDir?: string;
}

interface SetFlags extends StoreFlags {
  methods?: string;
  headers?: string;
  credentials?: boolean;
  maxAge?: string;
}

/** A comma-separated flag as a list (empty entries dropped; the store checks each). */
const listFlag = (raw: string | undefined): string[] | undefined => (raw === undefined ? undefined : raw.split(',').map((s) => s.trim()).filter(Boolean));

/** The rule the flags describe, checked whole before the database is opened: bad input exits 2 and writes nothing. */
function ruleFromFlags(origin: string, flags: SetFlags): CorsRuleInput {
  if (flags.maxAge !== undefined && !/^\s*\d+\s*$/.test(flags.maxAge)) throw new CliError(`--max-age must be a whole number of seconds (got ${JSON.stringify(flags.maxAge)})`, BAD_INPUT);
  const rule: CorsRuleInput = {
    origin,
    methods: listFlag(flags.methods),
    headers: listFlag(flags.headers),
    credentials: flags.credentials ?? false,
    maxAgeSeconds: flags.maxAge === undefined ? undefined : Number(flags.maxAge),
  };
  const problems = corsRuleInputProblems(rule);
  if (problems.length > 0) throw new CliError(problems.join('\nerror: '), BAD_INPUT);
  return rule;
}

function describeRule(rule: Omit<CorsRuleRecord, 'updatedAt'>): string {
  return [
    `methods ${(rule.methods ?? DEFAULT_CORS_METHODS).join(', ')}${rule.methods ? '' : ' (default)'}`,
    `headers ${rule.headers ? rule.headers.join(', ') : 'as asked (default)'}`,
    `credentials ${rule.credentials ? 'yes' : 'no'}`,
    `max-age ${rule.maxAgeSeconds === undefined ? 'not sent' : `${rule.maxAgeSeconds}s`}`,
  ].join('; ');
}

const START_LIST_NOTE = "note: each router also allows its SWITCHYARD_CORS_ORIGINS (default: any origin in development, none in production); a rule here wins for the same entry";

/** Adds `cors set|list|remove` to the program. */
export function addCorsCommands(program: Command, kit: StoreCommandKit): Command {
  const cors = program.command('cors').description('the CORS allow-list: which browser origins may call the router, live on every router within a second');

  cors
    .command('set')
    .description('allow an origin or pattern, replacing its rule whole (flags left out go back to their defaults)')
    .argument('<origin>', 'https://app.example.com, https://*.example.com (one or more labels), http://localhost:* (any port), or * (any origin)')
    .option('--methods <list>', `comma-separated methods a preflight allows (default ${DEFAULT_CORS_METHODS.join(',')})`)
    .option('--headers <list>', 'comma-separated request headers a preflight allows (default: those it asks for)')
    .option('--credentials', 'let the browser send cookies and HTTP authentication (never with *)')
    .option('--max-age <seconds>', 'how long a browser may keep the preflight answer (0 to 86400; default: not sent)')
    .addOption(kit.databaseOption())
    .addOption(kit.dataDirOption())
    .action(async (origin: string, flags: SetFlags) => {
      const input = ruleFromFlags(origin, flags);
      const rule = await withDatabase(kit.storeConfig(flags), (db) => setCorsRule(db, input));
      console.log(`CORS origin ${rule.origin}: ${describeRule(rule)}`);
    });

  cors
    .command('list')
    .description('list the allow-list rules in the registry')
    .option('--json', 'machine-readable output')
    .addOption(kit.databaseOption())
    .addOption(kit.dataDirOption())
    .action(async (options: { json?: boolean } & StoreFlags) => {
      const rules = await withDatabase(kit.storeConfig(options), listCorsRules);
      if (options.json) {
        console.log(JSON.stringify(rules, null, 2));
        return;
      }
      if (rules.length === 0) console.log('no CORS rule in the registry');
      for (const rule of rules) console.log(`${rule.origin.padEnd(32)}  ${describeRule(rule)}`);
      console.log(START_LIST_NOTE);
    });

  cors
    .command('remove')
    .description('remove the rule of an origin or pattern')
    .argument('<origin>', 'as `cors list` shows it')
    .addOption(kit.databaseOption())
    .addOption(kit.dataDirOption())
    .action(async (origin: string, options: StoreFlags) => {
      const [problem] = corsRuleInputProblems({ origin });
      if (problem) throw new CliError(problem, BAD_INPUT);
      const removed = await withDatabase(kit.storeConfig(options), (db) => removeCorsRule(db, origin));
      if (!removed) throw new CliError(`no CORS rule for "${origin}"`);
      console.log(`removed the CORS rule of ${origin}`);
    });

  return cors;
}
