// The audit log (table `audit_log`): a writer that records one row per request off the request path, and the query behind `switchyard audit`.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Queryable } from './database.js';
import { RingBuffer } from './audit-buffer.js';
import { SpillFolder, type SpillSegment } from './audit-spill.js';

/** What happened to one request. Owned by the writer once recorded: do not change it afterwards. */
export interface AuditEntry {
  /** When the request arrived. */
  at: Date;
  /** The request id (may come from the client). */
  requestId: string;
  traceId?: string | null;
  /** The calling application (client name header or token claim). */
  client?: string | null;
  /** The authenticated user (`sub`); null when anonymous. */
  subject?: string | null;
  operationName?: string | null;
  /** Hash of the GraphQL document. */
  operationHash?: string | null;
  /** Subgraphs the request called. */
  subgraphs: readonly string[];
  /** HTTP status of the response. */
  status: number;
  durationMs: number;
  /** `extensions.code` of every error in the response. */
  errorCodes: readonly string[];
  /** Whether the response was whole (`extensions.completeness.complete`). */
  complete: boolean;
}

/** One stored row, as `queryAudit` returns it. */
export interface AuditRow {
  /** bigserial, as a string (pg returns int8 as text). */
  id: string;
  at: Date;
  requestId: string;
  traceId: string | null;
  client: string | null;
  subject: string | null;
  operationName: string | null;
  operationHash: string | null;
  subgraphs: string[];
  status: number;
  durationMs: number;
  errorCodes: string[];
  complete: boolean;
  /** Why an administrative action was taken (a forced publish names the operations it breaks); null for requests. */
  detail: unknown;
}

export interface AuditWriterOptions {
  /** The metadata store (a `Database`). The writer runs only INSERTs and a `select 1` probe on it, and never closes it. */
  db: Queryable;
  /** Folder of the spill files, created when first needed. A router uses `defaultSpillDir(dataDir)`, `<dataDir>/audit-spill`. */
  spillDir: string;
  /** Rows per INSERT, and the number of buffered entries that starts a write without waiting for the interval. Default 500; 1 to 5,000. */
  batchSize?: number;
  /** Longest time, in ms, an entry waits in memory before a write starts. Default 200. */
  flushIntervalMs?: number;
  /** Entries held in memory; when full, the oldest are appended to the spill file synchronously (never dropped). Default 10,000. */
  bufferCapacity?: number;
  /** Delay, in ms, before the first probe of an unreachable database; it doubles after each failure up to `probeMaxIntervalMs`. Default 1,000. */
  probeIntervalMs?: number;
  /** Longest delay, in ms, between probes (never less than `probeIntervalMs`). Default 10,000. */
  probeMaxIntervalMs?: number;
  /**
   * How long, in ms, `close` waits for the database. Past it, what is still in memory is appended to the
   * spill file and `close` resolves; an INSERT still in flight finishes or fails on its own (its rows are
   * on disk either way). Keep it below the shutdown grace period. Default 5,000.
   */
  closeTimeoutMs?: number;
  /** Told about outages (once each), spill-folder I/O errors and rejected rows. Called synchronously; what it throws is ignored. Default: none. */
  onError?: (error: Error) => void;
}

export interface AuditStats {
  /** Entries in memory, not yet in the database or a spill file (metric `switchyard_audit_buffered`). */
  buffered: number;
  /** Rows inserted straight from memory. */
  written: number;
  /**
   * Entries appended to spill files (metric `switchyard_audit_spilled_total`). A batch copied to disk
   * while its INSERT was in flight counts only if that INSERT fails, so the counter never goes down.
   */
  spilled: number;
  /** Rows inserted from spill files, this writer's or left by an earlier process; rows already present are not counted. */
  replayed: number;
  /** Rows the database refused as invalid, and unreadable spill lines: set aside in `<spillDir>/rejected.jsonl`, not retried. */
  rejected: number;
  /** Entries that could be written neither to the database nor to the spill folder. */
  dropped: number;
  /** The database is unreachable, or spill files wait to be replayed: new entries go to the spill file. */
  spilling: boolean;
}

export interface AuditWriter {
  /** Queues one entry. Synchronous and O(1); never throws, never waits for the database. */
  record(entry: AuditEntry): void;
  /** Resolves when every entry recorded before the call is in the database or a spill file. Rejects only if the spill folder refused them too. */
  flush(): Promise<void>;
  /**
   * For SIGTERM: stops the timers, flushes, lets an in-flight replay batch finish, and leaves nothing
   * scheduled; within `closeTimeoutMs` even if the database hangs. Later entries are spilled synchronously.
   */
  close(): Promise<void>;
  stats(): AuditStats;
}

export interface AuditQuery {
  /** Rows to return, newest first. Default 50. */
  limit?: number;
  /** Only requests that arrived at or after this time. */
  since?: Date;
  /** Only this operation name. */
  operation?: string;
}

/** Where a router keeps the audit spill files: `<dataDir>/audit-spill`. */
export function defaultSpillDir(dataDir: string): string {
  return path.join(dataDir, 'audit-spill');
}

const DEFAULTS = {
  batchSize: 500,
  flushIntervalMs: 200,
  bufferCapacity: 10_000,
  probeIntervalMs: 1_000,
  probeMaxIntervalMs: 10_000,
  closeTimeoutMs: 5_000,
};

/** Beyond this, one batch's JSON becomes a large single parameter for little gain. */
const MAX_BATCH_SIZE = 5_000;

/**
 * One statement per batch (per run of one writer's rows): the rows travel column by column, each column
 * one array literal, `unnest ... with ordinality` turns them back into rows, `order by u.n` gives the
 * ids in recording order, and the writer's key makes a replayed row a no-op. The database's own input
 * functions type each value, as `json_populate_record` did before. $1 is the request ids, $14 the writer.
 *
 * Why not the former single JSON array (`json_array_elements` + `json_populate_record`): on the embedded
 * database, which runs as WebAssembly in the router's own process, it cost the router about a fifth to a
 * quarter more CPU per row (each row's JSON parsed twice, a hash of its keys built, and ~460 bytes a row
 * to escape and lex against ~270). A multi-row `values` list was no cheaper than this and takes 14
 * parameters a row (PostgreSQL allows 65,535). Throwaway benchmark, 2-core VM with other work running,
 * `process.cpuUsage()` around building the parameters and running the INSERT, old and new alternated
 * batch by batch, 30,000+ rows each, mean µs of router CPU per row:
 *
 *   rows per batch                      20                50                100
 *   embedded, INSERT alone             167 -> 131        122 -> 89         114 -> 87
 *   embedded, writer (record + flush)  168-182 -> 139-142  124-128 -> 98-104  113-119 -> 84-93
 *   PostgreSQL 15, router              26-38, new +0 to +3 (median batch +0.5)   15-23, +0 to +3   18, same
 *   PostgreSQL 15, its backend         62-82 -> 56-80    41-56 -> 33-45    46 -> 35
 *
 * What is left on the embedded database is mostly the table and its four indexes (rows the database
 * generates itself cost 55-60 µs each at 50 a batch) and a fixed cost per statement (about 0.5 ms).
 */
const INSERT_SQL = `insert into audit_log (writer_id, writer_seq, at, request_id, trace_id, client, subject, operation_name,
    operation_hash, subgraphs, status, duration_ms, error_codes, complete)
  select $14::uuid, u.writer_seq, u.at, u.request_id, u.trace_id, u.client, u.subject, u.operation_name,
    u.operation_hash, coalesce(u.subgraphs::text[], '{}'), u.status, u.duration_ms, coalesce(u.error_codes::text[], '{}'), u.complete
  from unnest($1::text[], $2::bigint[], $3::timestamptz[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
      $9::text[], $10::integer[], $11::double precision[], $12::text[], $13::boolean[]) with ordinality
    as u(request_id, writer_seq, at, trace_id, client, subject, operation_name, operation_hash, subgraphs, status, duration_ms, error_codes, complete, n)
  order by u.n
  on conflict (writer_id, writer_seq) do nothing`;

/** The fields behind $1 to $13, in order; the two text[] columns travel as text, one array literal per row. */
const INSERT_FIELDS = ['request_id', 'writer_seq', 'at', 'trace_id', 'client', 'subject', 'operation_name', 'operation_hash', 'subgraphs', 'status', 'duration_ms', 'error_codes', 'complete'] as const;
const ARRAY_FIELDS: ReadonlySet<string> = new Set(['subgraphs', 'error_codes']);

/** One row as stored: its JSON is a spill line, and the INSERT takes it field by field. */
type StoredRow = Record<string, unknown> & { writer_id: string; writer_seq: number };

// timestamptz takes years 1 to 9999 in ISO form (toISOString writes "+010000-..." beyond, which PostgreSQL refuses).
const MIN_AT = Date.parse('0001-01-01T00:00:00.000Z');
const MAX_AT = Date.parse('9999-12-31T23:59:59.999Z');
// NUL (text cannot hold it) and lone surrogates (json refuses to turn "\ud800" into text): replaced, so one odd header cannot get a row rejected.
// eslint-disable-next-line no-control-regex
const UNSAFE_TEXT = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

function text(value: unknown): string {
  return String(value).replace(UNSAFE_TEXT, '\ufffd');
}

function optionalText(value: unknown): string | null {
  return value === null || value === undefined ? null : text(value);
}

function texts(value: unknown): string[] {
  return Array.isArray(value) ? value.map(text) : [];
}

function isoTime(value: unknown): string {
  const ms = value instanceof Date ? value.getTime() : typeof value === 'number' ? value : typeof value === 'string' ? Date.parse(value) : Number.NaN;
  // An unusable time: the time the row is written beats losing the row.
  return new Date(ms >= MIN_AT && ms <= MAX_AT ? ms : Date.now()).toISOString();
}

/**
 * An entry as one row, keyed by (writer id, sequence number) and with its values made acceptable to
 * the table's types: the same values go into the INSERT and, as JSON, into the spill file.
 */
function toRow(entry: AuditEntry, writerId: string, seq: number): StoredRow {
  try {
    return toRecord(entry, writerId, seq);
  } catch {
    // Only an entry built to throw (a getter, a toString) gets here: keep that a request happened.
    return toRecord({ at: new Date(), requestId: '', subgraphs: [], status: 0, durationMs: 0, errorCodes: [], complete: false }, writerId, seq);
  }
}

/** An entry as one spill line. */
function toLine(entry: AuditEntry, writerId: string, seq: number): string {
  return JSON.stringify(toRow(entry, writerId, seq));
}

function toRecord(entry: AuditEntry, writerId: string, seq: number): StoredRow {
  const status = Math.trunc(Number(entry.status));
  const durationMs = Number(entry.durationMs);
  return {
    writer_id: writerId,
    writer_seq: seq,
    at: isoTime(entry.at),
    request_id: text(entry.requestId ?? ''),
    trace_id: optionalText(entry.traceId),
    client: optionalText(entry.client),
    subject: optionalText(entry.subject),
    operation_name: optionalText(entry.operationName),
    operation_hash: optionalText(entry.operationHash),
    subgraphs: texts(entry.subgraphs),
    status: status >= -2_147_483_648 && status <= 2_147_483_647 ? status : 0,
    duration_ms: Number.isFinite(durationMs) ? durationMs : 0,
    error_codes: texts(entry.errorCodes),
    complete: entry.complete === true,
  };
}

/** A spill line this version can replay: a JSON object carrying its key. */
function isReplayable(line: string): boolean {
  try {
    const row = JSON.parse(line) as { writer_id?: unknown; writer_seq?: unknown } | null;
    return typeof row === 'object' && row !== null && typeof row.writer_id === 'string' && Number.isSafeInteger(row.writer_seq);
  } catch {
    return false;
  }
}

const ARRAY_QUOTED = /["\\]/g;

/**
 * A JSON value as one element of an array literal, holding the text its column's input function reads,
 * as `json_populate_record` passed it: NULL for null, an object as its JSON, and any text double-quoted
 * with a backslash before `"` and `\` (which keeps every other character as it is). A row the writer
 * made holds only strings, numbers, booleans, null and arrays of strings; anything else (a spill line
 * edited by hand) is for the database to accept or refuse.
 */
function arrayElement(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  // `includes` first: few values need a backslash, and it costs far less than a `replace` that finds nothing.
  if (typeof value === 'string') return value.includes('"') || value.includes('\\') ? `"${value.replace(ARRAY_QUOTED, '\\$&')}"` : `"${value}"`;
  if (typeof value === 'object') return arrayElement(JSON.stringify(value));
  return `"${String(value)}"`;
}

/** A JSON array as a text[] literal, its elements as above; anything else as it is. */
function arrayLiteral(value: unknown): unknown {
  if (!Array.isArray(value)) return value;
  let literal = '{';
  for (let i = 0; i < value.length; i += 1) literal += (i > 0 ? ',' : '') + arrayElement(value[i]);
  return `${literal}}`;
}

/** The parameters of INSERT_SQL for rows of one writer: one array literal per field, then the writer id. */
function insertParams(rows: readonly StoredRow[]): string[] {
  const params: string[] = [];
  for (const field of INSERT_FIELDS) {
    const isArray = ARRAY_FIELDS.has(field);
    let literal = '{';
    for (let i = 0; i < rows.length; i += 1) {
      const value = rows[i][field];
      literal += (i > 0 ? ',' : '') + arrayElement(isArray ? arrayLiteral(value) : value);
    }
    params.push(`${literal}}`);
  }
  params.push(rows[0].writer_id);
  return params;
}

/** SQLSTATE classes 22 (data exception) and 23 (integrity violation): the rows are at fault, not the connection. */
function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^2[23][0-9A-Z]{3}$/.test(code);
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

function resolveOptions(options: AuditWriterOptions): Required<Omit<AuditWriterOptions, 'onError'>> {
  const resolved = { ...DEFAULTS, ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) } as Required<Omit<AuditWriterOptions, 'onError'>>;
  const problems: string[] = [];
  if (!resolved.db || typeof resolved.db.query !== 'function') problems.push('db must be a Database');
  if (typeof resolved.spillDir !== 'string' || resolved.spillDir === '') problems.push('spillDir must be a folder path');
  const ranges: [keyof typeof DEFAULTS, number, number][] = [
    ['batchSize', 1, MAX_BATCH_SIZE],
    ['flushIntervalMs', 1, 60_000],
    ['bufferCapacity', 1, 10_000_000],
    ['probeIntervalMs', 1, 3_600_000],
    ['probeMaxIntervalMs', 1, 3_600_000],
    ['closeTimeoutMs', 1, 3_600_000],
  ];
  for (const [key, min, max] of ranges) {
    const value = resolved[key];
    if (!Number.isInteger(value) || value < min || value > max) problems.push(`${key} must be an integer from ${min} to ${max} (got ${value})`);
  }
  if (problems.length > 0) throw new RangeError(`invalid audit writer options: ${problems.join('; ')}`);
  resolved.probeMaxIntervalMs = Math.max(resolved.probeMaxIntervalMs, resolved.probeIntervalMs);
  return resolved;
}

/**
 * Creates the audit writer. How entries travel:
 *
 * 1. `record` pushes the entry into a ring buffer and returns. Its sequence number in the buffer,
 *    with the writer's random id, is the row's idempotency key. A flush starts `flushIntervalMs`
 *    after the first waiting entry, or on the next turn of the event loop once `batchSize` wait.
 * 2. One pump at a time moves entries out, oldest first, so rows keep their recording order:
 *    a. database healthy and no spill segments: INSERT the oldest `batchSize` entries. They leave the
 *       buffer only once the INSERT succeeded, so a failed batch is still at the front.
 *    b. otherwise (outage, or segments waiting): append them, batch by batch, to the newest spill
 *       segment. Segments hold only entries older than anything in memory, so replaying them before
 *       writing memory keeps the order. Entries are due when `batchSize` wait, the interval passed,
 *       or `flush`/`close` asked, in every mode, so an outage also appends in batches.
 *    c. database healthy and segments waiting: replay the oldest segment in batches (it takes no more
 *       appends meanwhile), then delete it. Entries due meanwhile go to a newer segment (b).
 * 3. A failed INSERT marks the database unhealthy (2b takes over from that batch on) and arms a probe
 *    (`select 1`) after `probeIntervalMs`, doubling up to `probeMaxIntervalMs`. When it answers, 2c
 *    replays; a failure mid-replay goes back to 3, and the segment resumes where it stopped. Rows the
 *    database rejects as invalid (SQLSTATE 22/23) are isolated one by one and set aside, so one bad
 *    row can neither block the queue nor be mistaken for an outage.
 * 4. A full buffer appends its oldest `batchSize` entries to the spill file synchronously to make room
 *    (those are older than everything else in memory, so order holds). If they include the batch in
 *    flight, that batch is on disk either way; its INSERT outcome only decides how it is counted.
 * 5. Segments left in `spillDir` by an earlier process are adopted at creation and replayed first.
 * 6. Every key is written at most once to the table (`on conflict do nothing`), so a batch that was
 *    committed just before its connection died, then spilled and replayed, is not duplicated.
 */
export function createAuditWriter(options: AuditWriterOptions): AuditWriter {
  const settings = resolveOptions(options);
  const { db, batchSize } = settings;
  const onError = options.onError;
  const writerId = randomUUID();
  const spill = new SpillFolder(settings.spillDir, writerId);
  const buffer = new RingBuffer<AuditEntry>(settings.bufferCapacity);
  const counts = { written: 0, spilled: 0, replayed: 0, rejected: 0, dropped: 0 };
  const waiters: { target: number; resolve: () => void; reject: (error: Error) => void }[] = [];

  let healthy = true;
  /** Entries with a smaller sequence number are due: the interval passed or `flush` asked for them. */
  let drainTarget = 0;
  let inFlight: { count: number; spilledEarly: boolean } | undefined;
  let cursor: { segment: SpillSegment; lines: string[]; offset: number } | undefined;
  let pumping: Promise<void> | undefined;
  let probing: Promise<void> | undefined;
  let flushTimer: NodeJS.Timeout | undefined;
  let probeTimer: NodeJS.Timeout | undefined;
  let kickTimer: NodeJS.Immediate | undefined;
  let probeDelay = settings.probeIntervalMs;
  /** The last failure to append to the spill folder; cleared by the next success. */
  let spillError: Error | undefined;
  let closing = false;
  let closed = false;
  let closePromise: Promise<void> | undefined;

  function report(error: Error): void {
    try {
      onError?.(error);
    } catch {
      // A failing error handler must not stop the writer.
    }
  }

  function noteSpillError(error: unknown): void {
    if (!spillError) report(new Error(`audit log: cannot write the spill folder ${spill.dir}`, { cause: error }));
    spillError = asError(error);
  }

  function setAside(lines: readonly string[], reason: string): void {
    try {
      spill.rejectSync(lines.map((line) => ({ reason, line })));
      counts.rejected += lines.length;
    } catch (error) {
      counts.dropped += lines.length;
      noteSpillError(error);
    }
    report(new Error(`audit log: ${lines.length} row(s) set aside in ${path.join(spill.dir, 'rejected.jsonl')}: ${reason}`));
  }

  function settleWaiters(final = false): void {
    for (let i = waiters.length - 1; i >= 0; i -= 1) {
      const waiter = waiters[i];
      if (waiter.target <= buffer.headSeq) waiter.resolve();
      else if (final) waiter.reject(new Error(`audit log: ${buffer.length} entries could be written neither to the database nor to ${spill.dir}`, { cause: spillError }));
      else continue;
      waiters.splice(i, 1);
    }
  }

  /** Appends the oldest `count` buffered entries to the spill file (4, 2b). False if the folder refused them. */
  function spillOldest(count: number): boolean {
    const start = buffer.headSeq;
    const entries = buffer.peek(Math.max(count, inFlight && !inFlight.spilledEarly ? inFlight.count : 0));
    try {
      spill.appendSync(entries.map((entry, i) => toLine(entry, writerId, start + i)));
    } catch (error) {
      noteSpillError(error);
      return false;
    }
    spillError = undefined;
    let fresh = entries.length;
    if (inFlight && !inFlight.spilledEarly) {
      // The batch in flight sits at the front: it is now on disk whatever its INSERT does (4).
      inFlight.spilledEarly = true;
      fresh -= inFlight.count;
    }
    counts.spilled += fresh;
    buffer.drop(entries.length);
    settleWaiters();
    return true;
  }

  function dueCount(): number {
    const n = buffer.length;
    if (n === 0) return 0;
    if (closing || n >= batchSize) return n;
    return Math.min(n, Math.max(0, drainTarget - buffer.headSeq));
  }

  /**
   * Inserts rows, one statement per run of one writer's rows (a batch holds one writer's, unless a spill
   * file was pieced together by hand); returns the rows inserted. Throws what looks like an outage; sets
   * aside rows the database refuses (3), as their spill line when there is one.
   */
  async function insertRows(rows: readonly StoredRow[], lines?: readonly string[]): Promise<number> {
    let inserted = 0;
    for (let start = 0, end = 0; start < rows.length; start = end) {
      for (end = start + 1; end < rows.length && rows[end].writer_id === rows[start].writer_id; end += 1);
      inserted += await insertRun(rows.slice(start, end), lines?.slice(start, end));
    }
    return inserted;
  }

  async function insertRun(rows: readonly StoredRow[], lines: readonly string[] | undefined): Promise<number> {
    try {
      const result = await db.query(INSERT_SQL, insertParams(rows));
      return result.rowCount ?? 0;
    } catch (error) {
      if (!isDataError(error)) throw error;
      if (rows.length === 1) {
        setAside([lines?.[0] ?? JSON.stringify(rows[0])], `the database refused the row: ${asError(error).message}`);
        return 0;
      }
      // One bad row fails the whole statement: write them one by one so the others still land, in order.
      let inserted = 0;
      for (let i = 0; i < rows.length; i += 1) inserted += await insertRun([rows[i]], lines && [lines[i]]);
      return inserted;
    }
  }

  function enterOutage(error: unknown): void {
    if (healthy) report(new Error(`audit log: the database did not take a batch; spilling to ${spill.dir} until it answers`, { cause: error }));
    healthy = false;
    armProbe();
  }

  /** 2a. */
  async function writeBatch(): Promise<void> {
    const start = buffer.headSeq;
    const entries = buffer.peek(batchSize);
    const batch = { count: entries.length, spilledEarly: false };
    inFlight = batch;
    try {
      counts.written += await insertRows(entries.map((entry, i) => toRow(entry, writerId, start + i)));
      probeDelay = settings.probeIntervalMs;
      if (!batch.spilledEarly) buffer.drop(batch.count);
      settleWaiters();
    } catch (error) {
      enterOutage(error);
      // Already on disk (4): count it as spilled now that the database did not take it. Otherwise it is
      // still at the front of the buffer, and 2b spills it first.
      if (batch.spilledEarly) counts.spilled += batch.count;
    } finally {
      inFlight = undefined;
    }
  }

  /** 2c: one batch of the oldest segment, or its deletion once fully replayed. */
  async function replayBatch(): Promise<void> {
    if (!cursor) {
      const segment = spill.head();
      if (!segment) return;
      let lines: string[];
      try {
        lines = await spill.read(segment);
      } catch (error) {
        spill.forget(segment);
        report(new Error(`audit log: cannot read spill segment ${segment.file}; left for a later process`, { cause: error }));
        return;
      }
      const bad = lines.filter((line) => !isReplayable(line));
      if (bad.length > 0) setAside(bad, `unreadable line in spill segment ${segment.name}`);
      cursor = { segment, lines: bad.length > 0 ? lines.filter(isReplayable) : lines, offset: 0 };
    }
    const { segment, lines, offset } = cursor;
    if (offset >= lines.length) {
      cursor = undefined;
      try {
        await spill.remove(segment);
      } catch (error) {
        spill.forget(segment);
        report(new Error(`audit log: cannot delete replayed spill segment ${segment.file}`, { cause: error }));
      }
      if (!spill.hasSegments()) probeDelay = settings.probeIntervalMs;
      return;
    }
    const chunk = lines.slice(offset, offset + batchSize);
    try {
      // Parsed again here rather than kept from the check above: a segment's lines take less memory than their objects.
      counts.replayed += await insertRows(chunk.map((line) => JSON.parse(line) as StoredRow), chunk);
      cursor.offset += chunk.length;
    } catch (error) {
      enterOutage(error);
    }
  }

  async function runPump(): Promise<void> {
    // Start on a later microtask: `pumping` is assigned before this can finish and clear it.
    await Promise.resolve();
    try {
      for (;;) {
        const due = dueCount();
        if (due > 0 && healthy && !spill.hasSegments()) await writeBatch();
        else if (due > 0) {
          if (!spillOldest(Math.min(due, batchSize))) break; // the folder refuses: keep them in memory, retry on the next tick
          // Batch by batch, letting requests run in between: a full buffer is thousands of lines to format.
          if (dueCount() > 0) await new Promise((resolve) => setImmediate(resolve));
        } else if (healthy && spill.hasSegments() && !closing) await replayBatch();
        else break;
      }
    } catch (error) {
      report(asError(error)); // a bug here must not become an unhandled rejection
    } finally {
      // Cleared in the same turn as the last decision, so a caller never sees a pump that will not look again.
      pumping = undefined;
      settleWaiters(true);
      if (buffer.length > 0) armFlushTimer();
    }
  }

  function schedulePump(): Promise<void> {
    pumping ??= runPump();
    return pumping;
  }

  function kick(): void {
    if (kickTimer || pumping || closed) return;
    // Not now: `record` returns first, and the INSERT is built on a later turn of the event loop.
    kickTimer = setImmediate(function flushFullBatch() {
      kickTimer = undefined;
      void schedulePump();
    });
    kickTimer.unref();
  }

  function armFlushTimer(): void {
    if (flushTimer || closing) return;
    flushTimer = setTimeout(function flushTick() {
      flushTimer = undefined;
      drainTarget = Math.max(drainTarget, buffer.tailSeq);
      void schedulePump();
    }, settings.flushIntervalMs);
    flushTimer.unref();
  }

  function armProbe(): void {
    if (probeTimer || probing || closing) return;
    const delay = probeDelay;
    probeDelay = Math.min(probeDelay * 2, settings.probeMaxIntervalMs);
    probeTimer = setTimeout(function probeTick() {
      probeTimer = undefined;
      probing = probe();
    }, delay);
    probeTimer.unref();
  }

  async function probe(): Promise<void> {
    await Promise.resolve(); // as in runPump: `probing` is assigned before it is cleared
    let answered = false;
    try {
      await db.query('select 1');
      answered = true;
    } catch {
      // Still down: the next probe waits longer.
    }
    probing = undefined;
    if (closing) return;
    if (answered) {
      healthy = true;
      void schedulePump();
    } else armProbe();
  }

  function record(entry: AuditEntry): void {
    try {
      if (typeof entry !== 'object' || entry === null) {
        counts.dropped += 1;
        return;
      }
      if (buffer.full && !spillOldest(batchSize)) {
        counts.dropped += 1;
        return;
      }
      buffer.push(entry);
      if (closed) {
        spillOldest(buffer.length); // nothing runs any more: straight to disk, for the next process
      } else if (closing) {
        drainTarget = buffer.tailSeq;
        void schedulePump();
      } else {
        if (!flushTimer) armFlushTimer();
        if (buffer.length >= batchSize) kick();
      }
    } catch (error) {
      counts.dropped += 1;
      report(asError(error));
    }
  }

  function flush(): Promise<void> {
    if (buffer.length === 0) return Promise.resolve();
    const target = buffer.tailSeq;
    drainTarget = Math.max(drainTarget, target);
    return new Promise<void>((resolve, reject) => {
      waiters.push({ target, resolve, reject });
      void schedulePump();
    });
  }

  function close(): Promise<void> {
    closePromise ??= (async function closeWriter() {
      closing = true;
      clearTimeout(flushTimer);
      clearTimeout(probeTimer);
      if (kickTimer) clearImmediate(kickTimer);
      flushTimer = probeTimer = kickTimer = undefined;
      const drained = (async function drain() {
        await flush();
        // An in-flight replay batch or probe finishes; nothing starts again once `closing` is set.
        while (pumping || probing) await (pumping ?? probing);
        return 'drained' as const;
      })();
      let deadline: NodeJS.Timeout | undefined;
      const expired = new Promise<'expired'>((resolve) => {
        deadline = setTimeout(resolve, settings.closeTimeoutMs, 'expired');
      });
      try {
        if ((await Promise.race([drained, expired])) === 'expired') {
          // The database hangs: the rest (an unsettled batch included, 4) goes to disk for the next process.
          if (buffer.length > 0 && !spillOldest(buffer.length)) throw new Error(`audit log: ${buffer.length} entries could be written neither to the database nor to ${spill.dir}`, { cause: spillError });
          report(new Error(`audit log: the database did not answer within ${settings.closeTimeoutMs} ms while closing; the rest is in ${spill.dir}`));
        }
      } finally {
        clearTimeout(deadline);
        closed = true;
      }
    })();
    return closePromise;
  }

  function stats(): AuditStats {
    return { buffered: buffer.length, ...counts, spilling: !healthy || spill.hasSegments() };
  }

  try {
    if (spill.adoptLeftovers() > 0) kick();
  } catch (error) {
    report(new Error(`audit log: cannot read the spill folder ${spill.dir}; leftovers stay there`, { cause: error }));
  }

  return { record, flush, close, stats };
}

interface AuditRowRecord {
  id: string;
  at: Date;
  request_id: string;
  trace_id: string | null;
  client: string | null;
  subject: string | null;
  operation_name: string | null;
  operation_hash: string | null;
  subgraphs: string[];
  status: number;
  duration_ms: number;
  error_codes: string[];
  complete: boolean;
  detail: unknown;
}

/** Audit rows, newest first (by request time), for `switchyard audit`. */
export async function queryAudit(db: Queryable, query: AuditQuery = {}): Promise<AuditRow[]> {
  const limit = query.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer (got ${limit})`);
  const where: string[] = [];
  const params: unknown[] = [];
  if (query.since !== undefined) {
    if (!(query.since instanceof Date) || Number.isNaN(query.since.getTime())) throw new RangeError('since must be a valid Date');
    params.push(query.since);
    where.push(`at >= $${params.length}`);
  }
  if (query.operation !== undefined) {
    params.push(query.operation);
    where.push(`operation_name = $${params.length}`);
  }
  params.push(limit);
  const { rows } = await db.query<AuditRowRecord>(
    `select id, at, request_id, trace_id, client, subject, operation_name, operation_hash, subgraphs, status, duration_ms, error_codes, complete, detail
       from audit_log ${where.length > 0 ? `where ${where.join(' and ')}` : ''}
      order by at desc, id desc
      limit $${params.length}`,
    params,
  );
  return rows.map((row) => ({
    id: String(row.id),
    at: row.at,
    requestId: row.request_id,
    traceId: row.trace_id,
    client: row.client,
    subject: row.subject,
    operationName: row.operation_name,
    operationHash: row.operation_hash,
    subgraphs: row.subgraphs,
    status: Number(row.status),
    durationMs: Number(row.duration_ms),
    errorCodes: row.error_codes,
    complete: row.complete,
    detail: row.detail ?? null,
  }));
}

/** An administrative action (not a request) for the audit log, written at once by the CLI. */
export interface AuditNote {
  /** What was done, shown where a request's operation name is: e.g. `subgraph publish --force`. */
  action: string;
  /** Who did it (the OS user running the CLI). */
  subject: string | null;
  /** Error codes the action overrode, e.g. `BREAKING_CHANGE_FORCED`. */
  codes: readonly string[];
  subgraphs: readonly string[];
  /** JSON detail: what the action overrode and why. */
  detail: unknown;
}

/**
 * Writes one note straight away (one INSERT; the CLI has no request path to keep free). It takes its
 * own writer id, so it can never collide with a router's (writer id, sequence) keys.
 */
export async function writeAuditNote(db: Queryable, note: AuditNote): Promise<void> {
  await db.query(
    `insert into audit_log (writer_id, writer_seq, at, request_id, client, subject, operation_name, subgraphs, status, duration_ms, error_codes, complete, detail)
     values ($1::uuid, 0, now(), $2, 'switchyard-cli', $3, $4, $5::text[], 0, 0, $6::text[], true, $7::jsonb)`,
    [randomUUID(), randomUUID(), note.subject, note.action, [...note.subgraphs], [...note.codes], JSON.stringify(note.detail ?? null)],
  );
}
