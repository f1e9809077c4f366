// Unit tests of configuration as code on a real store (the embedded database, or TEST_DATABASE_URL): export, apply, apply again, dry run, prune, refusals, the audit row.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestStore, openMigrated, type TestStore } from '../../test/helpers/database.js';
import { queryAudit } from './audit-store.js';
import { listCacheRules, setCacheRule } from './cache-store.js';
import { readConfigYaml, writeConfigYaml, type ConfigDocument } from './config-document.js';
import { applyConfig, CONFIG_APPLY_ACTION, ConfigNotApplicableError, readLiveConfig, type ApplyOptions } from './config-store.js';
import type { Database, Queryable } from './database.js';
import { grantPermission, listPermissions } from './permission-store.js';
import { listPolicies, setPolicy } from './policy-store.js';
import { listSubgraphs, publishSubgraph } from './subgraph-store.js';
import { listTrustedDocuments, publishTrustedDocuments } from './trusted-documents.js';

const composes = () => ({ ok: true as const });
const SUBGRAPHS = [
  { name: 'alpha', sdl: 'type Query { a: Int }' },
  { name: 'beta', sdl: 'type Query { b: Int }' },
];
const MANIFEST = { clientName: 'web', clientVersion: '1.2.0', documents: [{ id: 'page-1', body: 'query Page { a }' }, { id: 'page-2', body: 'query Other { b }' }] };
const APPLY: ApplyOptions = { prune: false, dryRun: false, actor: 'ci-bot' };

/** The change versions of every topic: a write that changes nothing leaves them where they were. */
async function versions(db: Queryable): Promise<Record<string, number>> {
  const { rows } = await db.query<{ topic: string; version: string }>('select topic, version from registry_changes order by topic');
  return Object.fromEntries(rows.map((row) => [row.topic, Number(row.version)]));
}

/** Subgraph SDL published (schema owners' flow), with plain URLs and no route. */
async function publishSchemas(db: Database): Promise<void> {
  for (const { name, sdl } of SUBGRAPHS) await publishSubgraph(db, { name, url: `http://127.0.0.1:1/${name}`, sdl }, composes);
}

describe('configuration as code', () => {
  let source: TestStore;
  let target: TestStore;
  let live: Database;
  let empty: Database;

  beforeAll(async () => {
    // One after the other: two embedded databases starting at once on a busy machine can miss the connection timeout.
    source = await createTestStore();
    live = await openMigrated(source);
    target = await createTestStore();
    empty = await openMigrated(target);
    // A registry configured one command at a time, as ops do today.
    await publishSchemas(live);
    await publishSubgraph(live, { ...SUBGRAPHS[0], url: 'http://alpha.internal/graphql', route: { timeoutMs: 800, retry: { maxRetries: 1 }, headers: { add: { 'x-team': 'alpha' } } } }, composes);
    await setPolicy(live, '*', { costLimit: 80_000, deadlineMs: 3_000 });
    await setPolicy(live, 'ProductPage', { maxConcurrency: 10, queueLength: 0 });
    await setPolicy(live, 'Quiet', { costLimit: null });
    await grantPermission(live, 'scope:reviews:read', 'Query.b');
    await grantPermission(live, 'role:admin', 'Query.b');
    await grantPermission(live, 'role:admin', 'operation:AdminPage');
    await setCacheRule(live, { coordinate: 'Query.a', maxAgeSeconds: 60, scope: 'public' });
    await setCacheRule(live, { coordinate: 'Query', maxAgeSeconds: 0, staleSeconds: 30 });
    await publishTrustedDocuments(live, MANIFEST);
    // The other registry has only the schemas and the documents: what a new environment starts from.
    await publishSchemas(empty);
    await publishTrustedDocuments(empty, MANIFEST);
  });
  afterAll(async () => {
    await Promise.all([live?.close(), empty?.close()]);
    await Promise.all([source?.destroy(), target?.destroy()]);
  });

  it('exports every section, in a stable order, the same twice', async () => {
    const exported = await readLiveConfig(live);
    expect(exported).toEqual({
      version: 1,
      subgraphs: {
        alpha: { url: 'http://alpha.internal/graphql', route: { timeoutMs: 800, headers: { add: { 'x-team': 'alpha' } }, retry: { maxRetries: 1 } } },
        beta: { url: 'http://127.0.0.1:1/beta' },
      },
      policies: { '*': { costLimit: 80_000, deadlineMs: 3_000 }, ProductPage: { maxConcurrency: 10, queueLength: 0 }, Quiet: {} },
      permissions: { 'Query.b': ['role:admin', 'scope:reviews:read'], 'operation:AdminPage': ['role:admin'] },
      cacheRules: { Query: { maxAgeSeconds: 0, staleSeconds: 30 }, 'Query.a': { maxAgeSeconds: 60, scope: 'public' } },
      trustedDocuments: [{ client: 'web', version: '1.2.0', documents: ['page-1', 'page-2'] }],
      cors: {},
    });
    expect(writeConfigYaml(await readLiveConfig(live))).toBe(writeConfigYaml(exported));
  });

  it('applied to an empty registry with the same schemas published, reproduces the live configuration', async () => {
    const file = writeConfigYaml(await readLiveConfig(live));
    const outcome = await applyConfig(empty, readConfigYaml(file), APPLY);
    // The migration's `*` cost limit is changed, the rest is added; no subgraph is added (they are published).
    expect(outcome.counts).toEqual({ added: 7, changed: 2, removed: 0 });
    expect(outcome.applied).toBe(true);
    expect(writeConfigYaml(await readLiveConfig(empty))).toBe(file);
    // SDL untouched: apply sets URLs and routes only.
    expect((await listSubgraphs(empty)).map((s) => s.sdl)).toEqual(SUBGRAPHS.map((s) => s.sdl));
  });

  it('applied again, changes nothing: no write, no topic moved', async () => {
    const file = readConfigYaml(writeConfigYaml(await readLiveConfig(live)));
    const before = await versions(empty);
    const outcome = await applyConfig(empty, file, APPLY);
    expect(outcome).toMatchObject({ counts: { added: 0, changed: 0, removed: 0 }, applied: false });
    expect(outcome.diff.changes).toEqual([]);
    expect(await versions(empty)).toEqual(before);
  });

  it('records each apply in the audit log: who, the counts and the changes', async () => {
    const rows = (await queryAudit(empty, { operation: CONFIG_APPLY_ACTION })).reverse();
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({ operationName: 'config apply', subject: 'ci-bot', client: 'switchyard-cli', subgraphs: ['alpha'], errorCodes: [] });
    expect(rows[0].detail).toMatchObject({ prune: false, added: 7, changed: 2, removed: 0 });
    expect((rows[0].detail as { changes: string[] }).changes).toContain('+ policy ProductPage  (maxConcurrency: 10, queueLength: 0)');
    // The second apply changed nothing, and says so.
    expect(rows[1]).toMatchObject({ subject: 'ci-bot', subgraphs: [], detail: { added: 0, changed: 0, removed: 0, changes: [] } });
  });

  it('--dry-run shows the difference and changes nothing (no audit row either)', async () => {
    const before = { config: await readLiveConfig(empty), versions: await versions(empty), audit: (await queryAudit(empty, { operation: CONFIG_APPLY_ACTION })).length };
    const desired: ConfigDocument = { version: 1, policies: { '*': { costLimit: 1 } }, permissions: {} };
    const outcome = await applyConfig(empty, desired, { ...APPLY, prune: true, dryRun: true });
    expect(outcome.applied).toBe(false);
    expect(outcome.diff.changes.map((c) => `${c.action} ${c.section} ${c.ref.join(' ')}`)).toEqual([
      'change policies *',
      'remove policies ProductPage',
      'remove policies Quiet',
      'remove permissions Query.b role:admin',
      'remove permissions Query.b scope:reviews:read',
      'remove permissions operation:AdminPage role:admin',
    ]);
    expect({ config: await readLiveConfig(empty), versions: await versions(empty), audit: (await queryAudit(empty, { operation: CONFIG_APPLY_ACTION })).length }).toEqual(before);
  });

  it('without --prune leaves alone what the file does not name; with it, removes it', async () => {
    await setPolicy(empty, 'Extra', { costLimit: 5 });
    await grantPermission(empty, 'sub:42', 'Query.a');
    await setCacheRule(empty, { coordinate: 'Query.b', maxAgeSeconds: 5 });
    const file = readConfigYaml(writeConfigYaml(await readLiveConfig(live)));

    const kept = await applyConfig(empty, file, APPLY);
    expect(kept.applied).toBe(false);
    expect(kept.diff.leftAlone.map((i) => `${i.section} ${i.ref.join(' ')}`)).toEqual(['policies Extra', 'permissions Query.a sub:42', 'cacheRules Query.b']);
    expect((await listPolicies(empty)).map((p) => p.operationName)).toContain('Extra');

    const pruned = await applyConfig(empty, file, { ...APPLY, prune: true });
    expect(pruned.counts).toEqual({ added: 0, changed: 0, removed: 3 });
    expect(writeConfigYaml(await readLiveConfig(empty))).toBe(writeConfigYaml(await readLiveConfig(live)));
  });

  it('--prune removes trusted documents of manifests the file does not name, and only in the sections it holds', async () => {
    await publishTrustedDocuments(empty, { clientName: 'ios', clientVersion: '3', documents: [{ id: 'ios-1', body: '{ a }' }] });
    const onlyDocuments: ConfigDocument = { version: 1, trustedDocuments: [{ client: 'web', version: '1.2.0', documents: ['page-1', 'page-2'] }] };
    const policiesBefore = await listPolicies(empty);
    const outcome = await applyConfig(empty, onlyDocuments, { ...APPLY, prune: true });
    expect(outcome.diff.changes.map((c) => `${c.action} ${c.ref[0]}`)).toEqual(['remove ios-1']);
    expect((await listTrustedDocuments(empty)).map((d) => d.id)).toEqual(['page-1', 'page-2']);
    expect(await listPolicies(empty)).toEqual(policiesBefore);
  });

  it('refuses, changing nothing, a file naming a subgraph or documents that are not published, with every problem', async () => {
    const desired = readConfigYaml(writeConfigYaml(await readLiveConfig(live)));
    desired.policies!.Fresh = { costLimit: 7 };
    desired.subgraphs!.gamma = { url: 'http://gamma/graphql' };
    desired.trustedDocuments = [{ client: 'web', version: '1.2.0', documents: ['page-1', 'page-2', 'page-3'] }];
    const before = { config: await readLiveConfig(empty), versions: await versions(empty) };
    const refusal = await applyConfig(empty, desired, APPLY).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(ConfigNotApplicableError);
    expect((refusal as ConfigNotApplicableError).problems).toEqual([
      expect.stringMatching(/^subgraph "gamma" is not published: publish its schema first/),
      expect.stringMatching(/^trusted documents of web 1\.2\.0 are not published: page-3 /),
    ]);
    expect({ config: await readLiveConfig(empty), versions: await versions(empty) }).toEqual(before);
  });

  it('is one transaction: a write that fails late undoes the earlier ones and leaves no audit row', async () => {
    // The database refuses one cache rule; policies are written before cache rules, so one has been written by then.
    await empty.query(`create or replace function refuse_boom() returns trigger language plpgsql as $$
      begin if new.coordinate = 'Query.boom' then raise exception 'refused by the test'; end if; return new; end $$`);
    await empty.query('create trigger refuse_boom before insert on cache_rules for each row execute function refuse_boom()');
    try {
      const desired = readConfigYaml(writeConfigYaml(await readLiveConfig(empty)));
      desired.policies!.Early = { costLimit: 4 };
      desired.cacheRules!['Query.boom'] = { maxAgeSeconds: 1 };
      const before = { config: await readLiveConfig(empty), versions: await versions(empty), audit: (await queryAudit(empty, { operation: CONFIG_APPLY_ACTION })).length };
      await expect(applyConfig(empty, desired, APPLY)).rejects.toThrow(/refused by the test/);
      expect({ config: await readLiveConfig(empty), versions: await versions(empty), audit: (await queryAudit(empty, { operation: CONFIG_APPLY_ACTION })).length }).toEqual(before);
    } finally {
      await empty.query('drop trigger refuse_boom on cache_rules');
      await empty.query('drop function refuse_boom()');
    }
  });

  it('writes each item whole: what the file leaves out of an item is cleared', async () => {
    const desired = readConfigYaml(writeConfigYaml(await readLiveConfig(empty)));
    desired.policies!['*'] = { costLimit: 90_000 };
    desired.cacheRules!['Query.a'] = { maxAgeSeconds: 30 };
    desired.subgraphs!.alpha = { url: 'http://alpha.internal/graphql' };
    const outcome = await applyConfig(empty, desired, APPLY);
    expect(outcome.counts).toEqual({ added: 0, changed: 3, removed: 0 });
    expect((await listPolicies(empty)).find((p) => p.operationName === '*')).toEqual({ operationName: '*', costLimit: 90_000, updatedAt: expect.any(Date) });
    expect((await listCacheRules(empty)).find((r) => r.coordinate === 'Query.a')).toEqual({ coordinate: 'Query.a', maxAgeSeconds: 30, updatedAt: expect.any(Date) });
    expect((await listSubgraphs(empty)).find((s) => s.name === 'alpha')?.route).toEqual({});
    expect(await listPermissions(empty)).toHaveLength(3);
  });
});
