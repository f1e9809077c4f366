// The change feed's topics: the list the router's handlers are typed by is the one the migrations make.
import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../../test/helpers/database.js';
import { isRegistryTopic, watchChanges } from './change-feed.js';
import type { Database } from './database.js';

describe('registry change topics', () => {
  let db: Database;
  useTestDatabase((opened) => (db = opened));

  it('knows every topic the migrations create', async () => {
    const { rows } = await db.query<{ topic: string }>('select topic from registry_changes order by topic');
    expect(rows.map((row) => row.topic).filter((topic) => !isRegistryTopic(topic))).toEqual([]);
    expect(rows.map((row) => row.topic)).toEqual(['cache_purges', 'cache_rules', 'cors', 'permissions', 'policies', 'signing_keys', 'subgraphs', 'trusted_documents']);
  });

  it('passes on every topic once at start, a topic it does not know included', async () => {
    await db.query("insert into registry_changes (topic) values ('from_a_newer_router')");
    const topics: string[] = [];
    const feed = await watchChanges(db, (topic) => void topics.push(topic), { pollMs: 60_000 });
    await feed.stop();
    expect(topics).toEqual(['cache_purges', 'cache_rules', 'cors', 'from_a_newer_router', 'permissions', 'policies', 'signing_keys', 'subgraphs', 'trusted_documents']);
    expect(topics.filter((topic) => !isRegistryTopic(topic))).toEqual(['from_a_newer_router']);
  });
});
