// Unit tests of the CORS allow-list: the store's checks (each limit at its boundary and one past it), its writes and change topic, and the book routers read.
import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../../test/helpers/database.js';
import { CorsBook } from './cors-book.js';
import { corsRuleInputProblems, InvalidCorsRuleError, listCorsRules, removeCorsRule, setCorsRule, type CorsRuleInput } from './cors-store.js';
import type { Database, Queryable } from './database.js';

async function topicVersion(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ version: string }>("select version from registry_changes where topic = 'cors'");
  return rows.length ? Number(rows[0].version) : -1;
}

const problemOf = (input: Partial<CorsRuleInput>) => corsRuleInputProblems({ origin: 'https://app.example.com', ...input })[0];
const headers = (n: number) => Array.from({ length: n }, (_, i) => `x-h${i}`);

describe('CORS rule checks', () => {
  it('holds max age to 0..86400 seconds: each end and one past it', () => {
    expect(problemOf({ maxAgeSeconds: 0 })).toBeUndefined();
    expect(problemOf({ maxAgeSeconds: 86_400 })).toBeUndefined();
    expect(problemOf({ maxAgeSeconds: 86_401 })).toBe('max age must be a whole number of seconds from 0 to 86400 (got 86401)');
    expect(problemOf({ maxAgeSeconds: -1 })).toMatch(/from 0 to 86400 \(got -1\)/);
    expect(problemOf({ maxAgeSeconds: 1.5 })).toMatch(/whole number/);
  });

  it('holds headers to 64 names of at most 128 characters: at the limit and one past it', () => {
    expect(problemOf({ headers: headers(64) })).toBeUndefined();
    expect(problemOf({ headers: headers(65) })).toBe('at most 64 headers (got 65)');
    expect(problemOf({ headers: ['x'.repeat(128)] })).toBeUndefined();
    expect(problemOf({ headers: ['x'.repeat(129)] })).toBe('a header name has at most 128 characters (got 129)');
    expect(problemOf({ headers: ['bad header'] })).toMatch(/invalid header name "bad header"/);
    expect(problemOf({ headers: [] })).toMatch(/give at least one of the headers/);
  });

  it('takes the methods an HTTP API is called with, in any case, and at least one', () => {
    expect(problemOf({ methods: ['get', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] })).toBeUndefined();
    expect(problemOf({ methods: ['TRACE'] })).toBe('unknown method "TRACE": use DELETE, GET, HEAD, PATCH, POST, PUT');
    expect(problemOf({ methods: [] })).toMatch(/give at least one of the methods/);
  });

  it('refuses credentials for *, and only for *', () => {
    expect(corsRuleInputProblems({ origin: '*', credentials: true })).toEqual([
      'credentials are never allowed for * (any origin): name the origins that may send cookies, e.g. https://app.example.com or https://*.example.com',
    ]);
    expect(corsRuleInputProblems({ origin: '*' })).toEqual([]);
    expect(corsRuleInputProblems({ origin: 'https://*.example.com', credentials: true })).toEqual([]);
  });
});

describe('CORS store', () => {
  let db: Database;
  useTestDatabase((opened) => (db = opened));

  it('stores a rule whole, lists cased and sorted, and bumps the cors topic', async () => {
    const before = await topicVersion(db);
    const rule = await setCorsRule(db, { origin: 'https://app.example.com', methods: ['post', 'GET', 'POST'], headers: ['X-Trace', 'Content-Type'], credentials: true, maxAgeSeconds: 600 });
    expect(rule).toEqual({ origin: 'https://app.example.com', methods: ['GET', 'POST'], headers: ['content-type', 'x-trace'], credentials: true, maxAgeSeconds: 600, updatedAt: expect.any(Date) });
    // Moved (an upsert fires both its insert and update statement triggers): every router reloads.
    expect(await topicVersion(db)).toBeGreaterThan(before);
    // Set again without flags: back to the defaults, not merged.
    expect(await setCorsRule(db, { origin: 'https://app.example.com' })).toEqual({ origin: 'https://app.example.com', credentials: false, updatedAt: expect.any(Date) });
  });

  it('writes nothing when a rule is refused', async () => {
    const before = { rules: await listCorsRules(db), version: await topicVersion(db) };
    await expect(setCorsRule(db, { origin: '*', credentials: true })).rejects.toThrow(InvalidCorsRuleError);
    await expect(setCorsRule(db, { origin: 'https://app.example.com/' })).rejects.toThrow(/no path, not even a trailing slash/);
    await expect(setCorsRule(db, { origin: 'https://x.example.com', maxAgeSeconds: 86_401 })).rejects.toThrow(/from 0 to 86400/);
    expect({ rules: await listCorsRules(db), version: await topicVersion(db) }).toEqual(before);
  });

  it('lists in code-unit order and removes by the entry text', async () => {
    await setCorsRule(db, { origin: 'https://*.example.com' });
    await setCorsRule(db, { origin: '*' });
    expect((await listCorsRules(db)).map((r) => r.origin)).toEqual(['*', 'https://*.example.com', 'https://app.example.com']);
    expect(await removeCorsRule(db, '*')).toBe(true);
    expect(await removeCorsRule(db, '*')).toBe(false);
    await expect(removeCorsRule(db, 'https://app.example.com/')).rejects.toThrow(InvalidCorsRuleError);
  });
});

describe('CORS book', () => {
  const rule = (origin: string, extra: { credentials?: boolean; maxAgeSeconds?: number } = {}) => ({ origin, credentials: false, ...extra });

  it('starts from its start list with the default rule, and the registry wins for the same entry', () => {
    const book = new CorsBook(['https://app.example.com', 'http://localhost:*']);
    expect(book.ruleFor('https://app.example.com')).toMatchObject({ entry: 'https://app.example.com', methods: ['GET', 'POST'], headers: undefined, credentials: false, maxAgeSeconds: undefined });
    expect(book.ruleFor('http://localhost:5173')?.entry).toBe('http://localhost:*');
    book.replace([{ ...rule('https://app.example.com'), credentials: true, maxAgeSeconds: 60 }]);
    expect(book.ruleFor('https://app.example.com')).toMatchObject({ credentials: true, maxAgeSeconds: 60 });
    // A rule removed from the registry falls back to the start list's, never to nothing.
    book.replace([]);
    expect(book.ruleFor('https://app.example.com')).toMatchObject({ credentials: false });
    expect(book.ruleFor('https://other.example.com')).toBeUndefined();
  });

  it('gives an origin the most specific rule: exact, then a host with any port, then the longest suffix, then *', () => {
    const book = new CorsBook(['*']);
    book.replace([rule('https://*.example.com', { maxAgeSeconds: 1 }), rule('https://*.api.example.com', { maxAgeSeconds: 2 }), rule('https://a.api.example.com', { maxAgeSeconds: 3 }), rule('https://b.api.example.com:*', { maxAgeSeconds: 4 })]);
    expect(book.entries()).toEqual(['https://a.api.example.com', 'https://b.api.example.com:*', 'https://*.api.example.com', 'https://*.example.com', '*']);
    expect(book.ruleFor('https://a.api.example.com')?.entry).toBe('https://a.api.example.com');
    expect(book.ruleFor('https://b.api.example.com')?.entry).toBe('https://b.api.example.com:*');
    expect(book.ruleFor('https://c.api.example.com')?.entry).toBe('https://*.api.example.com');
    expect(book.ruleFor('https://www.example.com')?.entry).toBe('https://*.example.com');
    expect(book.ruleFor('https://elsewhere.net')?.entry).toBe('*');
  });

  it('an empty list allows nothing', () => {
    const book = new CorsBook([]);
    expect(book.ruleFor('https://app.example.com')).toBeUndefined();
    expect(book.entries()).toEqual([]);
  });
});
