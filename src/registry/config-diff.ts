// The difference between the registry's live configuration and a file: what `config apply` adds, changes, removes or refuses, and how it reads. Section by section, through their descriptors.
import { assertNever } from '../errors/assert-never.js';
import { sectionValue, type ConfigDocument } from './config-document.js';
import { compareText, itemKey, type ChangeAction, type ComparedItem, type ConfigSectionDescriptor, type FieldChange, type SectionChange, type SectionList } from './config-sections/section.js';
import { SECTIONS } from './config-sections/sections.js';

export type { ChangeAction, FieldChange };

/** One change to one item: `section` is the section's name, `ref` what names the item in it (its descriptor's `items`). */
export type ConfigChange = SectionChange;

/** An item the registry holds and the file does not name, which apply leaves as it is. */
export interface LeftAlone {
  section: string;
  ref: readonly string[];
  /** `not-named`: the file does not name it (`--prune` would remove it); `never-pruned`: apply never removes it (subgraphs). */
  why: 'not-named' | 'never-pruned';
}

export interface ConfigDiff {
  /** Sections, then items, in a fixed order. */
  changes: ConfigChange[];
  leftAlone: LeftAlone[];
  /** Why the file cannot be applied to this registry as it is (an unpublished subgraph or document); empty when it can. */
  problems: string[];
  /** The sections the file manages: those it holds. */
  sections: string[];
}

export interface DiffOptions {
  /** Remove what the file does not name, in the sections it holds (never a section's `neverPruned` items). */
  prune: boolean;
  /** The sections compared (default: every section of the file format); a test passes its own. */
  sections?: SectionList;
}

/**
 * Object leaves by dotted path (`route.breaker.failureRatio`); arrays and scalars are leaves,
 * compared by their JSON; undefined and null are "not set" and left out.
 */
function flatten(value: Record<string, unknown>, prefix = '', into = new Map<string, unknown>()): Map<string, unknown> {
  for (const [key, leaf] of Object.entries(value)) {
    if (leaf === undefined || leaf === null) continue;
    if (typeof leaf === 'object' && !Array.isArray(leaf)) flatten(leaf as Record<string, unknown>, `${prefix}${key}.`, into);
    else into.set(`${prefix}${key}`, leaf);
  }
  return into;
}

/** The items of one section of a document, by their diff key. */
function itemsOf(document: ConfigDocument, section: ConfigSectionDescriptor): Map<string, ComparedItem> {
  const value = sectionValue(document, section.name);
  const items = new Map<string, ComparedItem>();
  if (value === undefined) return items;
  for (const { ref, fields } of section.items(value)) items.set(itemKey(ref), { ref, fields: flatten(fields) });
  return items;
}

const sameValue = (a: unknown, b: unknown) => a === b || (a !== undefined && b !== undefined && JSON.stringify(a) === JSON.stringify(b));

/** The fields that differ between two versions of an item, in the order the file gives them, then the rest. */
function fieldChanges(from: ReadonlyMap<string, unknown>, to: ReadonlyMap<string, unknown>): FieldChange[] {
  const names = [...new Set([...to.keys(), ...from.keys()])];
  return names.filter((name) => !sameValue(from.get(name), to.get(name))).map((field) => ({ field, from: from.get(field), to: to.get(field) }));
}

const allFields = (fields: ReadonlyMap<string, unknown>, side: 'from' | 'to'): FieldChange[] => [...fields].map(([field, value]) => ({ field, [side]: value }));

/** One section's part of the diff (step 2 of diffConfig), added to `diff`. */
function diffSection(diff: ConfigDiff, section: ConfigSectionDescriptor, current: ConfigDocument, desired: ConfigDocument, prune: boolean): void {
  const before = itemsOf(current, section);
  const after = itemsOf(desired, section);
  const changes: ConfigChange[] = [];
  const name = section.name;
  for (const key of [...new Set([...before.keys(), ...after.keys()])].sort(compareText)) {
    const from = before.get(key);
    const to = after.get(key);
    if (to && !from) changes.push({ section: name, ref: to.ref, action: 'add', fields: allFields(to.fields, 'to') });
    else if (to && from) {
      const fields = fieldChanges(from.fields, to.fields);
      if (fields.length > 0) changes.push({ section: name, ref: to.ref, action: 'change', fields });
    } else if (from) {
      if (section.neverPruned !== undefined) diff.leftAlone.push({ section: name, ref: from.ref, why: 'never-pruned' });
      else if (prune) changes.push({ section: name, ref: from.ref, action: 'remove', fields: allFields(from.fields, 'from') });
      else diff.leftAlone.push({ section: name, ref: from.ref, why: 'not-named' });
    }
  }
  diff.problems.push(...(section.problems?.(changes, before, after) ?? []));
  diff.changes.push(...changes);
}

/**
 * The difference between `current` (the registry, every section) and `desired` (a file):
 * 1. Only the sections the file holds are compared; the others are not the file's to manage.
 * 2. An item in the file and not in the registry is added; in both but different, changed (the file
 *    describes each item whole: a field it leaves out is cleared); in the registry only, removed with
 *    `prune`, else left alone. A section's `neverPruned` items (subgraphs: their schema owners remove
 *    them) are only ever left alone.
 * 3. What apply cannot do by itself becomes a problem, as each section's `problems` says: a subgraph
 *    that is not published (apply sets URLs and routes, never SDL) and a trusted document the registry
 *    does not hold under that manifest (the file names documents, it does not hold their bodies).
 */
export function diffConfig(current: ConfigDocument, desired: ConfigDocument, options: DiffOptions): ConfigDiff {
  const managed = (options.sections ?? SECTIONS).filter((section) => sectionValue(desired, section.name) !== undefined);
  const diff: ConfigDiff = { changes: [], leftAlone: [], problems: [], sections: managed.map((section) => section.name) };
  for (const section of managed) diffSection(diff, section, current, desired, options.prune);
  return diff;
}

export interface ChangeCounts {
  added: number;
  changed: number;
  removed: number;
}

export function countChanges(changes: readonly ConfigChange[]): ChangeCounts {
  return {
    added: changes.filter((c) => c.action === 'add').length,
    changed: changes.filter((c) => c.action === 'change').length,
    removed: changes.filter((c) => c.action === 'remove').length,
  };
}

const SIGNS: Record<ChangeAction, string> = { add: '+', change: '~', remove: '-' };

/** A value as the diff shows it: numbers and booleans as they are, text and lists as JSON. */
function shown(value: unknown): string {
  if (value === undefined) return '(not set)';
  return typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value);
}

function sectionNamed(sections: SectionList, name: string): ConfigSectionDescriptor {
  const section = sections.find((s) => s.name === name);
  if (!section) throw new Error(`no configuration section is called ${JSON.stringify(name)}`);
  return section;
}

const describeIn = (section: ConfigSectionDescriptor, ref: readonly string[]) => section.describe?.(ref) ?? `${section.noun} ${ref.join(' ')}`;

/** `policy ProductPage`, `permission Review.body: scope:reviews:read`. */
export function describeItem(section: string, ref: readonly string[], sections: SectionList = SECTIONS): string {
  return describeIn(sectionNamed(sections, section), ref);
}

/** The lines of one change, unless its section says otherwise: added and removed items on one line, changed ones field by field. */
function defaultChangeLines(section: ConfigSectionDescriptor, change: ConfigChange): string[] {
  const head = `${SIGNS[change.action]} ${describeIn(section, change.ref)}`;
  switch (change.action) {
    case 'change':
      return [head, ...change.fields.map(({ field, from, to }) => `    ${field}: ${shown(from)} → ${shown(to)}`)];
    case 'add':
    case 'remove': {
      const side = change.action === 'add' ? 'to' : 'from';
      const fields = change.fields.map((f) => `${f.field}: ${shown(f[side])}`).join(', ');
      return [fields ? `${head}  (${fields})` : head];
    }
    default:
      return assertNever(change.action, 'change action');
  }
}

/** One line per change (more for a changed item: one per field), section by section, as `config apply` shows them and the audit row keeps them. */
export function changeLines(changes: readonly ConfigChange[], sections: SectionList = SECTIONS): string[] {
  return sections.flatMap((section) => {
    const own = changes.filter((change) => change.section === section.name);
    if (own.length === 0) return [];
    return section.changeLines ? section.changeLines(own) : own.flatMap((change) => defaultChangeLines(section, change));
  });
}

/** What apply leaves as it is, one line per reason, items grouped by section (as each section summarises them: trusted documents are counted). */
function leftAloneLines(leftAlone: readonly LeftAlone[], sections: SectionList): string[] {
  const summary = (items: readonly LeftAlone[]) =>
    sections
      .flatMap((section) => {
        const refs = items.filter((item) => item.section === section.name).map((item) => item.ref);
        if (refs.length === 0) return [];
        return section.leftAloneSummary ? section.leftAloneSummary(refs) : refs.map((ref) => describeIn(section, ref));
      })
      .join('; ');
  const lines: string[] = [];
  const notNamed = leftAlone.filter((item) => item.why === 'not-named');
  if (notNamed.length > 0) lines.push(`left alone, not in the file (--prune removes them): ${summary(notNamed)}`);
  for (const section of sections) {
    const neverPruned = leftAlone.filter((item) => item.why === 'never-pruned' && item.section === section.name);
    if (neverPruned.length > 0) lines.push(`left alone, not in the file (${section.neverPruned}): ${summary(neverPruned)}`);
  }
  return lines;
}

/** The whole difference as `config apply` prints it: changes, what is left alone, sections not managed, counts. */
export function formatDiff(diff: ConfigDiff, sections: SectionList = SECTIONS): string {
  const { added, changed, removed } = countChanges(diff.changes);
  const unmanaged = sections.filter((section) => !diff.sections.includes(section.name)).map((section) => section.name);
  return [
    ...changeLines(diff.changes, sections),
    ...leftAloneLines(diff.leftAlone, sections),
    ...(unmanaged.length > 0 ? [`not in the file, so not managed by it: ${unmanaged.join(', ')}`] : []),
    diff.changes.length === 0 ? 'no changes' : `${added} to add, ${changed} to change, ${removed} to remove`,
  ].join('\n');
}
