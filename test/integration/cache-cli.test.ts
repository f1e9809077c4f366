// The `switchyard cache` commands as users run them, against a store another process holds open (as a running router does).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { createTestStore, databaseKind, openMigrated, type TestStore } from '../helpers/database.js';
import type { Database } from '../../src/registry/database.js';
import { listCacheRules, listPurgesSince } from '../../src/registry/cache-store.js';

const storeEnv = (store: TestStore) => (store.databaseUrl ? { DATABASE_URL: store.databaseUrl } : { SWITCHYARD_DATA_DIR: store.dataDir });

// Bad input: a few cases end to end here (exit code, message, nothing written); every flag combination is checked in process (src/cli/cache-commands.test.ts) and every value in the store's tests.
describe(`switchyard cache (${databaseKind} database)`, () => {
  let store: TestStore;
  let db: Database;
  const cli = (...args: string[]) => runCli(['cache', ...args], storeEnv(store));

  async function topicVersion(topic: string): Promise<number> {
    const { rows } = await db.query<{ version: string }>('select version from registry_changes where topic = $1', [topic]);
    return Number(rows[0].version);
  }

  async function purgeCount(): Promise<number> {
    const { rows } = await db.query<{ n: string }>('select count(*) as n from cache_purges');
    return Number(rows[0].n);
  }

  beforeAll(async () => {
    store = await createTestStore();
    // Held open for the whole file: on the embedded database the commands then go through its socket, as while the demo runs.
    db = await openMigrated(store);
  });
  afterAll(async () => {
    await db?.close();
    await store?.destroy();
  });

  describe('rules', () => {
    it('sets rules, each change bumping the cache_rules topic', async () => {
      const version = await topicVersion('cache_rules');
      const set = await cli('set', 'Product', '--max-age', '60', '--scope', 'public');
      expect({ code: set.code, stderr: set.stderr }).toEqual({ code: 0, stderr: '' });
      expect(set.stdout).toMatch(/cache rule Product: max-age 60s, scope public, stale 300s \(default\)/);
      expect((await cli('set', 'Product.price', '--max-age', '0', '--stale-seconds', '30')).code).toBe(0);
      // An upsert fires both the insert and the update statement triggers: each set bumps at least once.
      expect(await topicVersion('cache_rules')).toBeGreaterThanOrEqual(version + 2);
    });

    it('lists the rules as a table, or as JSON with --json', async () => {
      const table = await cli('list');
      expect(table.code).toBe(0);
      expect(table.stdout).toMatch(/^COORDINATE\s+MAX-AGE\s+SCOPE\s+STALE$/m);
      expect(table.stdout).toMatch(/^Product\s+60s\s+public\s+300s \(default\)$/m);
      expect(table.stdout).toMatch(/^Product\.price\s+0s\s+-\s+30s$/m);

      const json = await cli('list', '--json');
      expect(json.code).toBe(0);
      expect(JSON.parse(json.stdout)).toEqual([
        { coordinate: 'Product', maxAgeSeconds: 60, scope: 'public', updatedAt: expect.any(String) },
        { coordinate: 'Product.price', maxAgeSeconds: 0, staleSeconds: 30, updatedAt: expect.any(String) },
      ]);
    });

    it('a new max age keeps the scope; --scope none clears it', async () => {
      expect((await cli('set', 'Product', '--max-age', '120')).stdout).toMatch(/max-age 120s, scope public/);
      expect((await cli('set', 'Product', '--max-age', '120', '--scope', 'none')).stdout).toMatch(/max-age 120s, scope not set/);
    });

    it('removes a rule', async () => {
      const removed = await cli('remove', 'Product.price');
      expect(removed.code).toBe(0);
      expect(removed.stdout).toMatch(/removed the cache rule of Product\.price/);
      expect((await listCacheRules(db)).map((r) => r.coordinate)).toEqual(['Product']);
    });

    it('removing a rule that does not exist exits 1 and says so', async () => {
      const { code, stderr } = await cli('remove', 'Nope.field');
      expect(code).toBe(1);
      expect(stderr).toMatch(/no cache rule for "Nope\.field"/);
    });

    it.each([
      [['Product.', '--max-age', '10'], /invalid coordinate "Product\.": use a type or a field/],
      [['Product', '--max-age', '-5'], /max age must be a whole number of seconds, 0 or more \(got -5\)/],
      [['Product', '--max-age', 'soon'], /--max-age must be a whole number of seconds \(got "soon"\)/],
      [['Product', '--max-age', '10', '--stale-seconds', 'ever'], /--stale-seconds must be a whole number of seconds, or none/],
      [['Product'], /give --max-age SECONDS/],
    ])('set %j: exits 2 with a clear message and writes nothing', async (args, message) => {
      const before = await listCacheRules(db);
      const version = await topicVersion('cache_rules');
      const { code, stdout, stderr } = await cli('set', ...args);
      expect(code).toBe(2);
      expect(stdout).toBe('');
      expect(stderr).toMatch(message);
      expect(stderr).not.toMatch(/at .*\.js:\d+/); // no stack trace
      expect(await listCacheRules(db)).toEqual(before);
      expect(await topicVersion('cache_rules')).toBe(version);
    });
  });

  describe('purges', () => {
    it('records a purge of one entity, of a subgraph, of everything, printing each sequence number', async () => {
      const version = await topicVersion('cache_purges');
      const entity = await cli('purge', '--type', 'Product', '--key', '{"id":1}');
      expect({ code: entity.code, stderr: entity.stderr }).toEqual({ code: 0, stderr: '' });
      const first = Number(entity.stdout.match(/^purge (\d+): type Product \{"id":"1"\}/)?.[1]);
      expect(first).toBeGreaterThan(0);

      const bySubgraph = await cli('purge', '--subgraph', 'inventory', '--type', 'Inventory');
      const all = await cli('purge', '--all');
      expect([bySubgraph.code, all.code]).toEqual([0, 0]);
      const second = Number(bySubgraph.stdout.match(/^purge (\d+): type Inventory, subgraph inventory/)?.[1]);
      const third = Number(all.stdout.match(/^purge (\d+): everything/)?.[1]);
      expect([second, third]).toEqual([first + 1, first + 2]);
      expect(await topicVersion('cache_purges')).toBe(version + 3);

      const purges = await listPurgesSince(db, first - 1, { maxAgeSeconds: 3600 });
      expect(purges.map(({ purgedAt: _p, ...rest }) => rest)).toEqual([
        { seq: first, typeName: 'Product', entityKey: '{"id":"1"}', all: false },
        { seq: second, typeName: 'Inventory', subgraph: 'inventory', all: false },
        { seq: third, all: true },
      ]);
    });

    it.each([
      [[], /name what to purge: --type T .*--subgraph S, or --all/],
      [['--key', '{"id":"1"}'], /--key needs --type/],
      [['--key', '{"id":"1"}', '--subgraph', 'product'], /--key needs --type/],
      [['--all', '--type', 'Product'], /--all purges everything: give it alone/],
      [['--all', '--subgraph', 'product'], /--all purges everything: give it alone/],
      [['--type', 'Product', '--key', '{id:1}'], /--key must be JSON/],
      [['--type', 'Product', '--key', '[1]'], /an entity key must be a JSON object .* \(got an array\)/],
    ])('purge %j: exits 2 with a clear message and writes nothing', async (args, message) => {
      const count = await purgeCount();
      const version = await topicVersion('cache_purges');
      const { code, stdout, stderr } = await cli('purge', ...args);
      expect(code).toBe(2);
      expect(stdout).toBe('');
      expect(stderr).toMatch(message);
      expect(stderr).not.toMatch(/at .*\.js:\d+/);
      expect(await purgeCount()).toBe(count);
      expect(await topicVersion('cache_purges')).toBe(version);
    });
  });
});
