// CLI commands on the registry: subgraph publish/list/remove, supergraph.
import { readFile } from 'node:fs/promises';
import { composeSupergraph } from '../gateway/compose.js';
import type { Database } from '../registry/database.js';
import { CliError } from './cli-kit.js';
import { listSubgraphs, publishSubgraph, removeSubgraph } from '../registry/subgraph-store.js';
import type { RouteMetadata } from '../registry/route.js';

/** Asks a running subgraph for its SDL through the federation `_service` field. */
export async function fetchServiceSdl(url: string, signal: AbortSignal = AbortSignal.timeout(10_000)): Promise<string> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query: '{ _service { sdl } }' }),
      signal,
    });
  } catch (error) {
    throw new CliError(`cannot reach ${url} to read its schema (${(error as Error).message}); pass --schema FILE instead`);
  }
  const body = (await response.json().catch(() => undefined)) as { data?: { _service?: { sdl?: string } }; errors?: { message: string }[] } | undefined;
  const sdl = body?.data?._service?.sdl;
  if (!response.ok || typeof sdl !== 'string') {
    const why = body?.errors?.map((e) => e.message).join('; ') ?? `HTTP ${response.status}`;
    throw new CliError(`${url} did not return its schema through { _service { sdl } } (${why}); pass --schema FILE instead`);
  }
  return sdl;
}

export const compositionCheck = (subgraphs: { name: string; url: string; sdl: string }[]) => composeSupergraph(subgraphs);

export interface PublishOptions {
  name: string;
  url: string;
  schemaFile?: string;
  /** The SDL itself, already read (by the check that runs before a publish); wins over `schemaFile`. */
  sdl?: string;
  route?: RouteMetadata;
}

export async function publish(db: Database, options: PublishOptions): Promise<{ changed: boolean }> {
  const sdl = options.sdl ?? (options.schemaFile ? await readFile(options.schemaFile, 'utf8').catch((e: Error) => {
    throw new CliError(`cannot read ${options.schemaFile}: ${e.message}`);
  }) : await fetchServiceSdl(options.url));
  const { changed } = await publishSubgraph(db, { name: options.name, url: options.url, sdl, route: options.route }, compositionCheck);
  return { changed };
}


export async function listCommand(db: Database, json: boolean): Promise<string> {
  const subgraphs = await listSubgraphs(db);
  if (json) return JSON.stringify(subgraphs.map(({ name, url, route, updatedAt }) => ({ name, url, route, updatedAt })), null, 2);
  if (subgraphs.length === 0) return 'no subgraph is registered';
  const width = Math.max(4, ...subgraphs.map((s) => s.name.length));
  return [`${'NAME'.padEnd(width)}  URL`, ...subgraphs.map((s) => `${s.name.padEnd(width)}  ${s.url}${Object.keys(s.route).length ? `  ${JSON.stringify(s.route)}` : ''}`)].join('\n');
}

export async function removeCommand(db: Database, name: string): Promise<void> {
  const removed = await removeSubgraph(db, name, compositionCheck);
  if (!removed) throw new CliError(`no subgraph named "${name}" is registered`);
}

export async function supergraphCommand(db: Database): Promise<string> {
  const subgraphs = await listSubgraphs(db);
  const outcome = composeSupergraph(subgraphs);
  if (!outcome.ok) throw new CliError(['the registered subgraphs do not compose:', ...outcome.errors.map((e) => `  [${e.code}] ${e.message}`)].join('\n'));
  return outcome.supergraphSdl;
}
