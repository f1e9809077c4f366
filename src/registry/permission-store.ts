// Authorization rules (table `permissions`): who may read a coordinate, run an operation or introspect; and the in-memory book routers read.
import type { Queryable } from './database.js';

export interface PermissionRule {
  principal: string;
  coordinate: string;
  createdAt: Date;
}

const PRINCIPAL = /^((sub|scope|client|role):\S{1,200}|authenticated|anonymous)$/;
const COORDINATE = /^([_A-Za-z][_0-9A-Za-z]*\.[_A-Za-z][_0-9A-Za-z]*|operation:[_A-Za-z][_0-9A-Za-z]*|introspection)$/;

/** The coordinate of the rule that lets its principals introspect the schema in production (decision 036). */
export const INTROSPECTION = 'introspection';

/** `__schema`, `__type`, `Query.__schema`...: introspection fields, which no field rule guards (the guards skip `__` fields). */
const INTROSPECTION_FIELD = /^([_A-Za-z][_0-9A-Za-z]*\.)?__(schema|type)$/i;

export class InvalidPermissionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidPermissionError';
  }
}

/** Why `principal` cannot be given a permission, or undefined: the rule `grant` and `revoke` apply (and `config apply`). */
export function principalProblem(principal: unknown): string | undefined {
  return typeof principal === 'string' && PRINCIPAL.test(principal) ? undefined : `invalid principal "${String(principal)}": use sub:ID, scope:NAME, client:ID, role:NAME, authenticated or anonymous`;
}

/**
 * Why `coordinate` cannot be protected by a permission, or undefined. Near misses of `introspection`
 * are named as such: another spelling (`Introspection`, `introspection:`) or an introspection field
 * (`Query.__schema`, `__type`) would be a rule that allows nothing, its author believing otherwise.
 */
export function permissionCoordinateProblem(coordinate: unknown): string | undefined {
  if (typeof coordinate !== 'string') return `invalid coordinate "${String(coordinate)}": use Type.field, operation:Name or introspection`;
  if (INTROSPECTION_FIELD.test(coordinate)) return `invalid coordinate "${coordinate}": introspection fields take no rule of their own; use introspection (who may introspect in production)`;
  if (COORDINATE.test(coordinate)) return undefined;
  if (/^introspect/.test(coordinate.toLowerCase().replace(/[^a-z]/g, ''))) return `invalid coordinate "${coordinate}": did you mean introspection (lower case, nothing around it)?`;
  return `invalid coordinate "${coordinate}": use Type.field, operation:Name or introspection`;
}

/**
 * A grant must name a coordinate a rule can guard. A revoke takes any coordinate of the table's shape
 * as well: a row granted before near misses were refused (`Query.__schema`) can still be removed, by
 * `permission revoke` or by `config apply --prune`.
 */
function validate(principal: string, coordinate: string, action: 'grant' | 'revoke'): void {
  const removable = action === 'revoke' && COORDINATE.test(coordinate);
  const problem = principalProblem(principal) ?? (removable ? undefined : permissionCoordinateProblem(coordinate));
  if (problem) throw new InvalidPermissionError(problem);
}

export async function listPermissions(db: Queryable): Promise<PermissionRule[]> {
  const { rows } = await db.query<{ principal: string; coordinate: string; created_at: Date }>('select principal, coordinate, created_at from permissions order by coordinate, principal');
  return rows.map((r) => ({ principal: r.principal, coordinate: r.coordinate, createdAt: r.created_at }));
}

/** Adds a rule; true if it was new. */
export async function grantPermission(db: Queryable, principal: string, coordinate: string): Promise<boolean> {
  validate(principal, coordinate, 'grant');
  const { rowCount } = await db.query('insert into permissions (principal, coordinate) values ($1, $2) on conflict do nothing', [principal, coordinate]);
  return (rowCount ?? 0) > 0;
}

/** Removes a rule; true if it existed. */
export async function revokePermission(db: Queryable, principal: string, coordinate: string): Promise<boolean> {
  validate(principal, coordinate, 'revoke');
  const { rowCount } = await db.query('delete from permissions where principal = $1 and coordinate = $2', [principal, coordinate]);
  return (rowCount ?? 0) > 0;
}

/**
 * The rules in memory, replaced whole on every change; `version` moves with each replace so
 * decisions memoised per document can tell they are stale.
 */
export class PermissionBook {
  #rules = new Map<string, ReadonlySet<string>>();
  #named = new Set<string>();
  #version = 0;
  readonly #listeners = new Set<() => void>();

  /** Told after every replace (open subscriptions check their decision again: a live revoke ends them). */
  onReplace(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  get version(): number {
    return this.#version;
  }

  replace(rules: readonly Pick<PermissionRule, 'principal' | 'coordinate'>[]): void {
    const next = new Map<string, Set<string>>();
    const named = new Set<string>();
    for (const { principal, coordinate } of rules) {
      let set = next.get(coordinate);
      if (!set) next.set(coordinate, (set = new Set()));
      set.add(principal);
      named.add(principal);
    }
    this.#rules = next;
    this.#named = named;
    this.#version++;
    for (const listener of this.#listeners) listener();
  }

  /** Whether any rule names this principal: one no rule names cannot change a decision. */
  names(principal: string): boolean {
    return this.#named.has(principal);
  }

  /** The principals allowed on a coordinate, or undefined when no rule protects it. */
  principalsFor(coordinate: string): ReadonlySet<string> | undefined {
    return this.#rules.get(coordinate);
  }
}
