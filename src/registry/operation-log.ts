// The operation registry (tables `operations`, `operation_counts`): a recorder that batches what routers execute off the request path, and the queries behind `switchyard operations list` and `subgraph check`.
import type { Database, Queryable } from './database.js';

/** One execution, as the router saw it. The document is already normalised and hashed (the plugin does it once per document). */
export interface OperationSighting {
  /** SHA-256 (hex) of `normalised`. */
  hash: string;
  /** graphql-js `print(parse(document))`. */
  normalised: string;
  operationName: string | null;
  operationType: string;
  /** '' when the client did not say who it is. */
  clientName: string;
  clientVersion: string;
  /** When it ran; default now. */
  at?: Date;
}

export interface OperationRecorderOptions {
  /** The metadata store. The recorder only runs INSERTs on it and never closes it. */
  db: Database;
  /** Longest time, in ms, a sighting waits in memory before it is written. Default 1,000. */
  flushIntervalMs?: number;
  /**
   * Distinct (document, client, version, day) entries held in memory between writes. A sighting of an
   * entry already held only bumps its counter, whatever the limit; a new entry past it is dropped and
   * counted (`stats().dropped`). Default 10,000.
   */
  maxPending?: number;
  /** How long, in ms, `close` waits for the last write. Default 5,000. */
  closeTimeoutMs?: number;
  /** Told about failed writes (the entries stay in memory and are retried). Default: none. */
  onError?: (error: Error) => void;
}

export interface OperationRecorderStats {
  /** Sightings accepted (metric `switchyard_operations_recorded_total`). */
  recorded: number;
  /** Entries in memory, not yet written. */
  pending: number;
  /** Sightings refused because `maxPending` distinct entries were already waiting. */
  dropped: number;
}

export interface OperationRecorder {
  /** Synchronous and O(1): adds one to the sighting's counter in memory. Never throws, never waits for the database. */
  record(sighting: OperationSighting): void;
  /** Resolves when every sighting recorded before the call is in the database; rejects if the write failed (the entries stay pending). */
  flush(): Promise<void>;
  /** Stops the timer and writes what is pending (within `closeTimeoutMs`). */
  close(): Promise<void>;
  stats(): OperationRecorderStats;
}

interface Pending {
  sighting: OperationSighting;
  day: string;
  count: number;
  firstSeen: number;
  lastSeen: number;
}

/** Upserts the batch's operations: a new one is inserted with its text, a known one only moves its last-seen time. */
const UPSERT_OPERATIONS = `insert into operations as o (hash, normalised, operation_name, operation_type, client_name, client_version, first_seen, last_seen)
  select u.hash, u.normalised, u.operation_name, u.operation_type, u.client_name, u.client_version, u.first_seen, u.last_seen
  from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::timestamptz[])
    as u(hash, normalised, operation_name, operation_type, client_name, client_version, first_seen, last_seen)
  on conflict (hash, client_name, client_version) do update
    set last_seen = greatest(o.last_seen, excluded.last_seen), first_seen = least(o.first_seen, excluded.first_seen)`;

const UPSERT_COUNTS = `insert into operation_counts as c (hash, client_name, client_version, day, count)
  select u.hash, u.client_name, u.client_version, u.day, u.count
  from unnest($1::text[], $2::text[], $3::text[], $4::date[], $5::bigint[]) as u(hash, client_name, client_version, day, count)
  on conflict (hash, client_name, client_version, day) do update set count = c.count + excluded.count`;

/** Puts entries of a failed write back, adding to what arrived meanwhile. */
function restore(pending: Map<string, Pending>, batch: Map<string, Pending>): void {
  for (const [key, entry] of batch) {
    const current = pending.get(key);
    if (!current) pending.set(key, entry);
    else {
      current.count += entry.count;
      current.firstSeen = Math.min(current.firstSeen, entry.firstSeen);
      current.lastSeen = Math.max(current.lastSeen, entry.lastSeen);
    }
  }
}

/** Upserts one batch: its operations (first and last seen) and its counts per day, in one transaction. */
async function write(db: Database, batch: Map<string, Pending>): Promise<void> {
  // One operations row per (hash, client, version), even when the batch spans two days.
  const operations = new Map<string, Pending>();
  for (const entry of batch.values()) {
    const { hash, clientName, clientVersion } = entry.sighting;
    const key = `${hash}\n${clientName}\n${clientVersion}`;
    const seen = operations.get(key);
    if (!seen) operations.set(key, { ...entry });
    else {
      seen.firstSeen = Math.min(seen.firstSeen, entry.firstSeen);
      seen.lastSeen = Math.max(seen.lastSeen, entry.lastSeen);
    }
  }
  const ops = [...operations.values()];
  const counts = [...batch.values()];
  await db.transaction(async (tx) => {
    await tx.query(UPSERT_OPERATIONS, [
      ops.map((e) => e.sighting.hash),
      ops.map((e) => e.sighting.normalised),
      ops.map((e) => e.sighting.operationName),
      ops.map((e) => e.sighting.operationType),
      ops.map((e) => e.sighting.clientName),
      ops.map((e) => e.sighting.clientVersion),
      ops.map((e) => new Date(e.firstSeen).toISOString()),
      ops.map((e) => new Date(e.lastSeen).toISOString()),
    ]);
    await tx.query(UPSERT_COUNTS, [
      counts.map((e) => e.sighting.hash),
      counts.map((e) => e.sighting.clientName),
      counts.map((e) => e.sighting.clientVersion),
      counts.map((e) => e.day),
      counts.map((e) => String(e.count)),
    ]);
  });
}

/**
 * Keeps sightings as counters in memory and writes them in one transaction per interval:
 * 1. `record` adds one to the entry of (hash, client, version, UTC day), creating it if new: no I/O.
 * 2. Every `flushIntervalMs` (and on `flush`/`close`) the entries are taken out of the map and written
 *    with two statements, whatever their number: operations upserted (one row per distinct document and
 *    client), counts added to the day's row. A request never costs a query of its own.
 * 3. A failed write puts the entries back (their counts added to whatever arrived meanwhile), to be
 *    retried on the next interval: nothing accepted is lost while the process lives.
 * 4. Writes run one at a time; `close` flushes last. Past `closeTimeoutMs` it gives up and reports
 *    what was not written (counts, not documents: the next sighting re-inserts a document).
 * Why not the audit writer's ring buffer and spill files: an operation is counted, not kept one row per
 * request, so the in-memory map is already bounded by distinct documents, not by traffic.
 */
export function createOperationRecorder(options: OperationRecorderOptions): OperationRecorder {
  const { db } = options;
  const flushIntervalMs = options.flushIntervalMs ?? 1_000;
  const maxPending = options.maxPending ?? 10_000;
  const closeTimeoutMs = options.closeTimeoutMs ?? 5_000;
  let pending = new Map<string, Pending>();
  let recorded = 0;
  let dropped = 0;
  let writing: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  function report(error: unknown): void {
    try {
      options.onError?.(error instanceof Error ? error : new Error(String(error)));
    } catch {
      // A reporter that throws must not break recording.
    }
  }

  function arm(): void {
    if (timer || closed) return;
    timer = setTimeout(function flushOperations() {
      timer = undefined;
      flush().catch(() => {}); // reported in write
    }, flushIntervalMs);
    timer.unref();
  }

  function record(sighting: OperationSighting): void {
    try {
      const at = sighting.at?.getTime() ?? Date.now();
      const day = new Date(at).toISOString().slice(0, 10);
      const key = `${sighting.hash}\n${sighting.clientName}\n${sighting.clientVersion}\n${day}`;
      const entry = pending.get(key);
      if (entry) {
        entry.count += 1;
        if (at > entry.lastSeen) entry.lastSeen = at;
        if (at < entry.firstSeen) entry.firstSeen = at;
      } else {
        if (pending.size >= maxPending) {
          dropped += 1;
          return;
        }
        pending.set(key, { sighting, day, count: 1, firstSeen: at, lastSeen: at });
      }
      recorded += 1;
      arm();
    } catch (error) {
      dropped += 1;
      report(error);
    }
  }

  function flush(): Promise<void> {
    const run = writing.then(async function writePending() {
      if (pending.size === 0) return;
      const batch = pending;
      pending = new Map();
      try {
        await write(db, batch);
      } catch (error) {
        restore(pending, batch);
        arm();
        report(error);
        throw error;
      }
    });
    writing = run.catch(() => {});
    return run;
  }

  async function close(): Promise<void> {
    if (closed) return writing;
    closed = true;
    clearTimeout(timer);
    timer = undefined;
    let deadline: NodeJS.Timeout | undefined;
    const expired = new Promise<'expired'>((resolve) => {
      deadline = setTimeout(resolve, closeTimeoutMs, 'expired');
    });
    try {
      const outcome = await Promise.race([flush().then(() => 'written' as const, () => 'failed' as const), expired]);
      if (outcome !== 'written' && pending.size > 0) report(new Error(`operation registry: ${pending.size} operation counts could not be written at shutdown`));
    } finally {
      clearTimeout(deadline);
    }
  }

  return { record, flush, close, stats: () => ({ recorded, pending: pending.size, dropped }) };
}

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
