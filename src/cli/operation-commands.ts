// CLI commands on the operation registry: operations list, subgraph check, and the check that guards subgraph publish.
import { readFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import type { Database } from '../registry/database.js';
import { listOperations, type OperationRecord } from '../registry/operation-log.js';
import { listSubgraphs } from '../registry/subgraph-store.js';
import { writeAuditNote } from '../registry/audit-store.js';
import { InvalidManifestError, listTrustedDocuments, publishTrustedDocuments, type TrustedDocumentInput } from '../registry/trusted-documents.js';
import { checkSchemaChange, type SchemaCheckResult } from '../gateway/schema-check.js';
import { CliError } from './cli-kit.js';
import { fetchServiceSdl } from './registry-commands.js';

const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/** `7d`, `24h`, `30m`, `2w`, or an ISO 8601 time: the start of the window. Bad input is exit 2. */
export function parseSince(value: string, now = Date.now()): Date {
  const relative = /^(\d+)([mhdw])$/.exec(value.trim());
  if (relative) return new Date(now - Number(relative[1]) * UNITS[relative[2]]);
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) throw new CliError(`--since must be a duration like 7d, 24h, 30m or a time like 2026-11-29T20:00:00Z (got "${value}")`, 2);
  return at;
}

function clientOf(record: { clientName: string; clientVersion: string }): string {
  const name = record.clientName || '(unknown client)';
  return record.clientVersion ? `${name} ${record.clientVersion}` : name;
}

export async function operationsListCommand(db: Database, options: { since: Date; client?: string; json: boolean }): Promise<string> {
  const records = await listOperations(db, { since: options.since, client: options.client });
  if (options.json) return JSON.stringify(records, null, 2);
  if (records.length === 0) return `no operation seen since ${options.since.toISOString()}${options.client ? ` from client ${options.client}` : ''}`;
  const rows = records.map((r: OperationRecord) => [r.operationName ?? '(anonymous)', r.operationType, clientOf(r), String(r.count), r.lastSeen.toISOString(), r.hash.slice(0, 12)]);
  const header = ['OPERATION', 'TYPE', 'CLIENT', 'COUNT', 'LAST SEEN', 'HASH'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  return [header, ...rows].map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]))).join('  ')).join('\n');
}

export interface CheckOptions {
  name: string;
  schemaFile?: string;
  url?: string;
  since: Date;
  /** Exit code when the SDL cannot be read. Default 2 (bad input); a publish keeps its historical 1. */
  unreadableExitCode?: number;
}

export interface CheckOutcome {
  result: SchemaCheckResult;
  /** The SDL checked (published as is by `subgraph publish`). */
  sdl: string;
  url: string;
}

/** Reads the candidate SDL (file, else the subgraph's `_service`), then checks it against the registry and the operations seen since `since`. */
export async function runCheck(db: Database, options: CheckOptions): Promise<CheckOutcome> {
  if (!options.schemaFile && !options.url) throw new CliError('give the candidate schema with --schema FILE or --url URL', 2);
  const current = await listSubgraphs(db);
  const url = options.url ?? current.find((s) => s.name === options.name)?.url ?? 'http://candidate.invalid/graphql';
  const sdl = options.schemaFile
    ? await readFile(options.schemaFile, 'utf8').catch((error: Error) => {
        throw new CliError(`cannot read ${options.schemaFile}: ${error.message}`, options.unreadableExitCode ?? 2);
      })
    : await fetchServiceSdl(url).catch((error: Error) => {
        throw new CliError(error.message, options.unreadableExitCode ?? 2);
      });
  // What clients sent in the window, and every trusted document (a manifest is a promise that its documents run).
  const seen = await listOperations(db, { since: options.since });
  const trusted = (await listTrustedDocuments(db)).map((doc) => ({
    hash: doc.sha256,
    normalised: doc.document,
    operationName: doc.operationName,
    clientName: doc.clientName,
    clientVersion: doc.clientVersion,
    lastSeen: doc.createdAt,
    count: 0,
    trustedDocumentId: doc.id,
  }));
  const operations = [...seen, ...trusted];
  const result = await checkSchemaChange({ current, candidate: { name: options.name, url, sdl }, operations });
  return { result, sdl, url };
}

/** Exit code of a check: 0 nothing in use breaks, 1 composition fails or an operation in use breaks. */
export function checkExitCode(result: SchemaCheckResult): number {
  return !result.composed || result.broken.length > 0 ? 1 : 0;
}

/** The check as JSON (`--json`). */
export function checkJson(name: string, since: Date, result: SchemaCheckResult): string {
  if (!result.composed) return JSON.stringify({ subgraph: name, since, ok: false, composed: false, compositionErrors: result.errors }, null, 2);
  return JSON.stringify(
    {
      subgraph: name,
      since,
      ok: result.broken.length === 0,
      composed: true,
      changes: result.changes,
      operationsChecked: result.operationsChecked,
      alreadyInvalid: result.alreadyInvalid,
      brokenOperations: result.broken.map(({ operation, problems }) => ({
        name: operation.operationName,
        client: operation.clientName,
        version: operation.clientVersion,
        hash: operation.hash,
        lastSeen: operation.lastSeen,
        count: operation.count,
        document: operation.normalised,
        ...(operation.trustedDocumentId !== undefined ? { trustedDocumentId: operation.trustedDocumentId } : {}),
        problems,
      })),
    },
    null,
    2,
  );
}

/** The check for people: each change, then each operation it breaks and why. */
export function formatCheck(name: string, since: Date, result: SchemaCheckResult): string {
  if (!result.composed) return [`check of "${name}" failed: the subgraphs would not compose (${result.errors.length} error${result.errors.length === 1 ? '' : 's'}):`, ...result.errors.map((e) => `  [${e.code}] ${e.message}`)].join('\n');
  const lines: string[] = [];
  if (result.changes.length === 0) lines.push('No change to the API schema.');
  else {
    lines.push(`Changes to the API schema (${result.changes.length}):`);
    for (const change of result.changes) lines.push(`  ${change.level.toUpperCase().padEnd(9)}  ${change.type.padEnd(28)}  ${change.message}`);
  }
  lines.push('');
  if (result.alreadyInvalid > 0) lines.push(`${result.alreadyInvalid} operation${result.alreadyInvalid === 1 ? '' : 's'} seen in the window already fail${result.alreadyInvalid === 1 ? 's' : ''} against the graph served now; not counted against this change.`);
  if (result.broken.length === 0) {
    lines.push(`No operation seen since ${since.toISOString()} breaks (${result.operationsChecked} checked).`);
    if (result.changes.some((c) => c.level === 'breaking')) lines.push('The breaking changes above touch nothing clients used in that window: allowed.');
    return lines.join('\n');
  }
  lines.push(`Operations seen since ${since.toISOString()} that would break (${result.broken.length} of ${result.operationsChecked}):`);
  for (const { operation, problems } of result.broken) {
    const seen = operation.trustedDocumentId !== undefined ? `trusted document ${operation.trustedDocumentId}, published ${operation.lastSeen.toISOString()}` : `last seen ${operation.lastSeen.toISOString()}  count ${operation.count}`;
    lines.push(`  ${operation.operationName ?? '(anonymous)'}  client ${clientOf(operation)}  ${seen}  hash ${operation.hash.slice(0, 12)}`);
    for (const problem of problems) {
      const where = problem.locations.map((l) => `line ${l.line}, column ${l.column}`).join('; ');
      lines.push(`    - ${problem.message}${where ? ` (${where})` : ''}`);
    }
  }
  return lines.join('\n');
}

/**
 * Before a publish: refuses (exit 1, nothing stored) when an operation in use would break, unless
 * `force`; a forced publish that breaks operations leaves an audit row naming them. Composition errors
 * are left to the publish itself, which refuses them as it always has. Returns the checked SDL and,
 * when forced past broken operations, the audit note to write once the publish succeeded.
 */
export async function guardPublish(db: Database, options: CheckOptions & { force: boolean }): Promise<{ sdl: string; afterPublish?: () => Promise<void> }> {
  const { result, sdl, url } = await runCheck(db, { unreadableExitCode: 1, ...options });
  if (!result.composed || result.broken.length === 0) return { sdl };
  if (!options.force) {
    throw new CliError(
      [`publish of "${options.name}" refused: operations in use would break (publish with --force to override; it is audited)`, '', formatCheck(options.name, options.since, result)].join('\n'),
      1,
    );
  }
  const broken = result.broken;
  return {
    sdl,
    afterPublish: () =>
      writeAuditNote(db, {
        action: 'subgraph publish --force',
        subject: safeUser(),
        codes: ['BREAKING_CHANGE_FORCED'],
        subgraphs: [options.name],
        detail: {
          subgraph: options.name,
          url,
          since: options.since,
          changes: result.changes.filter((c) => c.level === 'breaking'),
          brokenOperations: broken.map(({ operation, problems }) => ({
            name: operation.operationName,
            client: operation.clientName,
            version: operation.clientVersion,
            hash: operation.hash,
            count: operation.count,
            problems: problems.map((p) => p.message),
          })),
        },
      }),
  };
}

function safeUser(): string | null {
  try {
    return userInfo().username;
  } catch {
    return null;
  }
}

/**
 * A manifest's documents, in either format client build tools write:
 * - Apollo's persisted query manifest: `{"format":"apollo-persisted-query-manifest","version":1,"operations":[{"id","name","type","body"}]}`;
 * - Relay's persisted queries: `{"<id>": "<document>", ...}`.
 */
function parseManifest(text: string): TrustedDocumentInput[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new InvalidManifestError(`the manifest is not JSON: ${(error as Error).message}`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new InvalidManifestError('the manifest must be a JSON object (Apollo persisted query manifest or Relay format)');
  const object = json as Record<string, unknown>;
  if (object.format === 'apollo-persisted-query-manifest') {
    if (object.version !== 1) throw new InvalidManifestError(`unsupported Apollo manifest version ${JSON.stringify(object.version)} (1 is supported)`);
    if (!Array.isArray(object.operations)) throw new InvalidManifestError('an Apollo manifest needs an "operations" array');
    return object.operations.map((operation: unknown, index) => {
      const { id, body } = (operation ?? {}) as { id?: unknown; body?: unknown };
      if (typeof id !== 'string' || typeof body !== 'string') throw new InvalidManifestError(`operations[${index}] needs a string "id" and "body"`);
      return { id, body };
    });
  }
  const entries = Object.entries(object);
  const bad = entries.find(([, body]) => typeof body !== 'string');
  if (bad) throw new InvalidManifestError(`not an Apollo manifest, and not a Relay one: the value of "${bad[0]}" is not a document string`);
  return entries.map(([id, body]) => ({ id, body: body as string }));
}

export async function operationsPublishCommand(db: Database, options: { file: string; clientName: string; clientVersion: string }): Promise<string> {
  const text = await readFile(options.file, 'utf8').catch((error: Error) => {
    throw new CliError(`cannot read ${options.file}: ${error.message}`, 2);
  });
  const documents = parseManifest(text);
  const { added, known } = await publishTrustedDocuments(db, { clientName: options.clientName, clientVersion: options.clientVersion, documents });
  return `published ${documents.length} document${documents.length === 1 ? '' : 's'} for ${options.clientName}${options.clientVersion ? ` ${options.clientVersion}` : ''} (${added} new, ${known} already registered); live on every router within a second`;
}
