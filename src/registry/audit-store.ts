// The audit log's SQL (table `audit_log`, partitioned by day: audit-partitions.ts): batch INSERTs for the writer, the query behind `switchyard audit`, and the CLI's notes.
import { randomUUID } from 'node:crypto';
import type { Queryable } from './database.js';
import type { StoredRow } from './audit-row.js';

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

export interface AuditQuery {
  /** Rows to return, newest first. Default 50. */
  limit?: number;
  /** Only requests that arrived at or after this time. */
  since?: Date;
  /** Only this operation name. */
  operation?: string;
}

/**
 * One statement per batch (per run of one writer's rows): the rows travel column by column, each column
 * one array literal, `unnest ... with ordinality` turns them back into rows, `order by u.n` gives the
 * ids in recording order, and the writer's key makes a replayed row a no-op: (writer id, sequence, `at`),
 * `at` because a unique key of a partitioned table must hold its partition key (migration 011); a
 * replay carries the `at` of the row it repeats (`toRow`), so it meets that row in its partition. The database's own input
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
 * Migration 011 (day partitions, the key as primary key, no index on `id`: three indexes) took a
 * writer's 50-row batches from 114-121 to 84-92 µs of router CPU a row on the embedded database (same
 * throwaway method, two runs each, alternated).
 */
const INSERT_SQL = `insert into audit_log (writer_id, writer_seq, at, request_id, trace_id, client, subject, operation_name,
    operation_hash, subgraphs, status, duration_ms, error_codes, complete, detail)
  select $15::uuid, u.writer_seq, u.at, u.request_id, u.trace_id, u.client, u.subject, u.operation_name,
    u.operation_hash, coalesce(u.subgraphs::text[], '{}'), u.status, u.duration_ms, coalesce(u.error_codes::text[], '{}'), u.complete, u.detail::jsonb
  from unnest($1::text[], $2::bigint[], $3::timestamptz[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
      $9::text[], $10::integer[], $11::double precision[], $12::text[], $13::boolean[], $14::text[]) with ordinality
    as u(request_id, writer_seq, at, trace_id, client, subject, operation_name, operation_hash, subgraphs, status, duration_ms, error_codes, complete, detail, n)
  order by u.n
  on conflict (writer_id, writer_seq, at) do nothing`;

/** The fields behind $1 to $14, in order; the two text[] columns travel as text, one array literal per row, and `detail` as its JSON text. */
const INSERT_FIELDS = ['request_id', 'writer_seq', 'at', 'trace_id', 'client', 'subject', 'operation_name', 'operation_hash', 'subgraphs', 'status', 'duration_ms', 'error_codes', 'complete', 'detail'] as const;
const ARRAY_FIELDS: ReadonlySet<string> = new Set(['subgraphs', 'error_codes']);

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

/**
 * Inserts rows, one statement per run of one writer's rows (a batch holds one writer's, unless a spill
 * file was pieced together by hand); returns the rows inserted. Throws what looks like an outage; rows
 * the database refuses (SQLSTATE 22/23) are isolated one by one and handed to `setAside`, as their
 * spill line when there is one, so one bad row can neither block the queue nor be mistaken for an outage.
 */
export async function insertAuditRows(
  db: Queryable,
  rows: readonly StoredRow[],
  lines: readonly string[] | undefined,
  setAside: (lines: readonly string[], reason: string) => void,
): Promise<number> {
  async function insertRun(run: readonly StoredRow[], runLines: readonly string[] | undefined): Promise<number> {
    try {
      const result = await db.query(INSERT_SQL, insertParams(run));
      return result.rowCount ?? 0;
    } catch (error) {
      if (!isDataError(error)) throw error;
      if (run.length === 1) {
        setAside([runLines?.[0] ?? JSON.stringify(run[0])], `the database refused the row: ${error instanceof Error ? error.message : String(error)}`);
        return 0;
      }
      // One bad row fails the whole statement: write them one by one so the others still land, in order.
      let inserted = 0;
      for (let i = 0; i < run.length; i += 1) inserted += await insertRun([run[i]], runLines && [runLines[i]]);
      return inserted;
    }
  }

  let inserted = 0;
  for (let start = 0, end = 0; start < rows.length; start = end) {
    for (end = start + 1; end < rows.length && rows[end].writer_id === rows[start].writer_id; end += 1);
    inserted += await insertRun(rows.slice(start, end), lines?.slice(start, end));
  }
  return inserted;
}

/** Whether the database answers (`select 1`); never throws. The writer probes with it during an outage. */
export async function pingAuditStore(db: Queryable): Promise<boolean> {
  try {
    await db.query('select 1');
    return true;
  } catch {
    return false;
  }
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
