// Unit tests of the registry store and its change feed, on the embedded database or TEST_DATABASE_URL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestStore, openMigrated, type TestStore } from '../../test/helpers/database.js';
import type { Database } from './database.js';
import { migrate } from './migrate.js';
import { watchChanges } from './change-feed.js';
import { CompositionRejectedError, InvalidSubgraphError, listSubgraphs, publishSubgraph, removeSubgraph } from './subgraph-store.js';

const composes = () => ({ ok: true as const });
const refuses = () => ({ ok: false as const, errors: [{ code: 'TEST', message: 'does not compose' }] });

describe('subgraph store', () => {
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

  it('migrates once: a second run applies nothing', async () => {
    expect(await migrate(db)).toEqual([]);
  });

  it('publishes, replaces and lists subgraphs', async () => {
    const first = await publishSubgraph(db, { name: 'alpha', url: 'http://127.0.0.1:1/graphql', sdl: 'type Query { a: Int }' }, composes);
    expect(first.changed).toBe(true);
    const again = await publishSubgraph(db, { name: 'alpha', url: 'http://127.0.0.1:1/graphql', sdl: 'type Query { a: Int }' }, composes);
    expect(again.changed).toBe(false);
    await publishSubgraph(db, { name: 'alpha', url: 'http://127.0.0.1:2/graphql', sdl: 'type Query { a: Int }', route: { timeoutMs: 500 } }, composes);
    const list = await listSubgraphs(db);
    expect(list.map((s) => [s.name, s.url, s.route])).toEqual([['alpha', 'http://127.0.0.1:2/graphql', { timeoutMs: 500 }]]);
  });

  it('stores nothing when the set would not compose', async () => {
    const before = await listSubgraphs(db);
    await expect(publishSubgraph(db, { name: 'beta', url: 'http://127.0.0.1:3/graphql', sdl: 'type Query { b: Int }' }, refuses)).rejects.toBeInstanceOf(CompositionRejectedError);
    expect(await listSubgraphs(db)).toEqual(before);
  });

  it('rejects bad names, URLs and route metadata before touching the database', async () => {
    await expect(publishSubgraph(db, { name: '1bad', url: 'http://x/graphql', sdl: 'type Query { a: Int }' }, composes)).rejects.toBeInstanceOf(InvalidSubgraphError);
    await expect(publishSubgraph(db, { name: 'ok', url: 'ftp://x', sdl: 'type Query { a: Int }' }, composes)).rejects.toThrow(/http or https/);
    await expect(publishSubgraph(db, { name: 'ok', url: 'http://x/graphql', sdl: 'type Query { a: Int }', route: { timeoutMs: -1 } }, composes)).rejects.toThrow(/route metadata/);
  });

  it('removes a subgraph only if the rest composes', async () => {
    await publishSubgraph(db, { name: 'gamma', url: 'http://127.0.0.1:4/graphql', sdl: 'type Query { g: Int }' }, composes);
    await expect(removeSubgraph(db, 'gamma', refuses)).rejects.toBeInstanceOf(CompositionRejectedError);
    expect(await removeSubgraph(db, 'gamma', composes)).toBe(true);
    expect(await removeSubgraph(db, 'gamma', composes)).toBe(false);
  });

  it('reports every write through the change feed, from another connection too', async () => {
    const versions: number[] = [];
    let notify: () => void = () => {};
    const feed = await watchChanges(db, (topic, version) => {
      if (topic === 'subgraphs') {
        versions.push(version);
        notify();
      }
    }, { pollMs: 50 });
    try {
      expect(versions).toHaveLength(1);
      const other = await store.open();
      const changed = new Promise<void>((resolve) => (notify = resolve));
      await publishSubgraph(other, { name: 'delta', url: 'http://127.0.0.1:5/graphql', sdl: 'type Query { d: Int }' }, composes);
      await other.close();
      await changed;
      expect(versions).toHaveLength(2);
      expect(versions[1]).toBeGreaterThan(versions[0]);
    } finally {
      await feed.stop();
    }
  });
});
