// Unit tests of configuration sections by descriptor: a section is one file (a test-only one goes through export, validation, diff, apply and audit unchanged), and every registered section round-trips.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createTestStore, openMigrated, type TestStore } from '../../../test/helpers/database.js';
import { assertNever } from '../../errors/assert-never.js';
import { queryAudit } from '../audit-store.js';
import { setCacheRule } from '../cache-store.js';
import { setCorsRule } from '../cors-store.js';
import { diffConfig, formatDiff } from '../config-diff.js';
import { InvalidConfigFileError, readConfigYaml, writeConfigYaml, type ConfigDocument, type ConfigSection } from '../config-document.js';
import { applyConfig, CONFIG_APPLY_ACTION, readLiveConfig, type ApplyOptions } from '../config-store.js';
import type { Database } from '../database.js';
import { grantPermission } from '../permission-store.js';
import { listPolicies, setPolicy } from '../policy-store.js';
import { publishSubgraph } from '../subgraph-store.js';
import { publishTrustedDocuments } from '../trusted-documents.js';
import type { ConfigSectionDescriptor, SectionList } from './section.js';
import { keyedBy, keyRule, mapValues, present, sortedEntries } from './section-schema.js';
import { SECTIONS } from './sections.js';

/** A section no release has: notes by name, in a table the test creates. All it takes is this one descriptor. */
interface Note {
  body: string;
  pinned?: boolean;
}

const notesSection: ConfigSectionDescriptor<Record<string, Note>, 'notes'> = {
  name: 'notes',
  noun: 'note',
  schema: keyedBy(
    z.object({ body: z.string().min(1, 'a note needs a body'), pinned: z.boolean().nullish() }).strict(),
    keyRule((name) => (/^[a-z]+$/.test(name) ? undefined : `invalid note name "${name}": use a to z`)),
  ).transform((notes) => mapValues(notes, (note) => present(note) as Note)),
  async export(db) {
    const { rows } = await db.query<{ name: string; body: string; pinned: boolean | null }>('select name, body, pinned from config_notes');
    return sortedEntries(rows.map(({ name, body, pinned }) => [name, pinned === null ? { body } : { body, pinned }]));
  },
  items: (notes) => Object.entries(notes).map(([name, note]) => ({ ref: [name], fields: { ...note } })),
  async apply(tx, changes, desired) {
    for (const { action, ref } of changes) {
      switch (action) {
        case 'add':
        case 'change':
          await tx.query('insert into config_notes (name, body, pinned) values ($1, $2, $3) on conflict (name) do update set body = excluded.body, pinned = excluded.pinned', [ref[0], desired[ref[0]].body, desired[ref[0]].pinned ?? null]);
          break;
        case 'remove':
          await tx.query('delete from config_notes where name = $1', [ref[0]]);
          break;
        default:
          assertNever(action);
      }
    }
  },
};

/** The registered sections and the test's, as a release adding it would register it: one line. */
const WITH_NOTES: SectionList = [...SECTIONS, notesSection];
const APPLY: ApplyOptions = { prune: false, dryRun: false, actor: 'ci-bot' };
const composes = () => ({ ok: true as const });

function problemsOf(read: () => unknown): string[] {
  try {
    read();
  } catch (error) {
    if (error instanceof InvalidConfigFileError) return error.message.split('\n').slice(1).map((line) => line.trim());
    throw error;
  }
  throw new Error('the file was accepted');
}

async function publishSchemas(db: Database): Promise<void> {
  await publishSubgraph(db, { name: 'alpha', url: 'http://127.0.0.1:1/alpha', sdl: 'type Query { a: Int }' }, composes);
}

const manifest = (client: string, id: string) => ({ clientName: client, clientVersion: '1.0', documents: [{ id, body: 'query Page { a }' }] });

/**
 * Per registered section: how the live registry gets items in it (one command at a time, as ops do),
 * and what another registry must hold before a file can be applied to it (what other teams publish).
 * Typed by section name, so a section registered without an entry here fails the typecheck.
 */
const FIXTURES: Record<ConfigSection, { configure(db: Database): Promise<unknown>; prepare?(db: Database): Promise<unknown> }> = {
  subgraphs: {
    configure: (db) => publishSubgraph(db, { name: 'alpha', url: 'http://alpha.internal/graphql', sdl: 'type Query { a: Int }', route: { timeoutMs: 800 } }, composes),
    prepare: publishSchemas,
  },
  policies: { configure: (db) => setPolicy(db, 'ProductPage', { maxConcurrency: 10, queueLength: 0 }) },
  permissions: { configure: (db) => grantPermission(db, 'role:admin', 'Query.a') },
  cacheRules: { configure: (db) => setCacheRule(db, { coordinate: 'Query.a', maxAgeSeconds: 60, scope: 'public' }) },
  trustedDocuments: {
    configure: (db) => publishTrustedDocuments(db, manifest('web', 'page-1')),
    // A manifest the file does not name, for --prune to withdraw.
    prepare: async (db) => [await publishTrustedDocuments(db, manifest('web', 'page-1')), await publishTrustedDocuments(db, manifest('ios', 'ios-1'))],
  },
  cors: {
    configure: async (db) => [
      await setCorsRule(db, { origin: 'https://app.example.com', headers: ['Content-Type', 'authorization'], credentials: true, maxAgeSeconds: 600 }),
      await setCorsRule(db, { origin: 'https://*.example.com', methods: ['post'] }),
    ],
    // A rule the file does not name, for --prune to remove.
    prepare: (db) => setCorsRule(db, { origin: 'http://localhost:*' }),
  },
};

describe('configuration sections by descriptor', () => {
  let source: TestStore;
  let target: TestStore;
  let live: Database;
  let other: Database;

  beforeAll(async () => {
    // One after the other: two embedded databases starting at once on a busy machine can miss the connection timeout.
    source = await createTestStore();
    live = await openMigrated(source);
    target = await createTestStore();
    other = await openMigrated(target);
    await publishSchemas(live);
    for (const { name } of SECTIONS) {
      await FIXTURES[name].configure(live);
      await FIXTURES[name].prepare?.(other);
    }
    await live.query(`create table config_notes (name text primary key, body text not null check (body <> 'refused'), pinned boolean)`);
    await live.query(`insert into config_notes (name, body, pinned) values ('welcome', 'hi', true), ('old', 'bye', null)`);
  });
  afterAll(async () => {
    await Promise.all([live?.close(), other?.close()]);
    await Promise.all([source?.destroy(), target?.destroy()]);
  });

  it('registers each section once, by a name the file can hold', () => {
    const names = SECTIONS.map((section) => section.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[a-z][A-Za-z]*$/);
  });

  it.each((SECTIONS as SectionList).map((section) => [section.name, section] as const))('%s: exported, written, read back and applied to another registry, says the same', async (name, section) => {
    const exported = (await readLiveConfig(live)) as Record<string, unknown>;
    expect(section.items(exported[name]).length).toBeGreaterThan(0);
    const file = readConfigYaml(writeConfigYaml({ version: 1, [name]: exported[name] } as ConfigDocument));
    expect(file).toEqual({ version: 1, [name]: exported[name] });
    const outcome = await applyConfig(other, file, { ...APPLY, prune: true });
    expect(outcome.applied).toBe(true);
    expect(((await readLiveConfig(other)) as Record<string, unknown>)[name]).toEqual(exported[name]);
    expect(diffConfig(await readLiveConfig(other), file, { prune: true }).changes).toEqual([]);
  });

  it('a new section is one descriptor: export, the file, validation, the diff, one-transaction apply and the audit row take it as it is', async () => {
    const exported = await readLiveConfig(live, WITH_NOTES);
    expect((exported as Record<string, unknown>).notes).toEqual({ old: { body: 'bye' }, welcome: { body: 'hi', pinned: true } });
    const yaml = writeConfigYaml(exported, WITH_NOTES);
    // Last, as registered, and read back the same.
    expect(yaml).toMatch(/\ntrustedDocuments:\n[\s\S]*\nnotes:\n {2}old:\n {4}body: bye\n {2}welcome:\n {4}body: hi\n {4}pinned: true\n$/);
    expect(readConfigYaml(yaml, 'config.yaml', WITH_NOTES)).toEqual(exported);
    // Unregistered, the section is an unknown key; registered, its own rules speak, with lines and paths.
    expect(problemsOf(() => readConfigYaml(yaml))).toContain(`line ${yaml.split('\n').indexOf('notes:') + 1}, notes: Unrecognized key: "notes"`);
    expect(problemsOf(() => readConfigYaml('version: 1\nnotes:\n  Bad: { body: "" }\n', undefined, WITH_NOTES))).toEqual(['line 3, notes.Bad: invalid note name "Bad": use a to z', 'line 3, notes.Bad.body: a note needs a body']);

    const desired = readConfigYaml('version: 1\nnotes:\n  welcome: { body: hello }\n  fresh: { body: new, pinned: false }\n', 'notes.yaml', WITH_NOTES);
    const outcome = await applyConfig(live, desired, { ...APPLY, prune: true, source: 'notes.yaml', sections: WITH_NOTES });
    const lines = ['+ note fresh  (body: "new", pinned: false)', '- note old  (body: "bye")', '~ note welcome', '    body: "hi" → "hello"', '    pinned: true → (not set)'];
    expect(formatDiff(outcome.diff, WITH_NOTES)).toBe([...lines, 'not in the file, so not managed by it: subgraphs, policies, permissions, cacheRules, trustedDocuments, cors', '1 to add, 1 to change, 1 to remove'].join('\n'));
    expect(((await readLiveConfig(live, WITH_NOTES)) as Record<string, unknown>).notes).toEqual({ fresh: { body: 'new', pinned: false }, welcome: { body: 'hello' } });
    const [row] = await queryAudit(live, { operation: CONFIG_APPLY_ACTION, limit: 1 });
    expect(row).toMatchObject({ subject: 'ci-bot', subgraphs: [], detail: { file: 'notes.yaml', prune: true, sections: ['notes'], added: 1, changed: 1, removed: 1, changes: lines } });
  });

  it('a new section is written in the one transaction: its store refusing undoes the other sections', async () => {
    const before = { config: await readLiveConfig(live, WITH_NOTES), audit: (await queryAudit(live, { operation: CONFIG_APPLY_ACTION })).length };
    const desired = readConfigYaml('version: 1\npolicies:\n  Early: { costLimit: 4 }\nnotes:\n  late: { body: refused }\n', undefined, WITH_NOTES);
    await expect(applyConfig(live, desired, { ...APPLY, sections: WITH_NOTES })).rejects.toThrow(/config_notes/);
    expect((await listPolicies(live)).map((p) => p.operationName)).not.toContain('Early');
    expect({ config: await readLiveConfig(live, WITH_NOTES), audit: (await queryAudit(live, { operation: CONFIG_APPLY_ACTION })).length }).toEqual(before);
  });
});
