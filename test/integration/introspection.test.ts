// Introspection by permission (decision 036): off in production but for callers an `introspection` rule names, granted and revoked live; always on in development.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningRouter } from '../../src/cli/start-router.js';
import { queryAudit } from '../../src/registry/audit-store.js';
import { revokePermission } from '../../src/registry/permission-store.js';
import { runCli } from '../helpers/cli.js';
import { databaseKind, type TestStore } from '../helpers/database.js';
import { startTestIdentityProvider, type TestIdentityProvider } from '../helpers/identity-provider.js';
import { eventually, postGraphQL } from '../helpers/http.js';
import { readMetric, startStack, type Stack } from '../helpers/stack.js';

const AUDIENCE = 'switchyard-api';
const SCHEMA = '{ __schema { queryType { name } types { name } } }';
/** Introspection beside a real field: refused whole, so the product subgraph is never asked. */
const MIXED = 'query SchemaProbe { __schema { queryType { name } } product(id: "1") { name } }';
const FORBIDDEN_MESSAGE = 'Introspection is off in production: no permission rule allows it for this caller.';
const storeEnv = (store: TestStore) => (store.databaseUrl ? { DATABASE_URL: store.databaseUrl } : { SWITCHYARD_DATA_DIR: store.dataDir });

describe(`introspection by permission (${databaseKind} database)`, () => {
  let idp: TestIdentityProvider;
  let stack: Stack;
  /** NODE_ENV=production on the stack's registry; the stack's own router is the development one. */
  let production: RunningRouter;
  let dir: string;
  const now = () => Math.floor(Date.now() / 1000);
  const bearer = async (claims: Record<string, unknown>) => ({ authorization: `Bearer ${await idp.sign({ iss: idp.issuer, aud: AUDIENCE, exp: now() + 300, iat: now(), ...claims })}` });
  const ask = (query: string, headers: Record<string, string> = {}) => postGraphQL(production.url, query, { headers });
  const subgraphCalls = () => Object.values(stack.subgraphs).reduce((sum, { subgraph }) => sum + subgraph.stats.snapshot().graphqlRequests, 0);
  const refusals = () => readMetric(production, 'switchyard_authorization_denials_total', { scope: 'introspection' });
  const ruleLive = (present: boolean) =>
    eventually(() => (production.permissions.principalsFor('introspection') !== undefined) === present, { what: `the introspection rule to be ${present ? 'granted' : 'revoked'} on the router` });

  beforeAll(async () => {
    idp = await startTestIdentityProvider();
    await idp.addKey();
    stack = await startStack({ config: { authMode: 'optional', jwksUrl: idp.jwksUrl, jwtIssuer: idp.issuer, jwtAudience: AUDIENCE } });
    production = await stack.startRouter({ nodeEnv: 'production' });
    dir = await mkdtemp(path.join(tmpdir(), 'switchyard-introspection-'));
  });
  afterAll(async () => {
    await stack?.close();
    await idp?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  describe('production without a rule', () => {
    it('refuses __schema and __type with 403 FORBIDDEN and a message that says so, before any subgraph call; counted and audited', async () => {
      const carol = await bearer({ sub: 'carol', roles: ['support'] });
      const since = new Date();
      const [calls, counted] = [subgraphCalls(), await refusals()];
      for (const query of [MIXED, '{ __type(name: "Product") { fields { name } } }', '{ product(id: "1") { name } ...Schema } fragment Schema on Query { s: __schema { types { name } } }']) {
        const { status, body } = await ask(query, carol);
        expect({ query, status, data: body.data, errors: body.errors }).toEqual({
          query,
          status: 403,
          data: undefined,
          errors: [expect.objectContaining({ message: FORBIDDEN_MESSAGE, extensions: expect.objectContaining({ code: 'FORBIDDEN', status: 403 }) })],
        });
      }
      expect(subgraphCalls()).toBe(calls);
      expect(await refusals()).toBe(counted + 3);
      await eventually(async () => (await queryAudit(stack.db, { since, operation: 'SchemaProbe' })).length === 1, { what: 'the audit row of the refusal' });
      const [row] = await queryAudit(stack.db, { since, operation: 'SchemaProbe' });
      expect(row).toMatchObject({ subject: 'carol', status: 403, errorCodes: ['FORBIDDEN'], subgraphs: [], complete: false });
    });

    it('an anonymous caller is told to authenticate: 401 UNAUTHENTICATED with WWW-Authenticate', async () => {
      const calls = subgraphCalls();
      const { status, headers, body } = await ask(MIXED);
      expect(status).toBe(401);
      expect(headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(body.errors?.[0]).toMatchObject({ message: expect.stringMatching(/^Introspection is off in production/), extensions: { code: 'UNAUTHENTICATED' } });
      expect(subgraphCalls()).toBe(calls);
    });

    it('answers __typename: it is no introspection', async () => {
      const root = await ask('{ __typename }');
      expect(root.status).toBe(200);
      expect(root.body.data).toEqual({ __typename: 'Query' });
      const page = await ask('{ product(id: "1") { __typename name } }', await bearer({ sub: 'carol' }));
      expect(page.status).toBe(200);
      expect(page.body.data.product).toEqual({ __typename: 'Product', name: expect.any(String) });
    });
  });

  describe('production with the rule, live', () => {
    it('`permission grant role:developer introspection` lets developers introspect and nobody else; revoked, refused again', async () => {
      const developer = await bearer({ sub: 'dev', roles: ['developer'] });
      const carol = await bearer({ sub: 'carol', roles: ['support'] });
      const granted = await runCli(['permission', 'grant', 'role:developer', 'introspection'], storeEnv(stack.store));
      expect({ code: granted.code, stdout: granted.stdout.trim(), stderr: granted.stderr }).toEqual({ code: 0, stdout: 'granted role:developer introspection', stderr: '' });
      try {
        await ruleLive(true);
        const allowed = await ask(SCHEMA, developer);
        expect(allowed.status).toBe(200);
        expect(allowed.body.data.__schema.queryType.name).toBe('Query');
        expect(allowed.body.data.__schema.types.map((type: { name: string }) => type.name)).toContain('Product');
        expect((await ask(MIXED, developer)).body.data.product.name).toEqual(expect.any(String));
        expect((await ask(SCHEMA, carol)).status).toBe(403);
        expect((await ask(SCHEMA)).status).toBe(401);
        const listed = await runCli(['permission', 'list'], storeEnv(stack.store));
        expect(listed.stdout).toMatch(/^introspection\s+role:developer$/m);
      } finally {
        await revokePermission(stack.db, 'role:developer', 'introspection');
      }
      await ruleLive(false);
      const refused = await ask(SCHEMA, developer);
      expect(refused.status).toBe(403);
      expect(refused.body.errors?.[0].message).toBe(FORBIDDEN_MESSAGE);
    });

    it('`config apply` takes the rule from the permissions section, live on the router', async () => {
      const developer = await bearer({ sub: 'dev', roles: ['developer'] });
      const file = path.join(dir, 'introspection.yaml');
      await writeFile(file, 'version: 1\npermissions:\n  introspection: [role:developer]\n');
      const applied = await runCli(['config', 'apply', file], storeEnv(stack.store));
      expect({ code: applied.code, stderr: applied.stderr }).toEqual({ code: 0, stderr: '' });
      expect(applied.stdout).toMatch(/^\+ permission introspection: role:developer$/m);
      try {
        await ruleLive(true);
        expect((await ask(SCHEMA, developer)).status).toBe(200);
      } finally {
        await revokePermission(stack.db, 'role:developer', 'introspection');
      }
      await ruleLive(false);
    });

    it('the CLI refuses a near miss with one clear line (exit 2) and writes nothing', async () => {
      const typo = await runCli(['permission', 'grant', 'role:developer', 'Introspection'], storeEnv(stack.store));
      expect({ code: typo.code, stdout: typo.stdout, stderr: typo.stderr.trim() }).toEqual({
        code: 2,
        stdout: '',
        stderr: 'error: invalid coordinate "Introspection": did you mean introspection (lower case, nothing around it)?',
      });
      const field = await runCli(['permission', 'grant', 'role:developer', 'Query.__schema'], storeEnv(stack.store));
      expect(field.code).toBe(2);
      expect(field.stderr).toMatch(/introspection fields take no rule of their own; use introspection/);
      expect((await runCli(['permission', 'list', '--json'], storeEnv(stack.store))).stdout.trim()).toBe('[]');
    });
  });

  describe('development', () => {
    it('answers introspection without any rule, anonymous included', async () => {
      expect(production.permissions.principalsFor('introspection')).toBeUndefined();
      const { status, body } = await stack.query(SCHEMA);
      expect(status).toBe(200);
      expect(body.data.__schema.types.map((type: { name: string }) => type.name)).toContain('Product');
    });
  });
});
