// The operation recorder: counts what routers execute in memory, off the request path, and writes it to the operation registry (tables `operations`, `operation_counts`) in batches, within the discovery limits.
import { configDefaults } from '../config/schema.js';
import { waitWithin } from '../errors/wait-within.js';
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

/** Why executions were served but not recorded: past a discovery limit, or past `maxPending` in this router's memory. */
export type UnrecordedReason = 'discovery_limit' | 'backlog';

export interface OperationRecorderOptions {
  /** The metadata store. The recorder only writes to it and never closes it. */
  db: Database;
  /**
   * New documents (a new hash, client name and version) recorded per client name per UTC hour of their
   * first sighting; those beyond are served but not recorded, their executions counted in
   * `stats().unrecorded`. Default `configDefaults.operationDiscoveryLimitPerHour`.
   */
  discoveryLimitPerHour?: number;
  /** New documents recorded per UTC hour, all clients together (client names from headers are the client's to make up). Default `configDefaults.operationDiscoveryTotalLimitPerHour`. */
  discoveryTotalLimitPerHour?: number;
  /** Told about executions served but not recorded, by client name ('' unknown): once per client and write past a discovery limit, once per sighting past `maxPending`. */
  onUnrecorded?: (clientName: string, executions: number, reason: UnrecordedReason) => void;
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
  /** Executions written to the registry (metric `switchyard_operations_recorded_total`). */
  recorded: number;
  /** Entries in memory, not yet written. */
  pending: number;
  /** Sightings refused because `maxPending` distinct entries were already waiting. */
  dropped: number;
  /** Executions of new documents past a discovery limit: served, not recorded. */
  unrecorded: number;
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

/** Moves the last-seen time of the batch's operations already in the registry; returns their keys. */
const UPDATE_KNOWN = `update operations as o set last_seen = greatest(o.last_seen, u.last_seen), first_seen = least(o.first_seen, u.first_seen)
  from unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::timestamptz[]) as u(hash, client_name, client_version, first_seen, last_seen)
  where o.hash = u.hash and o.client_name = u.client_name and o.client_version = u.client_version
  returning o.hash, o.client_name, o.client_version`;

/** Documents first seen in each of the hours $1, per client name (served by the index of migration 012). */
const DISCOVERED_IN_HOURS = `select q.n, o.client_name, count(*)::int as discovered
  from unnest($1::timestamptz[]) with ordinality as q(hour, n)
  join operations o on o.first_seen >= q.hour and o.first_seen < q.hour + interval '1 hour'
  group by q.n, o.client_name`;

/** Inserts the batch's new operations with their text (one already there, written by another router meanwhile, only moves its times). */
const INSERT_NEW = `insert into operations as o (hash, normalised, operation_name, operation_type, client_name, client_version, first_seen, last_seen)
  select u.hash, u.normalised, u.operation_name, u.operation_type, u.client_name, u.client_version, u.first_seen, u.last_seen
  from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::timestamptz[])
    as u(hash, normalised, operation_name, operation_type, client_name, client_version, first_seen, last_seen)
  on conflict (hash, client_name, client_version) do update
    set last_seen = greatest(o.last_seen, excluded.last_seen), first_seen = least(o.first_seen, excluded.first_seen)`;

const UPSERT_COUNTS = `insert into operation_counts as c (hash, client_name, client_version, day, count)
  select u.hash, u.client_name, u.client_version, u.day, u.count
  from unnest($1::text[], $2::text[], $3::text[], $4::date[], $5::bigint[]) as u(hash, client_name, client_version, day, count)
  on conflict (hash, client_name, client_version, day) do update set count = c.count + excluded.count`;

/** Any 64-bit constant of ours (not the migrations' or the audit partitions'): one router at a time admits new documents. */
const DISCOVERY_LOCK = 7_428_113_903;

const HOUR_MS = 3_600_000;

/** The discovery limits a write applies (the recorder's options, resolved). */
interface DiscoveryLimits {
  perClient: number;
  total: number;
}

/** What a write did: executions written, and executions of new documents refused by the limits, by client name. */
interface Written {
  recorded: number;
  refused: Map<string, number>;
}

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

const operationKey = (s: { hash: string; clientName: string; clientVersion: string }) => `${s.hash}\n${s.clientName}\n${s.clientVersion}`;

/**
 * The new operations the limits admit, oldest first sighting first: each counts against its client's
 * hour and the hour's total, with what the registry already holds for those hours.
 */
async function admitNew(tx: Queryable, fresh: Pending[], limits: DiscoveryLimits): Promise<Set<Pending>> {
  const hourOf = (entry: Pending) => Math.floor(entry.firstSeen / HOUR_MS) * HOUR_MS;
  const hours = [...new Set(fresh.map(hourOf))];
  const { rows } = await tx.query<{ n: string; client_name: string; discovered: number }>(DISCOVERED_IN_HOURS, [hours.map((hour) => new Date(hour).toISOString())]);
  const perClient = new Map<string, number>();
  const total = new Map<number, number>();
  for (const row of rows) {
    const hour = hours[Number(row.n) - 1];
    perClient.set(`${hour}\n${row.client_name}`, row.discovered);
    total.set(hour, (total.get(hour) ?? 0) + row.discovered);
  }
  const admitted = new Set<Pending>();
  const ordered = [...fresh].sort((a, b) => a.firstSeen - b.firstSeen || (operationKey(a.sighting) < operationKey(b.sighting) ? -1 : 1));
  for (const entry of ordered) {
    const hour = hourOf(entry);
    const clientKey = `${hour}\n${entry.sighting.clientName}`;
    const clientCount = perClient.get(clientKey) ?? 0;
    const hourCount = total.get(hour) ?? 0;
    if (clientCount >= limits.perClient || hourCount >= limits.total) continue;
    perClient.set(clientKey, clientCount + 1);
    total.set(hour, hourCount + 1);
    admitted.add(entry);
  }
  return admitted;
}

/**
 * Writes one batch in one transaction:
 * 1. Operations already in the registry get their last-seen time moved (one UPDATE).
 * 2. The others are new documents. Under a lock every router takes for this step (so two routers cannot
 *    both take the hour's last places), the documents first seen in their hours are counted, and the
 *    new ones are admitted oldest first while their client has fewer than `perClient` that hour and
 *    the hour fewer than `total`. Admitted ones are inserted with their text; the others are left out.
 * 3. Counts per day are added for the operations the registry now holds; a left-out document's are not.
 * A batch without new documents is two statements and takes no lock, as before the limits.
 */
async function write(db: Database, batch: Map<string, Pending>, limits: DiscoveryLimits): Promise<Written> {
  // One operations row per (hash, client, version), even when the batch spans two days.
  const operations = new Map<string, Pending>();
  for (const entry of batch.values()) {
    const key = operationKey(entry.sighting);
    const seen = operations.get(key);
    if (!seen) operations.set(key, { ...entry });
    else {
      seen.firstSeen = Math.min(seen.firstSeen, entry.firstSeen);
      seen.lastSeen = Math.max(seen.lastSeen, entry.lastSeen);
    }
  }
  const ops = [...operations.values()];
  return db.transaction(async (tx) => {
    const known = await tx.query<{ hash: string; client_name: string; client_version: string }>(UPDATE_KNOWN, [
      ops.map((e) => e.sighting.hash),
      ops.map((e) => e.sighting.clientName),
      ops.map((e) => e.sighting.clientVersion),
      ops.map((e) => new Date(e.firstSeen).toISOString()),
      ops.map((e) => new Date(e.lastSeen).toISOString()),
    ]);
    const held = new Set(known.rows.map((row) => operationKey({ hash: row.hash, clientName: row.client_name, clientVersion: row.client_version })));
    const fresh = ops.filter((e) => !held.has(operationKey(e.sighting)));
    if (fresh.length > 0) {
      await tx.query('select pg_advisory_xact_lock($1)', [DISCOVERY_LOCK]);
      const admitted = [...(await admitNew(tx, fresh, limits))];
      if (admitted.length > 0) {
        await tx.query(INSERT_NEW, [
          admitted.map((e) => e.sighting.hash),
          admitted.map((e) => e.sighting.normalised),
          admitted.map((e) => e.sighting.operationName),
          admitted.map((e) => e.sighting.operationType),
          admitted.map((e) => e.sighting.clientName),
          admitted.map((e) => e.sighting.clientVersion),
          admitted.map((e) => new Date(e.firstSeen).toISOString()),
          admitted.map((e) => new Date(e.lastSeen).toISOString()),
        ]);
      }
      for (const entry of admitted) held.add(operationKey(entry.sighting));
    }
    const counts: Pending[] = [];
    const refused = new Map<string, number>();
    let recorded = 0;
    for (const entry of batch.values()) {
      if (held.has(operationKey(entry.sighting))) {
        counts.push(entry);
        recorded += entry.count;
      } else refused.set(entry.sighting.clientName, (refused.get(entry.sighting.clientName) ?? 0) + entry.count);
    }
    if (counts.length > 0) {
      await tx.query(UPSERT_COUNTS, [
        counts.map((e) => e.sighting.hash),
        counts.map((e) => e.sighting.clientName),
        counts.map((e) => e.sighting.clientVersion),
        counts.map((e) => e.day),
        counts.map((e) => String(e.count)),
      ]);
    }
    return { recorded, refused };
  });
}

/** The recorder's listeners, called so that one that throws cannot break recording. */
function listenersOf(options: OperationRecorderOptions) {
  function report(error: unknown): void {
    try {
      options.onError?.(error instanceof Error ? error : new Error(String(error)));
    } catch {
      // A reporter that throws must not break recording.
    }
  }
  function tell(clientName: string, executions: number, reason: UnrecordedReason): void {
    try {
      options.onUnrecorded?.(clientName, executions, reason);
    } catch (error) {
      report(error);
    }
  }
  return { report, tell };
}

/**
 * Keeps sightings as counters in memory and writes them in one transaction per interval:
 * 1. `record` adds one to the entry of (hash, client, version, UTC day), creating it if new: no I/O.
 * 2. Every `flushIntervalMs` (and on `flush`/`close`) the entries are taken out of the map and written
 *    with a few statements, whatever their number (`write` above): known operations get their last-seen
 *    time moved, new ones are inserted within the discovery limits, counts are added to the day's row.
 *    A request never costs a query of its own.
 * 3. A failed write puts the entries back (their counts added to whatever arrived meanwhile), to be
 *    retried on the next interval: nothing accepted is lost while the process lives. New documents the
 *    limits refused are not put back: they are counted as unrecorded, and a later sighting tries again.
 * 4. Writes run one at a time; `close` flushes last. Past `closeTimeoutMs` it gives up and reports
 *    what was not written (counts, not documents: the next sighting re-inserts a document).
 * Why not the audit writer's ring buffer and spill files: an operation is counted, not kept one row per
 * request, so the in-memory map is already bounded by distinct documents, not by traffic. And why the
 * limits: the registry grows with distinct documents, which a client sending free text makes at will;
 * with them it gains at most `discoveryTotalLimitPerHour` rows an hour, whatever is sent.
 */
export function createOperationRecorder(options: OperationRecorderOptions): OperationRecorder {
  const { db } = options;
  const { report, tell } = listenersOf(options);
  const flushIntervalMs = options.flushIntervalMs ?? 1_000;
  const maxPending = options.maxPending ?? 10_000;
  const closeTimeoutMs = options.closeTimeoutMs ?? 5_000;
  const limits: DiscoveryLimits = {
    perClient: options.discoveryLimitPerHour ?? configDefaults.operationDiscoveryLimitPerHour,
    total: options.discoveryTotalLimitPerHour ?? configDefaults.operationDiscoveryTotalLimitPerHour,
  };
  let pending = new Map<string, Pending>();
  let recorded = 0;
  let dropped = 0;
  let unrecorded = 0;
  let writing: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

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
          tell(sighting.clientName, 1, 'backlog');
          return;
        }
        pending.set(key, { sighting, day, count: 1, firstSeen: at, lastSeen: at });
      }
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
      let written: Written;
      try {
        written = await write(db, batch, limits);
      } catch (error) {
        restore(pending, batch);
        arm();
        report(error);
        throw error;
      }
      recorded += written.recorded;
      for (const [clientName, executions] of written.refused) {
        unrecorded += executions;
        tell(clientName, executions, 'discovery_limit');
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
    // A failed last write was reported by `flush`; either way what is still pending is lost with the process.
    const outcome = await waitWithin(flush(), closeTimeoutMs).catch(() => 'failed' as const);
    if (outcome !== 'done' && pending.size > 0) report(new Error(`operation registry: ${pending.size} operation counts could not be written at shutdown`));
  }

  return { record, flush, close, stats: () => ({ recorded, pending: pending.size, dropped, unrecorded }) };
}
