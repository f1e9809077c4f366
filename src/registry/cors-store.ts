// The CORS allow-list (table `cors_origins`, decision 037): one rule per origin or pattern, its checks, and its reads and writes.
import { corsOriginProblem } from '../config/cors-origins.js';
import type { Queryable } from './database.js';

/** Methods a rule may allow: what an HTTP API is called with (OPTIONS is the preflight itself, never listed). */
export const CORS_METHODS: readonly string[] = ['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT'];
/** Methods of a rule that names none: what GraphQL over HTTP uses. */
export const DEFAULT_CORS_METHODS: readonly string[] = ['GET', 'POST'];
/** The longest a browser may keep a preflight's answer, in seconds: a day (Firefox's own cap; Chromium caps at 2 hours). */
export const MAX_CORS_MAX_AGE_SECONDS = 86_400;
/** Most request headers one rule lists: far above any client's, low enough that a preflight's answer stays small. */
export const MAX_CORS_HEADERS = 64;
/** The longest header name a rule may list, in characters. */
export const MAX_CORS_HEADER_LENGTH = 128;

/** One rule as `cors set` writes it, whole: what it leaves out goes back to its default. */
export interface CorsRuleInput {
  origin: string;
  /** Default {@link DEFAULT_CORS_METHODS}. Any case; stored uppercase, sorted. */
  methods?: readonly string[] | null;
  /** Default: the headers each preflight asks for. Any case; stored lowercase, sorted. */
  headers?: readonly string[] | null;
  /** Default false. */
  credentials?: boolean | null;
  /** Default: none sent (the browser's own, 5 s). */
  maxAgeSeconds?: number | null;
}

/** One stored rule; `methods`, `headers` and `maxAgeSeconds` are absent when the rule leaves them to their defaults. */
export interface CorsRuleRecord {
  origin: string;
  methods?: string[];
  headers?: string[];
  credentials: boolean;
  maxAgeSeconds?: number;
  updatedAt: Date;
}

export class InvalidCorsRuleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidCorsRuleError';
  }
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const shown = (value: unknown) => JSON.stringify(value) ?? String(value);

function listProblem(what: string, value: unknown, max: number, item: (entry: string) => string | undefined): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (!Array.isArray(value)) return `${what} must be a list (got ${shown(value)})`;
  if (value.length === 0) return `give at least one of the ${what}, or leave them out for the default`;
  if (value.length > max) return `at most ${max} ${what} (got ${value.length})`;
  for (const entry of value) {
    const problem = typeof entry === 'string' ? item(entry) : `${what} are text (got ${shown(entry)})`;
    if (problem) return problem;
  }
  return undefined;
}

/**
 * Why a rule's fields cannot be stored, one message per field, or undefined: the checks `setCorsRule`
 * applies (and `config apply`, which lists every problem of a file at once). `rule` is the rule whole:
 * an origin that allows anything with credentials.
 */
export const corsRuleProblems = {
  origin: (value: unknown) => corsOriginProblem(value),
  methods: (value: unknown) =>
    listProblem('methods', value, CORS_METHODS.length, (method) => (CORS_METHODS.includes(method.toUpperCase()) ? undefined : `unknown method ${shown(method)}: use ${CORS_METHODS.join(', ')}`)),
  headers: (value: unknown) =>
    listProblem('headers', value, MAX_CORS_HEADERS, (header) => {
      if (header.length > MAX_CORS_HEADER_LENGTH) return `a header name has at most ${MAX_CORS_HEADER_LENGTH} characters (got ${header.length})`;
      return TOKEN.test(header) ? undefined : `invalid header name ${shown(header)}: letters, digits and ! # $ % & ' * + . ^ _ \` | ~ -`;
    }),
  credentials: (value: unknown) => (value === null || value === undefined || typeof value === 'boolean' ? undefined : `credentials must be true or false (got ${shown(value)})`),
  maxAgeSeconds: (value: unknown) =>
    value === null || value === undefined || (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_CORS_MAX_AGE_SECONDS)
      ? undefined
      : `max age must be a whole number of seconds from 0 to ${MAX_CORS_MAX_AGE_SECONDS} (got ${shown(value)})`,
  /** What no field says alone: `*` with credentials would let every site act with the user's session. */
  rule: (origin: unknown, credentials: unknown) =>
    origin === '*' && credentials === true ? 'credentials are never allowed for * (any origin): name the origins that may send cookies, e.g. https://app.example.com or https://*.example.com' : undefined,
};

/** Every problem of a rule, field by field, then the rule's own. */
export function corsRuleInputProblems(input: CorsRuleInput): string[] {
  const { origin, methods, headers, credentials, maxAgeSeconds } = input;
  const problems = [corsRuleProblems.origin(origin), corsRuleProblems.methods(methods), corsRuleProblems.headers(headers), corsRuleProblems.credentials(credentials), corsRuleProblems.maxAgeSeconds(maxAgeSeconds)];
  return [...problems, corsRuleProblems.rule(origin, credentials)].filter((problem): problem is string => problem !== undefined);
}

/** The one form lists are kept in: methods uppercase, headers lowercase, each once, sorted; null when absent. */
export function normalizedList(list: readonly string[] | null | undefined, kind: 'methods' | 'headers'): string[] | null {
  if (list === null || list === undefined) return null;
  const cased = list.map((entry) => (kind === 'methods' ? entry.toUpperCase() : entry.toLowerCase()));
  return [...new Set(cased)].sort();
}

interface CorsRow {
  origin: string;
  methods: string[] | null;
  headers: string[] | null;
  credentials: boolean;
  max_age_seconds: number | null;
  updated_at: Date;
}

function toRecord(row: CorsRow): CorsRuleRecord {
  const record: CorsRuleRecord = { origin: row.origin, credentials: row.credentials, updatedAt: row.updated_at };
  if (row.methods !== null) record.methods = row.methods;
  if (row.headers !== null) record.headers = row.headers;
  if (row.max_age_seconds !== null) record.maxAgeSeconds = Number(row.max_age_seconds);
  return record;
}

/** Creates or replaces the rule of one origin, whole. Checks before writing (InvalidCorsRuleError, nothing written); returns the stored rule. */
export async function setCorsRule(db: Queryable, input: CorsRuleInput): Promise<CorsRuleRecord> {
  const [problem] = corsRuleInputProblems(input);
  if (problem) throw new InvalidCorsRuleError(problem);
  const { rows } = await db.query<CorsRow>(
    `insert into cors_origins (origin, methods, headers, credentials, max_age_seconds) values ($1, $2, $3, $4, $5)
     on conflict (origin) do update set methods = excluded.methods, headers = excluded.headers, credentials = excluded.credentials,
       max_age_seconds = excluded.max_age_seconds, updated_at = now()
     returning origin, methods, headers, credentials, max_age_seconds, updated_at`,
    [input.origin, normalizedList(input.methods, 'methods'), normalizedList(input.headers, 'headers'), input.credentials ?? false, input.maxAgeSeconds ?? null],
  );
  return toRecord(rows[0]);
}

/** Every rule, in code-unit order of the origin. */
export async function listCorsRules(db: Queryable): Promise<CorsRuleRecord[]> {
  const { rows } = await db.query<CorsRow>('select origin, methods, headers, credentials, max_age_seconds, updated_at from cors_origins');
  return rows.map(toRecord).sort((a, b) => (a.origin < b.origin ? -1 : a.origin > b.origin ? 1 : 0));
}

/** Removes the rule of one origin; true if it existed. Throws InvalidCorsRuleError for text that could never be one. */
export async function removeCorsRule(db: Queryable, origin: string): Promise<boolean> {
  const problem = corsRuleProblems.origin(origin);
  if (problem) throw new InvalidCorsRuleError(problem);
  const { rowCount } = await db.query('delete from cors_origins where origin = $1', [origin]);
  return (rowCount ?? 0) > 0;
}
