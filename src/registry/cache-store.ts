// Section cache metadata (tables `cache_rules` and `cache_purges`): live max-age rules per type or field, and the purge log routers follow.
import { assertNever } from '../errors/assert-never.js';
import type { Queryable } from './database.js';

export type CacheScope = 'public' | 'private';

const CACHE_SCOPES: readonly CacheScope[] = ['public', 'private'];

/** Seconds an expired entry stays usable as the fallback when a rule does not say (`stale_seconds` null). */
export const DEFAULT_STALE_SECONDS = 300;

/**
 * How long a purge is kept and read, in seconds: a day. Routers read only purges younger than this and
 * delete older ones (`trimPurges`), so no cached part may live longer, fresh and stale together
 * (src/gateway/plan/section-policy.ts caps every part to it): an older purge could match nothing.
 */
export const PURGE_HORIZON_SECONDS = 86_400;

export interface CacheRuleInput {
  /** `Type` or `Type.field`. */
  coordinate: string;
  /** Seconds an answer may be served from the cache; 0 = never cached. */
  maxAgeSeconds: number;
  /** `undefined` keeps what the rule says (nothing, for a new rule); `null` clears it. */
  scope?: CacheScope | null;
  /** Seconds past the max age an entry is kept as the fallback. `undefined` keeps, `null` clears (then {@link DEFAULT_STALE_SECONDS}). */
  staleSeconds?: number | null;
}

/** One stored rule; `scope` and `staleSeconds` are absent when the rule does not set them. */
export interface CacheRuleRecord {
  coordinate: string;
  maxAgeSeconds: number;
  scope?: CacheScope;
  staleSeconds?: number;
  updatedAt: Date;
}

/** What to purge: everything (`all`, alone), or entries narrowed by type, entity key (with its type) and subgraph. */
export interface PurgeInput {
  typeName?: string;
  /** The entity's key fields, e.g. `{ id: "1" }`; stored canonically (see {@link canonicalEntityKey}). */
  entityKey?: Record<string, unknown>;
  subgraph?: string;
  all?: boolean;
}

/** One recorded purge; absent fields match anything. */
export interface PurgeRecord {
  seq: number;
  typeName?: string;
  /** Canonical JSON text of the key: compare with {@link canonicalEntityKey} of an entry's key. */
  entityKey?: string;
  subgraph?: string;
  all: boolean;
  purgedAt: Date;
}

export class InvalidCacheRuleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidCacheRuleError';
  }
}

const NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;
const COORDINATE = /^[_A-Za-z][_0-9A-Za-z]*(\.[_A-Za-z][_0-9A-Za-z]*)?$/;
/** Subgraph names as the subgraph registry allows them (migration 001). */
const SUBGRAPH = /^[A-Za-z][A-Za-z0-9_-]{0,62}$/;
const MAX_INT = 2_147_483_647;
/**
 * Purge writers serialise on this lock from before they draw a seq until they commit, so seqs
 * become visible in order: without it, a purge drawing seq 11 could commit after one drawing 12,
 * and a router that already read 12 would ask for "after 12" and never see 11. (The change
 * trigger's row lock serialises writers too, but only after their rows have drawn seqs.)
 */
const PURGE_LOCK = 7_428_113_920;

function seconds(what: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_INT) {
    const got = typeof value === 'number' ? String(value) : (JSON.stringify(value) ?? String(value));
    throw new InvalidCacheRuleError(`${what} must be a whole number of seconds, 0 or more${typeof value === 'number' && value > MAX_INT ? `, at most ${MAX_INT}` : ''} (got ${got})`);
  }
  return value;
}

function checkCoordinate(coordinate: unknown): string {
  if (typeof coordinate !== 'string' || !COORDINATE.test(coordinate)) {
    throw new InvalidCacheRuleError(`invalid coordinate ${JSON.stringify(coordinate) ?? String(coordinate)}: use a type or a field of the graph, e.g. Product or Product.price`);
  }
  return coordinate;
}

function checkScope(scope: unknown): CacheScope | null {
  if (scope === null) return null;
  if (typeof scope !== 'string' || !(CACHE_SCOPES as readonly string[]).includes(scope)) {
    throw new InvalidCacheRuleError(`unknown scope ${JSON.stringify(scope) ?? String(scope)}: use public (shared by everyone) or private (per principal)`);
  }
  return scope as CacheScope;
}

/** The message of what `check` throws for `value`, or undefined when it passes. */
function problemOf(check: () => unknown): string | undefined {
  try {
    check();
    return undefined;
  } catch (error) {
    if (error instanceof InvalidCacheRuleError) return error.message;
    throw error;
  }
}

/**
 * Why a rule's fields cannot be stored, one message per field, or undefined: the rules `setCacheRule`
 * applies (and `config apply`, which lists every problem of a file at once).
 */
export const cacheRuleProblems = {
  coordinate: (value: unknown) => problemOf(() => checkCoordinate(value)),
  maxAgeSeconds: (value: unknown) => problemOf(() => seconds('max age', value)),
  scope: (value: unknown) => problemOf(() => checkScope(value)),
  staleSeconds: (value: unknown) => (value === null ? undefined : problemOf(() => seconds('stale seconds', value))),
};

/**
 * The one text form of an entity key, so a purge and a cached entry agree whoever wrote them:
 * 1. Object keys are sorted (by UTF-16 code units) at every depth.
 * 2. Scalar leaves become strings: IDs arrive as strings from clients and as numbers from some
 *    subgraphs, and `{"id":1}` must purge what `{"id":"1"}` cached. `null` stays `null`.
 * 3. Arrays keep their order; properties whose value is `undefined` are left out (as in JSON).
 * 4. `__typename` is left out at every level: a representation carries it, a purge need not, and it
 *    is never a key field.
 * The result is compact JSON text. Throws InvalidCacheRuleError unless `key` is a non-empty object.
 * The section cache's entity tags (src/cache/tags.ts) use the same text, through canonicalKeyText.
 */
export function canonicalEntityKey(key: unknown): string {
  if (typeof key !== 'object' || key === null || Array.isArray(key)) {
    throw new InvalidCacheRuleError(`an entity key must be a JSON object of its key fields, e.g. {"id":"1"} (got ${describe(key)})`);
  }
  const text = canonical(key, 'the entity key');
  if (text === '{}') throw new InvalidCacheRuleError('an entity key must name at least one key field, e.g. {"id":"1"}');
  return text;
}

/** The canonical text of any key value (rules 1 to 4 above), without the checks on the whole key. */
export function canonicalKeyText(value: unknown): string {
  return canonical(value ?? null, 'the key');
}

function canonical(value: unknown, path: string): string {
  if (value === null) return 'null';
  const kind = typeof value;
  switch (kind) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
    case 'boolean':
    case 'bigint':
      return JSON.stringify(String(value));
    case 'object': {
      if (Array.isArray(value)) return `[${value.map((item, i) => canonical(item ?? null, `${path}[${i}]`)).join(',')}]`;
      const entries = Object.entries(value as Record<string, unknown>)
        .filter(([k, v]) => k !== '__typename' && v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v, `${path}.${k}`)}`).join(',')}}`;
    }
    case 'undefined':
    case 'symbol':
    case 'function':
      throw new InvalidCacheRuleError(`${path} holds a ${kind}: entity keys hold only strings, numbers, booleans, null, objects and arrays`);
    default:
      return assertNever(kind, 'typeof');
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'string' ? `the string ${JSON.stringify(value)}` : `a ${typeof value}`;
}

interface PurgeRow {
  type_name: string | null;
  entity_key: string | null;
  subgraph: string | null;
  purge_all: boolean;
}

/** Validates one purge and turns it into its row; throws InvalidCacheRuleError naming what to fix. */
function toPurgeRow(purge: PurgeInput): PurgeRow {
  if (typeof purge !== 'object' || purge === null) throw new InvalidCacheRuleError('a purge must be an object: { all }, { typeName, entityKey? }, { subgraph } or both');
  const { typeName, entityKey, subgraph, all } = purge;
  if (all !== undefined && typeof all !== 'boolean') throw new InvalidCacheRuleError(`"all" must be true or false (got ${describe(all)})`);
  if (typeName !== undefined && (typeof typeName !== 'string' || !NAME.test(typeName))) {
    throw new InvalidCacheRuleError(`invalid type name ${JSON.stringify(typeName) ?? String(typeName)}: use a GraphQL type name, e.g. Product`);
  }
  if (subgraph !== undefined && (typeof subgraph !== 'string' || !SUBGRAPH.test(subgraph))) {
    throw new InvalidCacheRuleError(`invalid subgraph name ${JSON.stringify(subgraph) ?? String(subgraph)}: use the name it was published under`);
  }
  if (all) {
    if (typeName !== undefined || entityKey !== undefined || subgraph !== undefined) {
      throw new InvalidCacheRuleError('a purge of everything names nothing else: drop the type, key and subgraph, or drop "all"');
    }
    return { type_name: null, entity_key: null, subgraph: null, purge_all: true };
  }
  if (entityKey !== undefined && typeName === undefined) {
    throw new InvalidCacheRuleError('an entity key needs its type: the same key may belong to entities of several types');
  }
  if (typeName === undefined && subgraph === undefined) {
    throw new InvalidCacheRuleError('a purge must name what it purges: a type (optionally one entity key), a subgraph, or everything');
  }
  return { type_name: typeName ?? null, entity_key: entityKey === undefined ? null : canonicalEntityKey(entityKey), subgraph: subgraph ?? null, purge_all: false };
}

interface CacheRuleRow {
  coordinate: string;
  max_age_seconds: number;
  scope: CacheScope | null;
  stale_seconds: number | null;
  updated_at: Date;
}

function toRuleRecord(row: CacheRuleRow): CacheRuleRecord {
  const record: CacheRuleRecord = { coordinate: row.coordinate, maxAgeSeconds: Number(row.max_age_seconds), updatedAt: row.updated_at };
  if (row.scope !== null) record.scope = row.scope;
  if (row.stale_seconds !== null) record.staleSeconds = Number(row.stale_seconds);
  return record;
}

/**
 * Creates or updates the rule of one coordinate. `scope` and `staleSeconds` left `undefined` keep
 * their stored values; `null` clears them. Validates before writing; returns the stored rule.
 */
export async function setCacheRule(db: Queryable, input: CacheRuleInput): Promise<CacheRuleRecord> {
  const coordinate = checkCoordinate(input.coordinate);
  const columns: [string, unknown][] = [['max_age_seconds', seconds('max age', input.maxAgeSeconds)]];
  if (input.scope !== undefined) columns.push(['scope', checkScope(input.scope)]);
  if (input.staleSeconds !== undefined) columns.push(['stale_seconds', input.staleSeconds === null ? null : seconds('stale seconds', input.staleSeconds)]);
  const names = columns.map(([name]) => name);
  const { rows } = await db.query<CacheRuleRow>(
    `insert into cache_rules (coordinate, ${names.join(', ')}) values ($1, ${names.map((_, i) => `$${i + 2}`).join(', ')})
     on conflict (coordinate) do update set ${names.map((c) => `${c} = excluded.${c}`).join(', ')}, updated_at = now()
     returning coordinate, max_age_seconds, scope, stale_seconds, updated_at`,
    [coordinate, ...columns.map(([, value]) => value)],
  );
  return toRuleRecord(rows[0]);
}

export async function listCacheRules(db: Queryable): Promise<CacheRuleRecord[]> {
  const { rows } = await db.query<CacheRuleRow>('select coordinate, max_age_seconds, scope, stale_seconds, updated_at from cache_rules order by coordinate');
  return rows.map(toRuleRecord);
}

/** Removes the rule of one coordinate (the SDL hint applies again); true if it existed. */
export async function removeCacheRule(db: Queryable, coordinate: string): Promise<boolean> {
  const { rowCount } = await db.query('delete from cache_rules where coordinate = $1', [coordinate]);
  return (rowCount ?? 0) > 0;
}

/** Records one purge; returns its seq. Throws InvalidCacheRuleError, writing nothing, unless it names something. */
export async function recordPurge(db: Queryable, purge: PurgeInput): Promise<number> {
  const [seq] = await recordPurges(db, [purge]);
  return seq;
}

/**
 * Records several purges in one statement (one round trip, one change notification), for a
 * mutation that returned several entities. All are validated first: one bad purge writes none.
 * Returns their seqs, in the order given.
 */
export async function recordPurges(db: Queryable, purges: readonly PurgeInput[]): Promise<number[]> {
  const rows = purges.map(toPurgeRow);
  if (rows.length === 0) return [];
  // The lock is taken in the statement itself (a volatile CTE runs before the rows that draw their
  // seqs) and held until it commits; arrays keep the statement's size fixed however many purges.
  const { rows: inserted } = await db.query<{ seq: string }>(
    `with locked as (select pg_advisory_xact_lock($1::bigint))
     insert into cache_purges (type_name, entity_key, subgraph, purge_all)
     select p.type_name, p.entity_key, p.subgraph, p.purge_all
       from locked, unnest($2::text[], $3::text[], $4::text[], $5::boolean[]) with ordinality as p(type_name, entity_key, subgraph, purge_all, n)
      order by p.n
     returning seq`,
    [PURGE_LOCK, rows.map((r) => r.type_name), rows.map((r) => r.entity_key), rows.map((r) => r.subgraph), rows.map((r) => r.purge_all)],
  );
  return inserted.map((row) => Number(row.seq)).sort((a, b) => a - b);
}

/**
 * The purges after `seq`, oldest first, among those younger than `maxAgeSeconds` (a router's
 * entries are never older than their max age, so older purges cannot match anything it holds).
 */
export async function listPurgesSince(db: Queryable, seq: number, options: { maxAgeSeconds: number }): Promise<PurgeRecord[]> {
  if (!Number.isSafeInteger(seq) || seq < 0) throw new InvalidCacheRuleError(`seq must be a whole number, 0 or more (got ${seq})`);
  const maxAge = options.maxAgeSeconds;
  if (typeof maxAge !== 'number' || !Number.isFinite(maxAge) || maxAge < 0) throw new InvalidCacheRuleError(`maxAgeSeconds must be a number of seconds, 0 or more (got ${maxAge})`);
  const { rows } = await db.query<PurgeRow & { seq: string; purged_at: Date }>(
    `select seq, type_name, entity_key, subgraph, purge_all, purged_at from cache_purges
      where seq > $1 and purged_at > now() - make_interval(secs => $2::double precision)
      order by seq`,
    [seq, maxAge],
  );
  return rows.map((row) => {
    const record: PurgeRecord = { seq: Number(row.seq), all: row.purge_all, purgedAt: row.purged_at };
    if (row.type_name !== null) record.typeName = row.type_name;
    if (row.entity_key !== null) record.entityKey = row.entity_key;
    if (row.subgraph !== null) record.subgraph = row.subgraph;
    return record;
  });
}

/** Deletes purges older than `olderThanSeconds` (no router needs them); returns how many. */
export async function trimPurges(db: Queryable, olderThanSeconds: number): Promise<number> {
  seconds('olderThanSeconds', olderThanSeconds);
  const { rowCount } = await db.query('delete from cache_purges where purged_at < now() - make_interval(secs => $1::double precision)', [olderThanSeconds]);
  return rowCount ?? 0;
}
