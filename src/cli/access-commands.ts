// The `switchyard permission` and `switchyard token` commands: who may read what, and development tokens to try it with.
import { type Command, Option } from 'commander';
import { grantPermission, listPermissions, revokePermission } from '../registry/permission-store.js';
import { KeyRing } from '../security/signing-keys.js';
import { mintDevToken } from '../security/authentication/dev-token.js';
import type { StoreCommandKit } from './cache-commands.js';
import { CliError, integer, withDatabase } from './cli-kit.js';

export function addAccessCommands(program: Command, kit: StoreCommandKit): Command {
  const { databaseOption, dataDirOption, storeConfig } = kit;
  const permission = program.command('permission').description('authorization rules, live on every router within a second');
  for (const action of ['grant', 'revoke'] as const) {
    permission
      .command(action)
      .description(action === 'grant' ? 'let a principal read a coordinate, run an operation, or introspect in production' : 'remove a rule')
      .argument('<principal>', 'sub:ID, scope:NAME, client:ID, role:NAME, authenticated or anonymous')
      .argument('<coordinate>', 'Type.field, operation:Name, or introspection (who may introspect in production)')
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
      else if (rules.length === 0) console.log('no rule is set: the default applies to every coordinate, and nobody may introspect in production');
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

  return program;
}
