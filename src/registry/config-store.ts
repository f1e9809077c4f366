// Configuration as code: the registry's live configuration read as one document (`config export`), and a document applied in one transaction (`config apply`).
import { writeAuditNote } from './audit-store.js';
import { changeLines, countChanges, diffConfig, type ChangeCounts, type ConfigDiff, type DiffOptions } from './config-diff.js';
import { CONFIG_FORMAT_VERSION, sectionValue, type ConfigDocument } from './config-document.js';
import type { SectionList } from './config-sections/section.js';
import { SECTIONS } from './config-sections/sections.js';
import { subgraphsSection } from './config-sections/subgraphs.js';
import type { Database, Queryable } from './database.js';
import { lockRegistryWrites } from './subgraph-store.js';

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

/**
 * The live configuration, every section, each read by its descriptor in the one form export writes
 * (code-unit order, the same on every database). Times (`updatedAt`) are left out: exporting twice
 * gives the same file.
 */
export async function readLiveConfig(db: Queryable, sections: SectionList = SECTIONS): Promise<ConfigDocument> {
  const document: Record<string, unknown> = { version: CONFIG_FORMAT_VERSION };
  // One after the other: inside a transaction `db` is one connection, which runs one query at a time.
  for (const section of sections) document[section.name] = await section.export(db);
  return document as ConfigDocument;
}

/** Writes each section's changes through its descriptor (and so through the store that owns the table), in the sections' order. */
async function writeChanges(tx: Queryable, diff: ConfigDiff, desired: ConfigDocument, sections: SectionList): Promise<void> {
  for (const section of sections) {
    const changes = diff.changes.filter((change) => change.section === section.name);
    if (changes.length > 0) await section.apply(tx, changes, sectionValue(desired, section.name));
  }
}

export interface ApplyOptions extends DiffOptions {
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
  const lines = changeLines(diff.changes, options.sections);
  const kept = lines.length > AUDITED_LINES ? [...lines.slice(0, AUDITED_LINES), `... and ${lines.length - AUDITED_LINES} more lines`] : lines;
  return { file: options.source ?? null, prune: options.prune, sections: diff.sections, ...counts, changes: kept };
}

/**
 * Applies a configuration document, all or nothing:
 * 1. In one transaction, under the registry write lock (publishes, removals and other applies wait),
 *    read the live configuration and diff the document against it.
 * 2. If the document cannot be applied (problems), throw ConfigNotApplicableError: nothing is written.
 * 3. Write each section's changes through its descriptor (its table's store), then one audit row (`config apply`, the actor, the
 *    counts and the change lines), and commit. The tables' triggers bump their topics, so every
 *    router reloads them within a second, all changes at once (they commit together).
 * A dry run does steps 1 and 2 without the lock and writes nothing.
 */
export async function applyConfig(db: Database, desired: ConfigDocument, options: ApplyOptions): Promise<ApplyOutcome> {
  const sections = options.sections ?? SECTIONS;
  if (options.dryRun) {
    const diff = diffConfig(await readLiveConfig(db, sections), desired, options);
    if (diff.problems.length > 0) throw new ConfigNotApplicableError(diff.problems, diff);
    return { diff, counts: countChanges(diff.changes), applied: false };
  }
  return db.transaction(async (tx) => {
    await lockRegistryWrites(tx);
    const diff = diffConfig(await readLiveConfig(tx, sections), desired, options);
    if (diff.problems.length > 0) throw new ConfigNotApplicableError(diff.problems, diff);
    const counts = countChanges(diff.changes);
    await writeChanges(tx, diff, desired, sections);
    // The audit row's subgraphs: those whose address or route changed.
    const subgraphs = diff.changes.filter((c) => c.section === subgraphsSection.name).map((c) => c.ref[0]);
    await writeAuditNote(tx, { action: CONFIG_APPLY_ACTION, subject: options.actor, codes: [], subgraphs, detail: auditDetail(diff, counts, options) });
    return { diff, counts, applied: diff.changes.length > 0 };
  });
}
