// Row shaping for the audit log: what the router records about a request (AuditEntry) and the row it becomes, in the table and in a spill line.

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
  /**
   * What else the row says, as JSON (column `detail`): a subscription's rows carry
   * `{ subscription: { event: "start" | "end", events, endReason } }`. Default none.
   */
  detail?: Record<string, unknown> | null;
}

/** One row as stored: its JSON is a spill line, and the INSERT takes it field by field. */
export type StoredRow = Record<string, unknown> & { writer_id: string; writer_seq: number };

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

function usableTime(value: unknown): number | undefined {
  const ms = value instanceof Date ? value.getTime() : typeof value === 'number' ? value : typeof value === 'string' ? Date.parse(value) : Number.NaN;
  return ms >= MIN_AT && ms <= MAX_AT ? ms : undefined;
}

/**
 * The entry's time as ISO text. An unusable one becomes the time the row is first shaped (that beats
 * losing the row), written back on the entry, which the writer owns: `at` is part of the row's key
 * (migration 011), so the row and a later spill line of the same entry must carry the same time.
 */
function isoTime(entry: AuditEntry): string {
  const ms = usableTime(entry.at);
  if (ms !== undefined) return new Date(ms).toISOString();
  const now = new Date();
  try {
    entry.at = now;
  } catch {
    // A frozen entry: the row still lands; only a replay of it could then repeat it under another time.
  }
  return now.toISOString();
}

/**
 * An entry as one row, keyed by (writer id, sequence number, time) and with its values made acceptable to
 * the table's types: the same values go into the INSERT and, as JSON, into the spill file.
 */
export function toRow(entry: AuditEntry, writerId: string, seq: number): StoredRow {
  try {
    return toRecord(entry, writerId, seq);
  } catch {
    // Only an entry built to throw (a getter, a toString) gets here: keep that a request happened.
    return toRecord({ at: new Date(), requestId: '', subgraphs: [], status: 0, durationMs: 0, errorCodes: [], complete: false }, writerId, seq);
  }
}

/** An entry as one spill line. */
export function toLine(entry: AuditEntry, writerId: string, seq: number): string {
  return JSON.stringify(toRow(entry, writerId, seq));
}

function toRecord(entry: AuditEntry, writerId: string, seq: number): StoredRow {
  const status = Math.trunc(Number(entry.status));
  const durationMs = Number(entry.durationMs);
  return {
    writer_id: writerId,
    writer_seq: seq,
    at: isoTime(entry),
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
    detail: entry.detail && typeof entry.detail === 'object' ? entry.detail : null,
  };
}

/** A spill line this version can replay: a JSON object carrying its key. */
export function isReplayable(line: string): boolean {
  try {
    const row = JSON.parse(line) as { writer_id?: unknown; writer_seq?: unknown } | null;
    return typeof row === 'object' && row !== null && typeof row.writer_id === 'string' && Number.isSafeInteger(row.writer_seq);
  } catch {
    return false;
  }
}
