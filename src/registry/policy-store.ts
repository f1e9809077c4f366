// Ops policies per operation (table `policies`): stored limits, and the in-memory book routers read on the request path.
import type { Queryable } from './database.js';

/** Limits of one operation; `undefined` means "not set here" (the `*` row, then the router default, applies). */
export interface PolicyLimits {
  costLimit?: number;
  maxConcurrency?: number;
  queueLength?: number;
  maxWaitMs?: number;
  deadlineMs?: number;
  /** The budget of the operation's deferred parts (`@defer`), in ms. */
  deferDeadlineMs?: number;
  /** Cost points a client may spend per second (rate limit refill). */
  costRatePerSecond?: number;
  /** Cost points a client may spend at once (rate limit bucket). Default: 10 × the rate. */
  costBurst?: number;
  /** Open subscriptions of the operation on one router (docs/subscriptions.md). Default: only the router's ceiling. */
  maxSubscriptions?: number;
  /** Open subscriptions of the operation per authenticated caller on one router. Default: none. */
  maxSubscriptionsPerPrincipal?: number;
}

export interface PolicyRecord extends PolicyLimits {
  operationName: string;
  updatedAt: Date;
}

export const DEFAULT_POLICY = '*';

/**
 * The cost limit shipped for `*` (secure by default): migration 007 stores it in the registry,
 * where ops change or clear it (`policy set '*' --cost-limit N|none`); a router serving a supergraph
 * file has no registry and applies it as its built-in default. Keep both in step.
 */
export const DEFAULT_COST_LIMIT = 50_000;

const COLUMNS = {
  costLimit: 'cost_limit',
  maxConcurrency: 'max_concurrency',
  queueLength: 'queue_length',
  maxWaitMs: 'max_wait_ms',
  deadlineMs: 'deadline_ms',
  deferDeadlineMs: 'defer_deadline_ms',
  costRatePerSecond: 'cost_rate_per_second',
  costBurst: 'cost_burst',
  maxSubscriptions: 'max_subscriptions',
  maxSubscriptionsPerPrincipal: 'max_subscriptions_per_principal',
} as const satisfies Record<keyof PolicyLimits, string>;

const OPERATION = /^(\*|[_A-Za-z][_0-9A-Za-z]{0,127})$/;

/** The limits a policy may set, in the order they are shown. */
export const POLICY_LIMITS = Object.keys(COLUMNS) as (keyof PolicyLimits)[];

/** Why `name` cannot have a policy, or undefined: the rule `setPolicy` applies (and `config apply`, item by item). */
export function operationNameProblem(name: unknown): string | undefined {
  return typeof name === 'string' && OPERATION.test(name) ? undefined : `invalid operation name "${String(name)}": use a GraphQL name or * for the default`;
}

/** Why `value` cannot be the limit `key`, or undefined (`null` clears a limit, so it passes). The rule `setPolicy` applies. */
export function policyLimitProblem(key: string, value: unknown): string | undefined {
  if (!(key in COLUMNS)) return `unknown limit ${key}`;
  const min = key === 'queueLength' ? 0 : 1;
  if (value !== null && value !== undefined && (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > 2_147_483_647)) {
    return `${key} must be an integer >= ${min} (got ${typeof value === 'string' ? JSON.stringify(value) : String(value)})`;
  }
  return undefined;
}

export class InvalidPolicyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidPolicyError';
  }
}

interface PolicyRow {
  operation_name: string;
  cost_limit: number | null;
  max_concurrency: number | null;
  queue_length: number | null;
  max_wait_ms: number | null;
  deadline_ms: number | null;
  defer_deadline_ms: number | null;
  cost_rate_per_second: number | null;
  cost_burst: number | null;
  max_subscriptions: number | null;
  max_subscriptions_per_principal: number | null;
  updated_at: Date;
}

function toRecord(row: PolicyRow): PolicyRecord {
  const record: PolicyRecord = { operationName: row.operation_name, updatedAt: row.updated_at };
  for (const [key, column] of Object.entries(COLUMNS) as [keyof PolicyLimits, keyof PolicyRow][]) {
    const value = row[column];
    if (value !== null && value !== undefined) record[key] = Number(value);
  }
  return record;
}

export async function listPolicies(db: Queryable): Promise<PolicyRecord[]> {
  const { rows } = await db.query<PolicyRow>('select * from policies order by operation_name');
  return rows.map(toRecord);
}

/**
 * Sets some limits of one operation, leaving the others as they are. A `null` clears a limit (the
 * default applies again). Validates before writing; returns the stored row.
 */
export async function setPolicy(db: Queryable, operationName: string, limits: { [K in keyof PolicyLimits]?: number | null }): Promise<PolicyRecord> {
  const nameProblem = operationNameProblem(operationName);
  if (nameProblem) throw new InvalidPolicyError(nameProblem);
  const entries = (Object.entries(limits) as [keyof PolicyLimits, number | null | undefined][]).filter(([, v]) => v !== undefined);
  if (entries.length === 0) throw new InvalidPolicyError('nothing to set: give at least one limit');
  for (const [key, value] of entries) {
    const problem = policyLimitProblem(key, value);
    if (problem) throw new InvalidPolicyError(problem);
  }
  const columns = entries.map(([key]) => COLUMNS[key]);
  const values = entries.map(([, value]) => value);
  const { rows } = await db.query<PolicyRow>(
    `insert into policies (operation_name, ${columns.join(', ')}) values ($1, ${columns.map((_, i) => `$${i + 2}`).join(', ')})
     on conflict (operation_name) do update set ${columns.map((c) => `${c} = excluded.${c}`).join(', ')}, updated_at = now()
     returning *`,
    [operationName, ...values],
  );
  return toRecord(rows[0]);
}

export async function removePolicy(db: Queryable, operationName: string): Promise<boolean> {
  const { rowCount } = await db.query('delete from policies where operation_name = $1', [operationName]);
  return (rowCount ?? 0) > 0;
}

/**
 * The policies a router enforces, held in memory and replaced whole on every change (the request
 * path never queries the database). `resolve(name)` merges the operation's row over the `*` row
 * over the built-in defaults; results are memoised per operation until the next replace.
 */
export class PolicyBook {
  #byOperation = new Map<string, PolicyLimits>();
  #resolved = new Map<string, PolicyLimits>();
  readonly #defaults: PolicyLimits;

  constructor(defaults: PolicyLimits = {}) {
    this.#defaults = defaults;
  }

  replace(records: readonly PolicyRecord[]): void {
    this.#byOperation = new Map(records.map(({ operationName, updatedAt: _updatedAt, ...limits }) => [operationName, limits]));
    this.#resolved = new Map();
  }

  /** Whether the operation has a policy row of its own (otherwise it shares the `*` queue). */
  hasOwn(operationName: string | null | undefined): boolean {
    return !!operationName && operationName !== DEFAULT_POLICY && this.#byOperation.has(operationName);
  }

  /** Limits in force for an operation name (unnamed operations use `*`). */
  resolve(operationName: string | null | undefined): PolicyLimits {
    const key = operationName || DEFAULT_POLICY;
    let limits = this.#resolved.get(key);
    if (!limits) {
      limits = { ...this.#defaults };
      for (const layer of [this.#byOperation.get(DEFAULT_POLICY), key === DEFAULT_POLICY ? undefined : this.#byOperation.get(key)]) {
        if (!layer) continue;
        for (const [k, v] of Object.entries(layer) as [keyof PolicyLimits, number | undefined][]) if (v !== undefined) limits[k] = v;
      }
      // Bounded: names come from clients; beyond this many distinct ones, recompute instead of caching.
      if (this.#resolved.size < 10_000) this.#resolved.set(key, limits);
    }
    return limits;
  }
}
