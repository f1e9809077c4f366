// CLI commands on the operation registry: operations list, subgraph check, and the check that guards subgraph publish.
import { readFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import type { Database } from '../registry/database.js';
import { listOperations, type OperationRecord } from '../registry/operation-log.js';
import { listSubgraphs } from '../registry/subgraph-store.js';
import { writeAuditNote } from '../registry/audit-log.js';
import { checkSchemaChange, type SchemaCheckResult } from '../gateway/schema-check.js';
import { CliError, fetchServiceSdl } from './registry-commands.js';

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
        throw new CliError(`cannot read ${options.schemaFile}: ${error.message}`, 2);
      })
    : await fetchServiceSdl(url).catch((error: Error) => {
        throw new CliError(error.message, 2);
      });
  const operations = await listOperations(db, { since: options.since });
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
      brokenOperations: result.broken.map(({ operation, problems }) => ({
        name: operation.operationName,
        client: operation.clientName,
        version: operation.clientVersion,
        hash: operation.hash,
        lastSeen: operation.lastSeen,
        count: operation.count,
        document: operation.normalised,
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
  if (result.broken.length === 0) {
    lines.push(`No operation seen since ${since.toISOString()} breaks (${result.operationsChecked} checked).`);
    if (result.changes.some((c) => c.level === 'breaking')) lines.push('The breaking changes above touch nothing clients used in that window: allowed.');
    return lines.join('\n');
  }
  lines.push(`Operations seen since ${since.toISOString()} that would break (${result.broken.length} of ${result.operationsChecked}):`);
  for (const { operation, problems } of result.broken) {
    lines.push(`  ${operation.operationName ?? '(anonymous)'}  client ${clientOf(operation)}  last seen ${operation.lastSeen.toISOString()}  count ${operation.count}  hash ${operation.hash.slice(0, 12)}`);
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
  const { result, sdl, url } = await runCheck(db, options);
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
