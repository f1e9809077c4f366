// Unit tests of the cache rules and purge log, on the embedded database or TEST_DATABASE_URL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestStore, openMigrated, TEST_DATABASE_URL, type TestStore } from '../../test/helpers/database.js';
import type { Database, Queryable } from './database.js';
import {
  canonicalEntityKey,
  InvalidCacheRuleError,
  listCacheRules,
  listPurgesSince,
  recordPurge,
  recordPurges,
  removeCacheRule,
  setCacheRule,
  trimPurges,
  type PurgeInput,
} from './cache-store.js';

async function topicVersion(db: Queryable, topic: string): Promise<number> {
  const { rows } = await db.query<{ version: string }>('select version from registry_changes where topic = $1', [topic]);
  return rows.length ? Number(rows[0].version) : -1;
}

/** The seq of the newest purge stored, 0 when none is. */
async function latestPurgeSeq(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ seq: string | null }>('select max(seq) as seq from cache_purges');
  return rows[0].seq === null ? 0 : Number(rows[0].seq);
}

async function purgeCount(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ n: string }>('select count(*) as n from cache_purges');
  return Number(rows[0].n);
}

describe('cache store', () => {
  let store: TestStore;
  let db: Database;
  beforeAll(async () => {
    store = await createTestStore();
    db = await openMigrated(store);
  });
  afterAll(async () => {
    await db?.close();
    await store?.destroy();
  });

  describe('cache rules', () => {
    it('sets, updates and lists rules by coordinate; unset scope and stale seconds are absent', async () => {
      const product = await setCacheRule(db, { coordinate: 'Product', maxAgeSeconds: 60, scope: 'public' });
      expect(product).toMatchObject({ coordinate: 'Product', maxAgeSeconds: 60, scope: 'public' });
      expect(product.updatedAt).toBeInstanceOf(Date);
      const price = await setCacheRule(db, { coordinate: 'Product.price', maxAgeSeconds: 0 });
      expect(price).not.toHaveProperty('scope');
      expect(price).not.toHaveProperty('staleSeconds');
      const list = await listCacheRules(db);
      expect(list.map(({ updatedAt: _u, ...rest }) => rest)).toEqual([
        { coordinate: 'Product', maxAgeSeconds: 60, scope: 'public' },
        { coordinate: 'Product.price', maxAgeSeconds: 0 },
      ]);
    });

    it('upserts: a new max age keeps the scope and stale seconds unless they are given; null clears them', async () => {
      await setCacheRule(db, { coordinate: 'Review', maxAgeSeconds: 30, scope: 'private', staleSeconds: 600 });
      expect(await setCacheRule(db, { coordinate: 'Review', maxAgeSeconds: 45 })).toMatchObject({ maxAgeSeconds: 45, scope: 'private', staleSeconds: 600 });
      const cleared = await setCacheRule(db, { coordinate: 'Review', maxAgeSeconds: 45, scope: null, staleSeconds: null });
      expect(cleared).not.toHaveProperty('scope');
      expect(cleared).not.toHaveProperty('staleSeconds');
      expect((await listCacheRules(db)).filter((r) => r.coordinate === 'Review')).toHaveLength(1);
    });

    it('removes a rule, and says when there was none', async () => {
      await setCacheRule(db, { coordinate: 'Inventory.inStock', maxAgeSeconds: 5 });
      expect(await removeCacheRule(db, 'Inventory.inStock')).toBe(true);
      expect(await removeCacheRule(db, 'Inventory.inStock')).toBe(false);
      expect((await listCacheRules(db)).map((r) => r.coordinate)).not.toContain('Inventory.inStock');
    });

    it.each([
      [{ coordinate: 'Product.', maxAgeSeconds: 1 }, /invalid coordinate "Product\.": use a type or a field/],
      [{ coordinate: '1Product', maxAgeSeconds: 1 }, /invalid coordinate/],
      [{ coordinate: 'Product.price.amount', maxAgeSeconds: 1 }, /invalid coordinate/],
      [{ coordinate: 'Query.product(id:)', maxAgeSeconds: 1 }, /invalid coordinate/],
      [{ coordinate: 'Product', maxAgeSeconds: -1 }, /max age must be a whole number of seconds, 0 or more \(got -1\)/],
      [{ coordinate: 'Product', maxAgeSeconds: 1.5 }, /max age must be a whole number of seconds/],
      [{ coordinate: 'Product', maxAgeSeconds: Number.NaN }, /max age must be a whole number of seconds/],
      [{ coordinate: 'Product', maxAgeSeconds: 2 ** 31 }, /max age must be a whole number of seconds, 0 or more, at most 2147483647/],
      [{ coordinate: 'Product', maxAgeSeconds: 1, scope: 'PUBLIC' }, /unknown scope "PUBLIC": use public .* or private/],
      [{ coordinate: 'Product', maxAgeSeconds: 1, scope: 'shared' }, /unknown scope "shared"/],
      [{ coordinate: 'Product', maxAgeSeconds: 1, staleSeconds: -5 }, /stale seconds must be a whole number of seconds/],
    ])('refuses %j before writing', async (input, message) => {
      const before = await listCacheRules(db);
      const version = await topicVersion(db, 'cache_rules');
      const attempt = setCacheRule(db, input as Parameters<typeof setCacheRule>[1]);
      await expect(attempt).rejects.toBeInstanceOf(InvalidCacheRuleError);
      await expect(attempt).rejects.toThrow(message);
      expect(await listCacheRules(db)).toEqual(before);
      expect(await topicVersion(db, 'cache_rules')).toBe(version);
    });

    it('the table refuses what the store refuses, for writers that bypass it', async () => {
      await expect(db.query("insert into cache_rules (coordinate, max_age_seconds) values ('Product.', 1)")).rejects.toThrow(/check constraint/);
      await expect(db.query("insert into cache_rules (coordinate, max_age_seconds) values ('Product', -1)")).rejects.toThrow(/check constraint/);
      await expect(db.query("insert into cache_rules (coordinate, max_age_seconds, scope) values ('Product', 1, 'PUBLIC')")).rejects.toThrow(/check constraint/);
      await expect(db.query("insert into cache_rules (coordinate, max_age_seconds, stale_seconds) values ('Product', 1, -1)")).rejects.toThrow(/check constraint/);
    });

    it('every change bumps the cache_rules topic', async () => {
      const v0 = await topicVersion(db, 'cache_rules');
      expect(v0).toBeGreaterThanOrEqual(0);
      await setCacheRule(db, { coordinate: 'Query.topProducts', maxAgeSeconds: 10 });
      const v1 = await topicVersion(db, 'cache_rules');
      expect(v1).toBeGreaterThan(v0);
      await setCacheRule(db, { coordinate: 'Query.topProducts', maxAgeSeconds: 20 });
      const v2 = await topicVersion(db, 'cache_rules');
      expect(v2).toBeGreaterThan(v1);
      await removeCacheRule(db, 'Query.topProducts');
      expect(await topicVersion(db, 'cache_rules')).toBeGreaterThan(v2);
    });
  });

  describe('entity keys', () => {
    it('are canonical: keys sorted at every depth, scalar leaves as strings', () => {
      expect(canonicalEntityKey({ id: 1 })).toBe('{"id":"1"}');
      expect(canonicalEntityKey({ id: '1' })).toBe('{"id":"1"}');
      expect(canonicalEntityKey({ upc: 'a', sku: 7, org: { region: 'eu', id: 2 } })).toBe('{"org":{"id":"2","region":"eu"},"sku":"7","upc":"a"}');
      expect(canonicalEntityKey({ b: true, a: null, c: undefined, d: [2, 'x', { z: 1, y: 2 }] })).toBe('{"a":null,"b":"true","d":["2","x",{"y":"2","z":"1"}]}');
      expect(canonicalEntityKey({ '10': 'x', '9': 'y', id: 'q"\\' })).toBe('{"10":"x","9":"y","id":"q\\"\\\\"}');
    });

    it.each([
      [[{ id: 1 }], /must be a JSON object .* \(got an array\)/],
      ['{"id":1}', /must be a JSON object .* \(got the string/],
      [42, /must be a JSON object .* \(got a number\)/],
      [null, /must be a JSON object .* \(got null\)/],
      [{}, /at least one key field/],
      [{ id: () => 1 }, /the entity key\.id holds a function/],
    ])('refuses %j', (key, message) => {
      expect(() => canonicalEntityKey(key)).toThrow(InvalidCacheRuleError);
      expect(() => canonicalEntityKey(key)).toThrow(message);
    });
  });

  describe('purges', () => {
    it('records purges with increasing seqs and lists those after a seq, oldest first', async () => {
      const start = await latestPurgeSeq(db);
      const a = await recordPurge(db, { typeName: 'Product', entityKey: { id: 1 } });
      const b = await recordPurge(db, { subgraph: 'inventory' });
      const c = await recordPurge(db, { typeName: 'Review', subgraph: 'reviews' });
      const d = await recordPurge(db, { all: true });
      expect(a).toBeGreaterThan(start);
      expect([b, c, d]).toEqual([a + 1, a + 2, a + 3]);
      expect(await latestPurgeSeq(db)).toBe(d);
      const since = await listPurgesSince(db, start, { maxAgeSeconds: 3600 });
      expect(since.map(({ purgedAt, ...rest }) => (expect(purgedAt).toBeInstanceOf(Date), rest))).toEqual([
        { seq: a, typeName: 'Product', entityKey: '{"id":"1"}', all: false },
        { seq: b, subgraph: 'inventory', all: false },
        { seq: c, typeName: 'Review', subgraph: 'reviews', all: false },
        { seq: d, all: true },
      ]);
      expect((await listPurgesSince(db, b, { maxAgeSeconds: 3600 })).map((p) => p.seq)).toEqual([c, d]);
      expect(await listPurgesSince(db, d, { maxAgeSeconds: 3600 })).toEqual([]);
    });

    it('records several purges in one statement, in order, with one bump of the topic', async () => {
      const start = await latestPurgeSeq(db);
      const version = await topicVersion(db, 'cache_purges');
      // Text that needs escaping inside a Postgres array literal travels intact.
      const tricky = { id: 'a,"b"}\\c{', note: 'NULL' };
      const seqs = await recordPurges(db, [
        { typeName: 'Product', entityKey: { id: '2' } },
        { typeName: 'Product', entityKey: tricky },
        { typeName: 'Product', entityKey: { id: 4 }, subgraph: 'product' },
      ]);
      expect(seqs).toHaveLength(3);
      expect(seqs[1]).toBe(seqs[0] + 1);
      expect(seqs[2]).toBe(seqs[0] + 2);
      expect(await topicVersion(db, 'cache_purges')).toBe(version + 1);
      const listed = await listPurgesSince(db, start, { maxAgeSeconds: 60 });
      expect(listed.map((p) => [p.seq, p.entityKey, p.subgraph])).toEqual([
        [seqs[0], '{"id":"2"}', undefined],
        [seqs[1], canonicalEntityKey(tricky), undefined],
        [seqs[2], '{"id":"4"}', 'product'],
      ]);
      expect(JSON.parse(listed[1].entityKey!)).toEqual(tricky);
      expect(await recordPurges(db, [])).toEqual([]);
    });

    it('every purge bumps the cache_purges topic', async () => {
      const v0 = await topicVersion(db, 'cache_purges');
      expect(v0).toBeGreaterThanOrEqual(0);
      await recordPurge(db, { typeName: 'Product' });
      expect(await topicVersion(db, 'cache_purges')).toBe(v0 + 1);
    });

    it.each<[PurgeInput, RegExp]>([
      [{}, /a purge must name what it purges/],
      [{ all: false }, /a purge must name what it purges/],
      [{ entityKey: { id: '1' } }, /an entity key needs its type/],
      [{ entityKey: { id: '1' }, subgraph: 'product' }, /an entity key needs its type/],
      [{ all: true, typeName: 'Product' }, /a purge of everything names nothing else/],
      [{ all: true, subgraph: 'product' }, /a purge of everything names nothing else/],
      [{ typeName: 'Product', entityKey: [1] as unknown as Record<string, unknown> }, /must be a JSON object/],
      [{ typeName: 'Product', entityKey: {} }, /at least one key field/],
      [{ typeName: 'Product!' }, /invalid type name "Product!"/],
      [{ subgraph: 'in ventory' }, /invalid subgraph name "in ventory"/],
    ])('refuses %j, writing nothing', async (purge, message) => {
      const count = await purgeCount(db);
      const version = await topicVersion(db, 'cache_purges');
      const attempt = recordPurge(db, purge);
      await expect(attempt).rejects.toBeInstanceOf(InvalidCacheRuleError);
      await expect(attempt).rejects.toThrow(message);
      expect(await purgeCount(db)).toBe(count);
      expect(await topicVersion(db, 'cache_purges')).toBe(version);
    });

    it('one bad purge among several writes none of them', async () => {
      const count = await purgeCount(db);
      await expect(recordPurges(db, [{ typeName: 'Product' }, { entityKey: { id: '1' } }])).rejects.toBeInstanceOf(InvalidCacheRuleError);
      expect(await purgeCount(db)).toBe(count);
    });

    it('the table refuses a row that names nothing, a key without a type, or all with more', async () => {
      await expect(db.query('insert into cache_purges default values')).rejects.toThrow(/cache_purges_names_something/);
      await expect(db.query(`insert into cache_purges (entity_key, subgraph) values ('{"id":"1"}', 'product')`)).rejects.toThrow(/cache_purges_key_needs_type/);
      await expect(db.query(`insert into cache_purges (purge_all, type_name) values (true, 'Product')`)).rejects.toThrow(/cache_purges_all_alone/);
    });

    it('lists only purges younger than the max age, and trims the older ones', async () => {
      const start = await latestPurgeSeq(db);
      const old = await recordPurge(db, { typeName: 'Product', entityKey: { id: 'old' } });
      await db.query("update cache_purges set purged_at = now() - interval '2 hours' where seq = $1", [old]);
      const recent = await recordPurge(db, { typeName: 'Product', entityKey: { id: 'new' } });
      expect((await listPurgesSince(db, start, { maxAgeSeconds: 3600 })).map((p) => p.seq)).toEqual([recent]);
      expect((await listPurgesSince(db, start, { maxAgeSeconds: 3 * 3600 })).map((p) => p.seq)).toEqual([old, recent]);

      const version = await topicVersion(db, 'cache_purges');
      expect(await trimPurges(db, 3600)).toBe(1);
      expect(await trimPurges(db, 3600)).toBe(0);
      // Trimming changes nothing a router must act on: it wakes no router.
      expect(await topicVersion(db, 'cache_purges')).toBe(version);
      expect((await listPurgesSince(db, start, { maxAgeSeconds: 3 * 3600 })).map((p) => p.seq)).toEqual([recent]);
      expect(await latestPurgeSeq(db)).toBe(recent);
      await expect(trimPurges(db, -1)).rejects.toBeInstanceOf(InvalidCacheRuleError);
      await expect(listPurgesSince(db, -1, { maxAgeSeconds: 60 })).rejects.toBeInstanceOf(InvalidCacheRuleError);
    });

    /** Purge statements of this database waiting for an advisory lock (PostgreSQL only). */
    const WAITING_PURGES = "select count(*)::int as waiting from pg_stat_activity where datname = current_database() and wait_event = 'advisory' and query like '%insert into cache_purges%'";

    it('a purge that commits later never gets the smaller seq: writers wait for the one in progress', async () => {
      const other = await store.open();
      try {
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        let firstSeq = 0;
        const first = db.transaction(async (tx) => {
          firstSeq = await recordPurge(tx, { typeName: 'Product', entityKey: { id: 'first' } });
          await held;
        });
        await expect.poll(() => firstSeq, { timeout: 5_000 }).toBeGreaterThan(0);
        let secondDone = false;
        const second = recordPurge(other, { typeName: 'Product', entityKey: { id: 'second' } }).then((seq) => ((secondDone = true), seq));
        if (TEST_DATABASE_URL) {
          // PostgreSQL: the second statement is seen waiting for the purge lock the first holds (an
          // observed wait, not a pause). PGlite is one session whose socket server keeps a transaction's
          // statements together (embedded-server.ts), so there the second waits for the commit by
          // construction, and no third connection could ask meanwhile.
          const watcher = await store.open();
          try {
            await expect
              .poll(async () => (await watcher.query<{ waiting: number }>(WAITING_PURGES)).rows[0].waiting, { timeout: 5_000 })
              .toBeGreaterThan(0);
          } finally {
            await watcher.close();
          }
        }
        // Still waiting for the first to commit: seqs become visible in the order they were drawn.
        expect(secondDone).toBe(false);
        release();
        await first;
        const secondSeq = await second;
        expect(secondSeq).toBeGreaterThan(firstSeq);
        const listed = await listPurgesSince(db, firstSeq - 1, { maxAgeSeconds: 60 });
        expect(listed.map((p) => p.seq)).toEqual([firstSeq, secondSeq]);
      } finally {
        await other.close();
      }
    });
  });
});
