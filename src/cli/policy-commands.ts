// The `switchyard policy` commands: ops limits per operation (cost, concurrency, queue, deadline, rate), live on every router.
import { type Command, Option } from 'commander';
import type { Config } from '../config/schema.js';
import { listPolicies, removePolicy, setPolicy, type PolicyLimits } from '../registry/policy-store.js';
import { CliError, integer, withDatabase } from './cli-kit.js';
import type { StoreCommandKit } from './cache-commands.js';

/** A limit flag: a whole number, or `none` to clear it. */
function limit(name: string, min: number) {
  return (value: string): number | null => (value === 'none' ? null : integer(name, min)(value));
}

function formatLimits(limits: PolicyLimits): string {
  const parts = (['costLimit', 'maxConcurrency', 'queueLength', 'maxWaitMs', 'deadlineMs', 'deferDeadlineMs', 'costRatePerSecond', 'costBurst', 'maxSubscriptions', 'maxSubscriptionsPerPrincipal'] as const)
    .filter((key) => limits[key] !== undefined)
    .map((key) => `${key}=${limits[key]}`);
  return parts.length ? parts.join(' ') : '(no limits)';
}

/** What `policy list` says about where limits are counted (docs/operations.md, "Several routers"). */
function perInstanceNote(config: Config): string {
  return config.redisUrl
    ? 'note: rate limits (costRatePerSecond, costBurst) are shared by every router through Redis (REDIS_URL); maxConcurrency and queues are per router instance'
    : 'note: limits are per router instance: with N routers, maxConcurrency, queues and rate limits (costRatePerSecond, costBurst) admit N times as much; set REDIS_URL on every router to share rate limits';
}

export function addPolicyCommands(program: Command, kit: StoreCommandKit): Command {
  const { databaseOption, dataDirOption, storeConfig } = kit;
  const policy = program.command('policy').description('ops limits per operation, live on every router within a second');

  policy
    .command('set')
    .description('set limits of one operation (* is the default for all others); "none" clears a limit')
    .argument('<operation>', 'operation name, or * for the default')
    .addOption(new Option('--cost-limit <n>', 'largest estimated cost accepted').argParser(limit('cost limit', 1)))
    .addOption(new Option('--max-concurrency <n>', 'requests in flight per router instance').argParser(limit('max concurrency', 1)))
    .addOption(new Option('--queue-length <n>', 'requests allowed to wait beyond the concurrency').argParser(limit('queue length', 0)))
    .addOption(new Option('--max-wait-ms <ms>', 'longest wait in the queue').argParser(limit('max wait', 1)))
    .addOption(new Option('--deadline-ms <ms>', 'request deadline (bounds a deferred query\'s first payload)').argParser(limit('deadline', 1)))
    .addOption(new Option('--defer-deadline-ms <ms>', 'budget of a query\'s deferred parts (@defer)').argParser(limit('defer deadline', 1)))
    .addOption(new Option('--cost-rate-per-second <n>', 'cost points a client may spend per second').argParser(limit('cost rate', 1)))
    .addOption(new Option('--cost-burst <n>', 'cost points a client may spend at once (default 10 × the rate)').argParser(limit('cost burst', 1)))
    .addOption(new Option('--max-subscriptions <n>', 'open subscriptions of the operation per router instance').argParser(limit('max subscriptions', 1)))
    .addOption(new Option('--max-subscriptions-per-principal <n>', 'open subscriptions of the operation per caller, per router instance').argParser(limit('max subscriptions per principal', 1)))
    .addOption(databaseOption())
    .addOption(dataDirOption())
    .action(async (operation: string, options: { [K in keyof PolicyLimits]?: number | null } & { databaseUrl?: string; dataDir?: string }) => {
      const { databaseUrl, dataDir, ...limits } = options;
      const record = await withDatabase(storeConfig({ databaseUrl, dataDir }), (db) => setPolicy(db, operation, limits));
      console.log(`policy ${record.operationName}: ${formatLimits(record)}`);
    });

  policy
    .command('list')
    .description('list the policies')
    .option('--json', 'machine-readable output')
    .addOption(databaseOption())
    .addOption(dataDirOption())
    .action(async (options: { json?: boolean; databaseUrl?: string; dataDir?: string }) => {
      const config = storeConfig(options);
      const records = await withDatabase(config, listPolicies);
      if (options.json) console.log(JSON.stringify(records, null, 2));
      else {
        if (records.length === 0) console.log('no policy is set: the router defaults apply');
        else for (const record of records) console.log(`${record.operationName.padEnd(24)}  ${formatLimits(record)}`);
        console.log(perInstanceNote(config));
      }
    });

  policy
    .command('remove')
    .description('remove the policy of one operation (the * policy then applies)')
    .argument('<operation>', 'operation name, or *')
    .addOption(databaseOption())
    .addOption(dataDirOption())
    .action(async (operation: string, options: { databaseUrl?: string; dataDir?: string }) => {
      const removed = await withDatabase(storeConfig(options), (db) => removePolicy(db, operation));
      if (!removed) throw new CliError(`no policy for "${operation}"`);
      console.log(`removed the policy of ${operation}`);
    });

  return policy;
}
