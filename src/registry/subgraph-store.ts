// The subgraph registry: list, publish (only what still composes) and remove subgraphs.
import type { Database, Queryable } from './database.js';
import { parseRoute, readRoute, type RouteMetadata } from './route.js';

export interface SubgraphRecord {
  name: string;
  url: string;
  sdl: string;
  route: RouteMetadata;
  updatedAt: Date;
}

export interface SubgraphInput {
  name: string;
  url: string;
  sdl: string;
  route?: RouteMetadata;
}

/** What publish and remove ask before they write: does the resulting set still compose? */
export type CompositionCheck = (subgraphs: { name: string; url: string; sdl: string }[]) =>
  | { ok: true }
  | { ok: false; errors: { code: string; message: string }[] };

/** A publish or remove refused because the resulting set would not compose; nothing was stored. */
export class CompositionRejectedError extends Error {
  readonly errors: { code: string; message: string }[];
  constructor(action: string, errors: { code: string; message: string }[]) {
    super(`${action} refused: the subgraphs would not compose (${errors.length} error${errors.length === 1 ? '' : 's'})`);
    this.name = 'CompositionRejectedError';
    this.errors = errors;
  }
}

export class InvalidSubgraphError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidSubgraphError';
  }
}

/** Serialises registry writers across processes and routers, so two publishes cannot each compose against a stale set. */
const REGISTRY_WRITE_LOCK = 7_428_113_902;
const NAME = /^[A-Za-z][A-Za-z0-9_-]{0,62}$/;

interface SubgraphRow {
  name: string;
  url: string;
  sdl: string;
  route: unknown;
  updated_at: Date;
}

function toRecord(row: SubgraphRow): SubgraphRecord {
  return { name: row.name, url: row.url, sdl: row.sdl, route: readRoute(row.route), updatedAt: row.updated_at };
}

export async function listSubgraphs(db: Queryable): Promise<SubgraphRecord[]> {
  const { rows } = await db.query<SubgraphRow>('select name, url, sdl, route, updated_at from subgraphs order by name');
  return rows.map(toRecord);
}

/** Why `name` cannot name a subgraph, or undefined: the rule publish applies (and `config apply`). */
export function subgraphNameProblem(name: unknown): string | undefined {
  return typeof name === 'string' && NAME.test(name) ? undefined : `invalid subgraph name "${String(name)}": use letters, digits, - and _, starting with a letter`;
}

/** Why the router cannot reach subgraph `name` at `url`, or undefined: the rule publish applies (and `config apply`). */
export function subgraphUrlProblem(name: string, url: unknown): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(String(url));
  } catch {
    return `invalid URL for subgraph "${name}": ${String(url)}`;
  }
  return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? undefined : `subgraph URL must be http or https: ${String(url)}`;
}

function validateInput(input: SubgraphInput): void {
  const problem = subgraphNameProblem(input.name) ?? subgraphUrlProblem(input.name, input.url);
  if (problem) throw new InvalidSubgraphError(problem);
  if (input.sdl.trim() === '') throw new InvalidSubgraphError(`empty schema for subgraph "${input.name}"`);
  if (input.route !== undefined) {
    const parsed = parseRoute(input.route);
    if (!parsed.ok) throw new InvalidSubgraphError(`invalid route metadata: ${parsed.problems.join('; ')}`);
  }
}

/**
 * Publishes (inserts or replaces) one subgraph. In one transaction under the registry lock: read the
 * current set, replace this subgraph in it, ask `check` whether it composes, and write only if it
 * does. Returns the record as stored; throws CompositionRejectedError with the composer's errors.
 */
export async function publishSubgraph(db: Database, input: SubgraphInput, check: CompositionCheck): Promise<{ record: SubgraphRecord; changed: boolean }> {
  validateInput(input);
  return db.transaction(async (tx) => {
    await tx.query('select pg_advisory_xact_lock($1)', [REGISTRY_WRITE_LOCK]);
    const current = await listSubgraphs(tx);
    const previous = current.find((s) => s.name === input.name);
    const route = input.route ?? previous?.route ?? {};
    if (previous && previous.url === input.url && previous.sdl === input.sdl && JSON.stringify(previous.route) === JSON.stringify(route)) {
      return { record: previous, changed: false };
    }
    const next = [...current.filter((s) => s.name !== input.name), { name: input.name, url: input.url, sdl: input.sdl }];
    const outcome = check(next);
    if (!outcome.ok) throw new CompositionRejectedError(`publish of "${input.name}"`, outcome.errors);
    const { rows } = await tx.query<SubgraphRow>(
      `insert into subgraphs (name, url, sdl, route) values ($1, $2, $3, $4)
       on conflict (name) do update set url = excluded.url, sdl = excluded.sdl, route = excluded.route, updated_at = now()
       returning name, url, sdl, route, updated_at`,
      [input.name, input.url, input.sdl, JSON.stringify(route)],
    );
    return { record: toRecord(rows[0]), changed: true };
  });
}

/** Takes the registry write lock until the transaction `tx` ends, as publish and remove do (for `config apply`). */
export async function lockRegistryWrites(tx: Queryable): Promise<void> {
  await tx.query('select pg_advisory_xact_lock($1)', [REGISTRY_WRITE_LOCK]);
}

/**
 * Points a published subgraph at another URL and replaces its route metadata, keeping its SDL: what
 * `config apply` changes. No composition check: the SDL, the only input composition judges, is
 * unchanged (the URL only fills `join__graph`). Validates like publish; false if `name` is not published.
 */
export async function updateSubgraphRoute(db: Queryable, input: { name: string; url: string; route: RouteMetadata }): Promise<boolean> {
  const problem = subgraphNameProblem(input.name) ?? subgraphUrlProblem(input.name, input.url);
  if (problem) throw new InvalidSubgraphError(problem);
  const parsed = parseRoute(input.route);
  if (!parsed.ok) throw new InvalidSubgraphError(`invalid route metadata: ${parsed.problems.join('; ')}`);
  const { rowCount } = await db.query('update subgraphs set url = $2, route = $3, updated_at = now() where name = $1', [input.name, input.url, JSON.stringify(parsed.route)]);
  return (rowCount ?? 0) > 0;
}

/** Removes a subgraph if the remaining set still composes (an empty registry is allowed). Returns false if it was not there. */
export async function removeSubgraph(db: Database, name: string, check: CompositionCheck): Promise<boolean> {
  return db.transaction(async (tx) => {
    await tx.query('select pg_advisory_xact_lock($1)', [REGISTRY_WRITE_LOCK]);
    const current = await listSubgraphs(tx);
    if (!current.some((s) => s.name === name)) return false;
    const remaining = current.filter((s) => s.name !== name);
    if (remaining.length > 0) {
      const outcome = check(remaining);
      if (!outcome.ok) throw new CompositionRejectedError(`removal of "${name}"`, outcome.errors);
    }
    await tx.query('delete from subgraphs where name = $1', [name]);
    return true;
  });
}
