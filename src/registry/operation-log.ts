// The operation registry read (tables `operations`, `operation_counts`): the queries behind `switchyard operations list`, `subgraph check`, the warm-up before a swap and the ops page. Written by operation-recorder.ts, pruned by operation-retention.ts.
import type { Queryable } from './database.js';

/** One operation as `operations list` and `subgraph check` see it: counts summed over the window. */
export interface OperationRecord {
  hash: string;
  normalised: string;
  operationName: string | null;
  operationType: string;
  clientName: string;
  clientVersion: string;
  firstSeen: Date;
  lastSeen: Date;
  /** Executions in the window (whole UTC days from the window's first day). */
  count: number;
}

export interface OperationQuery {
  /** Only operations last seen at or after this time. */
  since?: Date;
  /** Only this client name. */
  client?: string;
}

interface OperationRow {
  hash: string;
  normalised: string;
  operation_name: string | null;
  operation_type: string;
  client_name: string;
  client_version: string;
  first_seen: Date;
  last_seen: Date;
  count: string | null;
}

/** The operations seen in the window, most executed first. */
export async function listOperations(db: Queryable, query: OperationQuery = {}): Promise<OperationRecord[]> {
  const params: unknown[] = [];
  const where: string[] = [];
  let countSince = '';
  if (query.since !== undefined) {
    if (!(query.since instanceof Date) || Number.isNaN(query.since.getTime())) throw new RangeError('since must be a valid Date');
    params.push(query.since.toISOString());
    where.push(`o.last_seen >= $${params.length}::timestamptz`);
    countSince = `and c.day >= ($${params.length}::timestamptz at time zone 'UTC')::date`;
  }
  if (query.client !== undefined) {
    params.push(query.client);
    where.push(`o.client_name = $${params.length}`);
  }
  const { rows } = await db.query<OperationRow>(
    `select o.hash, o.normalised, o.operation_name, o.operation_type, o.client_name, o.client_version, o.first_seen, o.last_seen,
        (select coalesce(sum(c.count), 0) from operation_counts c
          where c.hash = o.hash and c.client_name = o.client_name and c.client_version = o.client_version ${countSince}) as count
       from operations o ${where.length > 0 ? `where ${where.join(' and ')}` : ''}
      order by count desc, o.last_seen desc, o.hash, o.client_name, o.client_version`,
    params,
  );
  return rows.map((row) => ({
    hash: row.hash,
    normalised: row.normalised,
    operationName: row.operation_name,
    operationType: row.operation_type,
    clientName: row.client_name,
    clientVersion: row.client_version,
    firstSeen: row.first_seen,
    lastSeen: row.last_seen,
    count: Number(row.count ?? 0),
  }));
}

/** One document of the registry, every client's executions summed: what a router warms before a swap. */
export interface UsedOperation {
  hash: string;
  normalised: string;
  operationName: string | null;
  /** Executions in the window, all clients and versions. */
  count: number;
}

/**
 * The documents executed most in the window (whole UTC days from `since`'s day), most first, at most
 * `limit`. One row per document, whatever the number of clients that sent it.
 */
export async function mostUsedOperations(db: Queryable, query: { since: Date; limit: number }): Promise<UsedOperation[]> {
  if (!(query.since instanceof Date) || Number.isNaN(query.since.getTime())) throw new RangeError('since must be a valid Date');
  if (!Number.isInteger(query.limit) || query.limit < 0) throw new RangeError('limit must be a whole number');
  if (query.limit === 0) return [];
  const { rows } = await db.query<{ hash: string; normalised: string; operation_name: string | null; count: string }>(
    `select c.hash, min(o.normalised) as normalised, min(o.operation_name) as operation_name, sum(c.count) as count
       from operation_counts c
       join operations o on o.hash = c.hash and o.client_name = c.client_name and o.client_version = c.client_version
      where c.day >= ($1::timestamptz at time zone 'UTC')::date
      group by c.hash
      order by count desc, c.hash
      limit $2`,
    [query.since.toISOString(), query.limit],
  );
  return rows.map((row) => ({ hash: row.hash, normalised: row.normalised, operationName: row.operation_name, count: Number(row.count) }));
}

/** One client's most executed operations, for the ops page. */
export interface ClientOperations {
  /** '' when the client did not say who it is. */
  clientName: string;
  /** Executions of every operation of this client in the window. */
  total: number;
  operations: { operationName: string | null; operationType: string; hash: string; count: number; lastSeen: Date }[];
}

/**
 * The clients with the most executions in the window (whole UTC days from `since`'s day), at most
 * `clients` of them, busiest first, each with its `perClient` most executed operations (all versions
 * of the client summed). One query: ranks are computed by the database.
 */
export async function topOperationsByClient(db: Queryable, query: { since: Date; clients: number; perClient: number }): Promise<ClientOperations[]> {
  if (!(query.since instanceof Date) || Number.isNaN(query.since.getTime())) throw new RangeError('since must be a valid Date');
  const { rows } = await db.query<{ client_name: string; client_total: string; hash: string; operation_name: string | null; operation_type: string; count: string; last_seen: Date }>(
    `with used as (
       select c.client_name, c.hash, sum(c.count) as count
         from operation_counts c
        where c.day >= ($1::timestamptz at time zone 'UTC')::date
        group by c.client_name, c.hash
     ), ranked as (
       select u.*, row_number() over (partition by u.client_name order by u.count desc, u.hash) as rank,
              sum(u.count) over (partition by u.client_name) as client_total
         from used u
     ), busiest as (
       select client_name from ranked group by client_name order by max(client_total) desc, client_name limit $2
     )
     select r.client_name, r.client_total, r.hash, r.count,
            (select o.operation_name from operations o where o.hash = r.hash and o.client_name = r.client_name order by o.last_seen desc limit 1) as operation_name,
            (select o.operation_type from operations o where o.hash = r.hash and o.client_name = r.client_name order by o.last_seen desc limit 1) as operation_type,
            (select max(o.last_seen) from operations o where o.hash = r.hash and o.client_name = r.client_name) as last_seen
       from ranked r join busiest b on b.client_name = r.client_name
      where r.rank <= $3
      order by r.client_total desc, r.client_name, r.rank`,
    [query.since.toISOString(), query.clients, query.perClient],
  );
  const byClient = new Map<string, ClientOperations>();
  for (const row of rows) {
    let client = byClient.get(row.client_name);
    if (!client) byClient.set(row.client_name, (client = { clientName: row.client_name, total: Number(row.client_total), operations: [] }));
    client.operations.push({ operationName: row.operation_name, operationType: row.operation_type, hash: row.hash, count: Number(row.count), lastSeen: row.last_seen });
  }
  return [...byClient.values()];
}
