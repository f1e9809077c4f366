// Configuration as code: the registry's live configuration read as one document (`config export`), and a document applied in one transaction (`config apply`).
import { writeAuditNote } from './audit-store.js';
import { listCacheRules, removeCacheRule, setCacheRule } from './cache-store.js';
import { changeLines, countChanges, diffConfig, type ChangeCounts, type ConfigChange, type ConfigDiff } from './config-diff.js';
import { compareText, CONFIG_FORMAT_VERSION, type ConfigDocument, type ManifestReference } from './config-document.js';
import type { Database, Queryable } from './database.js';
import { grantPermission, listPermissions, revokePermission } from './permission-store.js';
import { listPolicies, POLICY_LIMITS, removePolicy, setPolicy, type PolicyLimits } from './policy-store.js';
import { listSubgraphs, lockRegistryWrites, updateSubgraphRoute } from './subgraph-store.js';
import { removeTrustedDocuments } from './trusted-documents.js';

/** What an audit row of an apply is filed under, where a request's operation name goes (`switchyard audit --operation 'config apply'`). */
export const CONFIG_APPLY_ACTION = 'config apply';

/** Change lines an audit row keeps; beyond them it says how many more (a prune may remove thousands of documents). */
const AUDITED_LINES = 200;

/** A file that is valid but cannot be applied to this registry as it is (an unpublished subgraph or document): nothing was changed. */
export class ConfigNotApplicableError extends Error {
  constructor(
    readonly problems: readonly string[],
    readonly diff: ConfigDiff,
  ) {
    super([`the configuration cannot be applied (${problems.length} problem${problems.length === 1 ? '' : 's'}); nothing was changed:`, ...problems.map((p) => `  ${p}`)].join('\n'));
    this.name = 'ConfigNotApplicableError';
  }
}

const sortedEntries = <T>(entries: Iterable<[string, T]>): Record<string, T> => Object.fromEntries([...entries].sort(([a], [b]) => compareText(a, b)));

/** The trusted documents by manifest, ids only: the table is read without the bodies. */
async function listManifests(db: Queryable): Promise<ManifestReference[]> {
  const { rows } = await db.query<{ id: string; client_name: string; client_version: string }>('select id, client_name, client_version from trusted_documents');
  const byManifest = new Map<string, ManifestReference>();
  for (const row of rows) {
    const key = JSON.stringify([row.client_name, row.client_version]);
    let manifest = byManifest.get(key);
    if (!manifest) byManifest.set(key, (manifest = { client: row.client_name, version: row.client_version, documents: [] }));
    manifest.documents.push(row.id);
  }
  for (const manifest of byManifest.values()) manifest.documents.sort(compareText);
  return [...byManifest.values()].sort((a, b) => compareText(a.client, b.client) || compareText(a.version, b.version));
}

/**
 * The live configuration, every section, in the one order export writes (code-unit order, the same
 * on every database). Times (`updatedAt`) are left out: exporting twice gives the same file.
 */
export async function readLiveConfig(db: Queryable): Promise<ConfigDocument> {
  // One after the other: inside a transaction `db` is one connection, which runs one query at a time.
  const subgraphs = await listSubgraphs(db);
  const policies = await listPolicies(db);
  const permissions = await listPermissions(db);
  const cacheRules = await listCacheRules(db);
  const trustedDocuments = await listManifests(db);
  const principals = new Map<string, string[]>();
  for (const { coordinate, principal } of permissions) principals.set(coordinate, [...(principals.get(coordinate) ?? []), principal]);
  return {
    version: CONFIG_FORMAT_VERSION,
    subgraphs: sortedEntries(subgraphs.map(({ name, url, route }) => [name, Object.keys(route).length > 0 ? { url, route } : { url }])),
    policies: sortedEntries(policies.map(({ operationName, updatedAt: _updatedAt, ...limits }) => [operationName, limits])),
    permissions: sortedEntries([...principals].map(([coordinate, list]) => [coordinate, list.sort(compareText)])),
    cacheRules: sortedEntries(cacheRules.map(({ coordinate, updatedAt: _updatedAt, ...rule }) => [coordinate, rule])),
    trustedDocuments,
  };
}

/** Every limit, null where the file sets none: a policy is written whole, so a limit the file leaves out is cleared. */
function wholePolicy(limits: PolicyLimits): { [K in keyof PolicyLimits]: number | null } {
  return Object.fromEntries(POLICY_LIMITS.map((key) => [key, limits[key] ?? null])) as { [K in keyof PolicyLimits]: number | null };
}

/** Writes one change through the store that owns its table (and so through that store's validation). */
async function writeChange(tx: Queryable, change: ConfigChange, desired: ConfigDocument): Promise<void> {
  // A permission's ref is [coordinate, principal]; every other item's name is its first part.
  const [name, principal] = change.ref;
  const remove = change.action === 'remove';
  switch (change.section) {
    case 'subgraphs': {
      // Only `change` reaches here: an unpublished subgraph is a problem, and subgraphs are never removed.
      const { url, route } = desired.subgraphs![name];
      await updateSubgraphRoute(tx, { name, url, route: route ?? {} });
      return;
    }
    case 'policies':
      await (remove ? removePolicy(tx, name) : setPolicy(tx, name, wholePolicy(desired.policies![name])));
      return;
    case 'permissions':
      await (remove ? revokePermission(tx, principal, name) : grantPermission(tx, principal, name));
      return;
    case 'cacheRules': {
      if (remove) {
        await removeCacheRule(tx, name);
        return;
      }
      const { maxAgeSeconds, scope, staleSeconds } = desired.cacheRules![name];
      await setCacheRule(tx, { coordinate: name, maxAgeSeconds, scope: scope ?? null, staleSeconds: staleSeconds ?? null });
      return;
    }
    case 'trustedDocuments':
      // Removals only (a missing document is a problem); they are written in one statement by applyConfig.
      return;
  }
}

export interface ApplyOptions {
  /** Remove what the file does not name, in the sections it holds. */
  prune: boolean;
  /** Compute and return the difference; change nothing, write no audit row. */
  dryRun: boolean;
  /** Who applies (the audit row's subject). */
  actor: string | null;
  /** Where the document came from (a file name), kept in the audit row. */
  source?: string;
}

export interface ApplyOutcome {
  diff: ConfigDiff;
  counts: ChangeCounts;
  /** Whether changes were written (false on a dry run, and when there was nothing to change). */
  applied: boolean;
}

function auditDetail(diff: ConfigDiff, counts: ChangeCounts, options: ApplyOptions): Record<string, unknown> {
  const lines = changeLines(diff.changes);
  const kept = lines.length > AUDITED_LINES ? [...lines.slice(0, AUDITED_LINES), `... and ${lines.length - AUDITED_LINES} more lines`] : lines;
  return { file: options.source ?? null, prune: options.prune, sections: diff.sections, ...counts, changes: kept };
}

/**
 * Applies a configuration document, all or nothing:
 * 1. In one transaction, under the registry write lock (publishes, removals and other applies wait),
 *    read the live configuration and diff the document against it.
 * 2. If the document cannot be applied (problems), throw ConfigNotApplicableError: nothing is written.
 * 3. Write each change through its table's store, then one audit row (`config apply`, the actor, the
 *    counts and the change lines), and commit. The tables' triggers bump their topics, so every
 *    router reloads them within a second, all changes at once (they commit together).
 * A dry run does steps 1 and 2 without the lock and writes nothing.
 */
export async function applyConfig(db: Database, desired: ConfigDocument, options: ApplyOptions): Promise<ApplyOutcome> {
  if (options.dryRun) {
    const diff = diffConfig(await readLiveConfig(db), desired, options);
    if (diff.problems.length > 0) throw new ConfigNotApplicableError(diff.problems, diff);
    return { diff, counts: countChanges(diff.changes), applied: false };
  }
  return db.transaction(async (tx) => {
    await lockRegistryWrites(tx);
    const diff = diffConfig(await readLiveConfig(tx), desired, options);
    if (diff.problems.length > 0) throw new ConfigNotApplicableError(diff.problems, diff);
    const counts = countChanges(diff.changes);
    for (const change of diff.changes) await writeChange(tx, change, desired);
    await removeTrustedDocuments(
      tx,
      diff.changes.filter((c) => c.section === 'trustedDocuments' && c.action === 'remove').map((c) => c.ref[0]),
    );
    const subgraphs = diff.changes.filter((c) => c.section === 'subgraphs').map((c) => c.ref[0]);
    await writeAuditNote(tx, { action: CONFIG_APPLY_ACTION, subject: options.actor, codes: [], subgraphs, detail: auditDetail(diff, counts, options) });
    return { diff, counts, applied: diff.changes.length > 0 };
  });
}
