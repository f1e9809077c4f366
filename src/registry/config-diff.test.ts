// Unit tests of the configuration diff: what apply adds, changes, removes, leaves alone or refuses, and how it reads.
import { describe, expect, it } from 'vitest';
import { changeLines, countChanges, diffConfig, formatDiff } from './config-diff.js';
import type { ConfigDocument } from './config-document.js';

/** A registry with something in every section. */
const LIVE: ConfigDocument = {
  version: 1,
  subgraphs: { product: { url: 'http://a/graphql', route: { timeoutMs: 500, breaker: { failureRatio: 0.5 } } }, reviews: { url: 'http://r/graphql' } },
  policies: { '*': { costLimit: 50_000 }, Old: { maxConcurrency: 2 } },
  permissions: { 'Review.body': ['role:admin', 'scope:reviews'] },
  cacheRules: { Product: { maxAgeSeconds: 60, scope: 'public' } },
  trustedDocuments: [
    { client: 'web', version: '1.0', documents: ['a', 'b'] },
    { client: 'web', version: '2.0', documents: ['c'] },
  ],
  cors: { 'https://app.example.com': { credentials: true, maxAgeSeconds: 600 } },
};

describe('configuration diff', () => {
  it('finds nothing to do when the file says what the registry holds', () => {
    for (const prune of [false, true]) {
      const diff = diffConfig(LIVE, LIVE, { prune });
      expect(diff).toEqual({ changes: [], leftAlone: [], problems: [], sections: ['subgraphs', 'policies', 'permissions', 'cacheRules', 'trustedDocuments', 'cors'] });
      expect(formatDiff(diff)).toBe('no changes');
    }
  });

  it('adds, changes field by field, and describes each item whole (a field left out is cleared)', () => {
    const diff = diffConfig(
      LIVE,
      {
        version: 1,
        subgraphs: { product: { url: 'http://b/graphql', route: { breaker: { failureRatio: 0.6 } } } },
        policies: { '*': { costLimit: 60_000, deadlineMs: 2_000 }, Page: { maxConcurrency: 10 } },
        cacheRules: { Product: { maxAgeSeconds: 60 } },
      },
      { prune: false },
    );
    expect(diff.problems).toEqual([]);
    expect(diff.changes).toEqual([
      {
        section: 'subgraphs',
        ref: ['product'],
        action: 'change',
        fields: [
          { field: 'url', from: 'http://a/graphql', to: 'http://b/graphql' },
          { field: 'route.breaker.failureRatio', from: 0.5, to: 0.6 },
          { field: 'route.timeoutMs', from: 500, to: undefined },
        ],
      },
      {
        section: 'policies',
        ref: ['*'],
        action: 'change',
        fields: [
          { field: 'costLimit', from: 50_000, to: 60_000 },
          { field: 'deadlineMs', from: undefined, to: 2_000 },
        ],
      },
      { section: 'policies', ref: ['Page'], action: 'add', fields: [{ field: 'maxConcurrency', to: 10 }] },
      { section: 'cacheRules', ref: ['Product'], action: 'change', fields: [{ field: 'scope', from: 'public', to: undefined }] },
    ]);
    expect(countChanges(diff.changes)).toEqual({ added: 1, changed: 3, removed: 0 });
  });

  it('without --prune leaves alone what the file does not name; sections the file leaves out are not its own', () => {
    const diff = diffConfig(LIVE, { version: 1, policies: { '*': { costLimit: 50_000 } }, permissions: {} }, { prune: false });
    expect(diff.changes).toEqual([]);
    expect(diff.sections).toEqual(['policies', 'permissions']);
    expect(diff.leftAlone).toEqual([
      { section: 'policies', ref: ['Old'], why: 'not-named' },
      { section: 'permissions', ref: ['Review.body', 'role:admin'], why: 'not-named' },
      { section: 'permissions', ref: ['Review.body', 'scope:reviews'], why: 'not-named' },
    ]);
    expect(formatDiff(diff)).toBe(
      [
        'left alone, not in the file (--prune removes them): policy Old; permission Review.body: role:admin; permission Review.body: scope:reviews',
        'not in the file, so not managed by it: subgraphs, cacheRules, trustedDocuments, cors',
        'no changes',
      ].join('\n'),
    );
  });

  it('with --prune removes them, in the sections the file holds, but never a subgraph', () => {
    const diff = diffConfig(
      LIVE,
      { version: 1, subgraphs: { product: LIVE.subgraphs!.product }, policies: { '*': { costLimit: 50_000 } }, permissions: { 'Review.body': ['role:admin'] }, trustedDocuments: [{ client: 'web', version: '2.0', documents: ['c'] }] },
      { prune: true },
    );
    expect(diff.changes.map((c) => [c.action, c.section, ...c.ref])).toEqual([
      ['remove', 'policies', 'Old'],
      ['remove', 'permissions', 'Review.body', 'scope:reviews'],
      ['remove', 'trustedDocuments', 'a'],
      ['remove', 'trustedDocuments', 'b'],
    ]);
    expect(diff.leftAlone).toEqual([{ section: 'subgraphs', ref: ['reviews'], why: 'never-pruned' }]);
    expect(formatDiff(diff)).toBe(
      [
        '- policy Old  (maxConcurrency: 2)',
        '- permission Review.body: scope:reviews',
        '- trusted documents of web 1.0: 2 (a, b)',
        'left alone, not in the file (subgraphs are removed by switchyard subgraph remove): subgraph reviews',
        'not in the file, so not managed by it: cacheRules, cors',
        '0 to add, 0 to change, 4 to remove',
      ].join('\n'),
    );
  });

  it('refuses a subgraph that is not published, and documents the registry does not hold under that manifest', () => {
    const diff = diffConfig(
      LIVE,
      {
        version: 1,
        subgraphs: { ...LIVE.subgraphs, shipping: { url: 'http://s/graphql' } },
        trustedDocuments: [
          { client: 'web', version: '1.0', documents: ['a', 'b', 'x', 'y'] },
          { client: 'web', version: '3.0', documents: ['c'] },
        ],
      },
      { prune: false },
    );
    expect(diff.problems).toEqual([
      'subgraph "shipping" is not published: publish its schema first (switchyard subgraph publish shipping --url URL); config apply sets the URL and route of published subgraphs only',
      'trusted document c is registered for web 2.0, not web 3.0: an id belongs to the manifest that first published it',
      'trusted documents of web 1.0 are not published: x, y (publish the manifest with switchyard operations publish FILE --client ... --version ...; the file names documents, it does not hold them)',
    ]);
  });

  it('shows added and removed items on one line, changed ones field by field', () => {
    const lines = changeLines(
      diffConfig(
        LIVE,
        { version: 1, subgraphs: { product: { url: 'http://a/graphql' } }, policies: { Page: { costLimit: 5, maxWaitMs: 100 } }, permissions: { 'Review.body': ['role:admin', 'scope:reviews', 'sub:42'] }, cacheRules: {} },
        { prune: true },
      ).changes,
    );
    expect(lines).toEqual([
      '~ subgraph product',
      '    route.timeoutMs: 500 → (not set)',
      '    route.breaker.failureRatio: 0.5 → (not set)',
      '- policy *  (costLimit: 50000)',
      '- policy Old  (maxConcurrency: 2)',
      '+ policy Page  (costLimit: 5, maxWaitMs: 100)',
      '+ permission Review.body: sub:42',
      '- cache rule Product  (maxAgeSeconds: 60, scope: "public")',
    ]);
  });
});
