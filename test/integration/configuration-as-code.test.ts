// `switchyard config export|apply` as ops run them: against a running stack's store, an empty one, and a router that must see the change within a second.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { compositionCheck } from '../../src/cli/registry-commands.js';
import { queryAudit } from '../../src/registry/audit-store.js';
import { setCacheRule } from '../../src/registry/cache-store.js';
import type { Database, Queryable } from '../../src/registry/database.js';
import { grantPermission } from '../../src/registry/permission-store.js';
import { setPolicy } from '../../src/registry/policy-store.js';
import { publishSubgraph } from '../../src/registry/subgraph-store.js';
import { publishTrustedDocuments } from '../../src/registry/trusted-documents.js';
import { runCli } from '../helpers/cli.js';
import { createTestStore, databaseKind, openMigrated, type TestStore } from '../helpers/database.js';
import { eventually } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/stack.js';

const storeEnv = (store: TestStore) => (store.databaseUrl ? { DATABASE_URL: store.databaseUrl } : { SWITCHYARD_DATA_DIR: store.dataDir });
const MANIFEST = { clientName: 'web', clientVersion: '2.1.0', documents: [{ id: 'product-name', body: 'query ProductName($id: ID!) { product(id: $id) { name } }' }] };
const PAGE = 'query ConfigPage { product(id: "2") { name reviews { rating } } }';

async function versions(db: Queryable): Promise<Record<string, number>> {
  const { rows } = await db.query<{ topic: string; version: string }>('select topic, version from registry_changes order by topic');
  return Object.fromEntries(rows.map((row) => [row.topic, Number(row.version)]));
}

// A separate process against a store a router holds open, as ops run it (on the embedded database, through its socket).
describe(`configuration as code (${databaseKind} database)`, () => {
  let stack: Stack;
  let empty: TestStore;
  let emptyDb: Database;
  let dir: string;
  const config = (store: TestStore, args: string[], env: Record<string, string> = {}) => runCli(['config', ...args], { ...storeEnv(store), SWITCHYARD_ACTOR: 'ci-pipeline', ...env });
  const file = (name: string) => path.join(dir, name);
  const applyRows = async (db: Database) => (await queryAudit(db, { operation: 'config apply', limit: 100 })).length;

  beforeAll(async () => {
    // The shipped re-check interval (250 ms on the embedded database), not the tests' 50 ms: "within a second" as ops get it.
    stack = await startStack({ config: { registryPollMs: 250 } });
    dir = await mkdtemp(path.join(tmpdir(), 'switchyard-config-'));
    // The live registry, configured one command at a time.
    const reviews = stack.subgraphs.reviews;
    await publishSubgraph(stack.db, { name: 'reviews', url: reviews.running.url, sdl: reviews.subgraph.sdl, route: { timeoutMs: 1_500, retry: { maxRetries: 1 } } }, compositionCheck);
    await setPolicy(stack.db, 'ProductPage', { maxConcurrency: 20, queueLength: 50, maxWaitMs: 2_000 });
    await grantPermission(stack.db, 'role:support', 'operation:RefundOrder');
    await setCacheRule(stack.db, { coordinate: 'Product', maxAgeSeconds: 60, scope: 'public' });
    await publishTrustedDocuments(stack.db, MANIFEST);
    // A new environment: the same subgraphs published by their owners, the same client manifest, nothing else.
    empty = await createTestStore();
    emptyDb = await openMigrated(empty);
    // In the stack's order: each publish must compose with those before it.
    for (const name of ['product', 'reviews', 'inventory'] as const) {
      const { running, subgraph } = stack.subgraphs[name];
      await publishSubgraph(emptyDb, { name, url: running.url, sdl: subgraph.sdl }, compositionCheck);
    }
    await publishTrustedDocuments(emptyDb, MANIFEST);
  });
  afterAll(async () => {
    await emptyDb?.close();
    await empty?.destroy();
    await stack?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  describe('export, then apply to an empty registry', () => {
    it('exports the live configuration as YAML, to standard output or --output', async () => {
      const out = await config(stack.store, ['export']);
      expect({ code: out.code, stderr: out.stderr }).toEqual({ code: 0, stderr: '' });
      const exported = parse(out.stdout) as Record<string, unknown>;
      expect(exported).toMatchObject({
        version: 1,
        subgraphs: { reviews: { url: stack.subgraphs.reviews.running.url, route: { timeoutMs: 1_500, retry: { maxRetries: 1 } } }, product: { url: stack.subgraphs.product.running.url } },
        policies: { '*': { costLimit: 50_000 }, ProductPage: { maxConcurrency: 20, queueLength: 50, maxWaitMs: 2_000 } },
        permissions: { 'operation:RefundOrder': ['role:support'] },
        cacheRules: { Product: { maxAgeSeconds: 60, scope: 'public' } },
        // By reference: the ids, never the documents.
        trustedDocuments: [{ client: 'web', version: '2.1.0', documents: ['product-name'] }],
      });
      expect(out.stdout).not.toContain('query ProductName');

      const written = await config(stack.store, ['export', '--output', file('live.yaml')]);
      expect(written.code).toBe(0);
      expect(await readFile(file('live.yaml'), 'utf8')).toBe(out.stdout);
    });

    it('apply reproduces the same live configuration: exported again, the same file', async () => {
      const applied = await config(empty, ['apply', file('live.yaml')]);
      expect({ code: applied.code, stderr: applied.stderr }).toEqual({ code: 0, stderr: '' });
      expect(applied.stdout).toMatch(/^~ subgraph reviews$/m);
      expect(applied.stdout).toMatch(/^\+ policy ProductPage {2}\(maxConcurrency: 20, queueLength: 50, maxWaitMs: 2000\)$/m);
      expect(applied.stdout).toMatch(/^3 to add, 1 to change, 0 to remove$/m);
      expect(applied.stdout).toMatch(/applied in one transaction \(3 added, 1 changed, 0 removed\); live on every router within a second/);
      const again = await config(empty, ['export']);
      expect(again.stdout).toBe(await readFile(file('live.yaml'), 'utf8'));
    });

    it('applying the same file twice changes nothing: "no changes"', async () => {
      const before = await versions(emptyDb);
      const second = await config(empty, ['apply', file('live.yaml')]);
      expect(second.code).toBe(0);
      expect(second.stdout.trim()).toBe('no changes');
      expect(await versions(emptyDb)).toEqual(before);
    });

    it('each apply leaves an audit row: config apply, who, the counts', async () => {
      const rows = (await queryAudit(emptyDb, { operation: 'config apply' })).reverse();
      expect(rows.map((row) => [row.subject, row.detail])).toEqual([
        ['ci-pipeline', expect.objectContaining({ file: file('live.yaml'), added: 3, changed: 1, removed: 0 })],
        ['ci-pipeline', expect.objectContaining({ added: 0, changed: 0, removed: 0, changes: [] })],
      ]);
    });
  });

  describe('refusals and options', () => {
    it('refuses an invalid file with every problem at once, exit 2, and changes nothing', async () => {
      await writeFile(
        file('invalid.yaml'),
        ['version: 1', 'policies:', '  ProductPage: { maxConcurrency: 0, costLimt: 5 }', '  "not a name": {}', 'permissions:', '  Product.name: [everyone]', 'cacheRules:', '  Product: { maxAgeSeconds: 1.5, scope: shared }', 'colour: blue', ''].join('\n'),
      );
      const before = { versions: await versions(emptyDb), audit: await applyRows(emptyDb) };
      const refused = await config(empty, ['apply', file('invalid.yaml')]);
      expect(refused.code).toBe(2);
      expect(refused.stdout).toBe('');
      expect(refused.stderr.trim().split('\n')).toEqual([
        `error: ${file('invalid.yaml')} is not a valid configuration (7 problems); nothing was changed:`,
        '  line 3, policies.ProductPage.maxConcurrency: maxConcurrency must be an integer >= 1 (got 0)',
        '  line 3, policies.ProductPage.costLimt: Unrecognized key: "costLimt"',
        '  line 4, policies."not a name": invalid operation name "not a name": use a GraphQL name or * for the default',
        '  line 6, permissions."Product.name"[0]: invalid principal "everyone": use sub:ID, scope:NAME, client:ID, role:NAME, authenticated or anonymous',
        '  line 8, cacheRules.Product.maxAgeSeconds: max age must be a whole number of seconds, 0 or more (got 1.5)',
        '  line 8, cacheRules.Product.scope: unknown scope "shared": use public (shared by everyone) or private (per principal)',
        '  line 9, colour: Unrecognized key: "colour"',
      ]);
      expect({ versions: await versions(emptyDb), audit: await applyRows(emptyDb) }).toEqual(before);
    });

    it('refuses a subgraph that is not published (exit 1): apply sets URLs and routes, never SDL', async () => {
      await writeFile(file('unpublished.yaml'), 'version: 1\npolicies:\n  Fresh: { costLimit: 9 }\nsubgraphs:\n  shipping: { url: "http://127.0.0.1:1/graphql" }\n');
      const before = await versions(emptyDb);
      const refused = await config(empty, ['apply', file('unpublished.yaml')]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/subgraph "shipping" is not published: publish its schema first/);
      expect(await versions(emptyDb)).toEqual(before);
    });

    it('--dry-run shows the difference and changes nothing', async () => {
      await writeFile(file('tighter.yaml'), 'version: 1\npolicies:\n  "*": { costLimit: 20000 }\n');
      const before = { versions: await versions(emptyDb), audit: await applyRows(emptyDb) };
      const dry = await config(empty, ['apply', file('tighter.yaml'), '--dry-run', '--prune']);
      expect(dry.code).toBe(0);
      expect(dry.stdout.trim().split('\n')).toEqual([
        '~ policy *',
        '    costLimit: 50000 → 20000',
        '- policy ProductPage  (maxConcurrency: 20, queueLength: 50, maxWaitMs: 2000)',
        'not in the file, so not managed by it: subgraphs, permissions, cacheRules, trustedDocuments, cors',
        '0 to add, 1 to change, 1 to remove',
        'dry run: nothing was changed',
      ]);
      expect({ versions: await versions(emptyDb), audit: await applyRows(emptyDb) }).toEqual(before);
    });

    it('without --prune leaves alone what the file does not name; --prune removes it', async () => {
      await setPolicy(emptyDb, 'Stray', { costLimit: 3 });
      await grantPermission(emptyDb, 'sub:someone', 'Product.name');
      const kept = await config(empty, ['apply', file('live.yaml')]);
      expect(kept.stdout).toMatch(/^left alone, not in the file \(--prune removes them\): policy Stray; permission Product\.name: sub:someone$/m);
      expect(kept.stdout).toMatch(/^no changes$/m);

      const pruned = await config(empty, ['apply', file('live.yaml'), '--prune', '--actor', 'alice']);
      expect(pruned.code).toBe(0);
      expect(pruned.stdout).toMatch(/^- policy Stray {2}\(costLimit: 3\)$/m);
      expect(pruned.stdout).toMatch(/^- permission Product\.name: sub:someone$/m);
      expect((await config(empty, ['export'])).stdout).toBe(await readFile(file('live.yaml'), 'utf8'));
      expect((await queryAudit(emptyDb, { operation: 'config apply', limit: 1 }))[0]).toMatchObject({ subject: 'alice', detail: { prune: true, removed: 2 } });
    });
  });

  describe('live on the running router', () => {
    it('a policy applied from a file reaches the router within a second, and its removal too', async () => {
      expect((await stack.query(PAGE)).status).toBe(200);
      const live = parse(await readFile(file('live.yaml'), 'utf8')) as { policies: Record<string, unknown> };
      await writeFile(file('limited.yaml'), `version: 1\npolicies: ${JSON.stringify({ ...live.policies, ConfigPage: { costLimit: 1 } })}\n`);

      const applied = await config(stack.store, ['apply', file('limited.yaml')]);
      expect(applied.code).toBe(0);
      await eventually(async () => (await stack.query(PAGE)).body.errors?.[0]?.extensions?.code === 'COST_LIMIT_EXCEEDED', { timeoutMs: 1_000, what: 'the applied cost limit to reach the router' });

      const pruned = await config(stack.store, ['apply', file('live.yaml'), '--prune']);
      expect(pruned.stdout).toMatch(/^- policy ConfigPage {2}\(costLimit: 1\)$/m);
      await eventually(async () => (await stack.query(PAGE)).status === 200, { timeoutMs: 1_000, what: 'the removal to reach the router' });
    });
  });
});
