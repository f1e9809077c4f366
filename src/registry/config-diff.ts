// The difference between the registry's live configuration and a file: what `config apply` adds, changes, removes or refuses, and how it reads.
import { compareText, CONFIG_SECTIONS, type ConfigDocument, type ConfigSection } from './config-document.js';

export type ChangeAction = 'add' | 'change' | 'remove';

/** One field of an item: `undefined` is "not set" (absent from the file, null in the table). */
export interface FieldChange {
  /** e.g. `costLimit`, `url`, `route.breaker.failureRatio`. */
  field: string;
  from?: unknown;
  to?: unknown;
}

export interface ConfigChange {
  section: ConfigSection;
  /**
   * What names the item in its section: `[name]` (subgraph, policy), `[coordinate]` (cache rule),
   * `[coordinate, principal]` (permission), `[id]` (trusted document).
   */
  ref: readonly string[];
  action: ChangeAction;
  /** For `add` and `remove`, every field the item has; for `change`, the fields that differ. */
  fields: FieldChange[];
}

/** An item the registry holds and the file does not name, which apply leaves as it is. */
export interface LeftAlone {
  section: ConfigSection;
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
  sections: ConfigSection[];
}

/** One item as the diff compares it: its ref and its fields flattened to leaves. */
interface Item {
  ref: readonly string[];
  fields: Map<string, unknown>;
  /** Shown where fields would be: a trusted document's manifest. */
  group?: string;
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

const manifestName = (client: string, version: string) => (version === '' ? client : `${client} ${version}`);

/** The items of one section of a document, by their key (the ref joined by a space, which no name holds). */
function itemsOf(document: ConfigDocument, section: ConfigSection): Map<string, Item> {
  const items = new Map<string, Item>();
  const add = (ref: string[], fields: Record<string, unknown>, group?: string) => items.set(ref.join(' '), { ref, fields: flatten(fields), group });
  switch (section) {
    case 'subgraphs':
      for (const [name, subgraph] of Object.entries(document.subgraphs ?? {})) add([name], { url: subgraph.url, route: subgraph.route ?? {} });
      break;
    case 'policies':
      for (const [name, limits] of Object.entries(document.policies ?? {})) add([name], { ...limits });
      break;
    case 'permissions':
      for (const [coordinate, principals] of Object.entries(document.permissions ?? {})) for (const principal of principals) add([coordinate, principal], {});
      break;
    case 'cacheRules':
      for (const [coordinate, rule] of Object.entries(document.cacheRules ?? {})) add([coordinate], { ...rule });
      break;
    case 'trustedDocuments':
      for (const { client, version, documents } of document.trustedDocuments ?? []) for (const id of documents) add([id], { client, version }, manifestName(client, version));
      break;
  }
  return items;
}

const sameValue = (a: unknown, b: unknown) => a === b || (a !== undefined && b !== undefined && JSON.stringify(a) === JSON.stringify(b));

/** The fields that differ between two versions of an item, in the order the file gives them, then the rest. */
function fieldChanges(from: Map<string, unknown>, to: Map<string, unknown>): FieldChange[] {
  const names = [...new Set([...to.keys(), ...from.keys()])];
  return names.filter((name) => !sameValue(from.get(name), to.get(name))).map((field) => ({ field, from: from.get(field), to: to.get(field) }));
}

const allFields = (fields: Map<string, unknown>, side: 'from' | 'to'): FieldChange[] => [...fields].map(([field, value]) => ({ field, [side]: value }));

/** What apply cannot do by itself, as one message per subgraph or manifest. */
function problemsOf(changes: readonly ConfigChange[], current: Map<string, Item>, desired: Map<string, Item>): string[] {
  const problems: string[] = [];
  for (const change of changes) {
    if (change.section === 'subgraphs' && change.action === 'add') {
      const name = change.ref[0];
      problems.push(`subgraph "${name}" is not published: publish its schema first (switchyard subgraph publish ${name} --url URL); config apply sets the URL and route of published subgraphs only`);
    }
  }
  const missing = new Map<string, string[]>();
  for (const change of changes) {
    if (change.section !== 'trustedDocuments' || change.action === 'remove') continue;
    const id = change.ref[0];
    const wanted = desired.get(id)!;
    if (change.action === 'change') {
      problems.push(`trusted document ${id} is registered for ${current.get(id)!.group}, not ${wanted.group}: an id belongs to the manifest that first published it`);
    } else {
      const ids = missing.get(wanted.group!) ?? [];
      missing.set(wanted.group!, [...ids, id]);
    }
  }
  for (const [manifest, ids] of missing) {
    problems.push(`trusted documents of ${manifest} are not published: ${ids.join(', ')} (publish the manifest with switchyard operations publish FILE --client ... --version ...; the file names documents, it does not hold them)`);
  }
  return problems;
}

/**
 * The difference between `current` (the registry, every section) and `desired` (a file):
 * 1. Only the sections the file holds are compared; the others are not the file's to manage.
 * 2. An item in the file and not in the registry is added; in both but different, changed (the file
 *    describes each item whole: a field it leaves out is cleared); in the registry only, removed with
 *    `prune`, else left alone. Subgraphs are never removed (their schema owners do that), only left alone.
 * 3. What apply cannot do by itself becomes a problem: a subgraph that is not published (apply sets
 *    URLs and routes, never SDL) and a trusted document the registry does not hold under that manifest
 *    (the file names documents, it does not hold their bodies).
 */
export function diffConfig(current: ConfigDocument, desired: ConfigDocument, options: { prune: boolean }): ConfigDiff {
  const diff: ConfigDiff = { changes: [], leftAlone: [], problems: [], sections: CONFIG_SECTIONS.filter((section) => desired[section] !== undefined) };
  for (const section of diff.sections) {
    const before = itemsOf(current, section);
    const after = itemsOf(desired, section);
    const changes: ConfigChange[] = [];
    for (const key of [...new Set([...before.keys(), ...after.keys()])].sort(compareText)) {
      const from = before.get(key);
      const to = after.get(key);
      if (to && !from) changes.push({ section, ref: to.ref, action: 'add', fields: allFields(to.fields, 'to') });
      else if (to && from) {
        const fields = fieldChanges(from.fields, to.fields);
        if (fields.length > 0) changes.push({ section, ref: to.ref, action: 'change', fields });
      } else if (from) {
        if (section === 'subgraphs') diff.leftAlone.push({ section, ref: from.ref, why: 'never-pruned' });
        else if (options.prune) changes.push({ section, ref: from.ref, action: 'remove', fields: allFields(from.fields, 'from') });
        else diff.leftAlone.push({ section, ref: from.ref, why: 'not-named' });
      }
    }
    diff.problems.push(...problemsOf(changes, before, after));
    diff.changes.push(...changes);
  }
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

const NOUNS: Record<ConfigSection, string> = {
  subgraphs: 'subgraph',
  policies: 'policy',
  permissions: 'permission',
  cacheRules: 'cache rule',
  trustedDocuments: 'trusted document',
};
const SIGNS: Record<ChangeAction, string> = { add: '+', change: '~', remove: '-' };

/** A value as the diff shows it: numbers and booleans as they are, text and lists as JSON. */
function shown(value: unknown): string {
  if (value === undefined) return '(not set)';
  return typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value);
}

/** `policy ProductPage`, `permission Review.body: scope:reviews:read`. */
export function describeItem(section: ConfigSection, ref: readonly string[]): string {
  return section === 'permissions' ? `${NOUNS[section]} ${ref[0]}: ${ref[1]}` : `${NOUNS[section]} ${ref.join(' ')}`;
}

/** Up to `max` ids, then how many more. */
function someIds(ids: readonly string[], max = 5): string {
  return ids.length <= max ? ids.join(', ') : `${ids.slice(0, max).join(', ')} and ${ids.length - max} more`;
}

/** Trusted documents to remove, one line per manifest (a manifest may hold thousands). */
function documentLines(changes: readonly ConfigChange[]): string[] {
  const byManifest = new Map<string, string[]>();
  for (const change of changes) {
    const client = change.fields.find((f) => f.field === 'client')?.from as string;
    const version = change.fields.find((f) => f.field === 'version')?.from as string;
    const manifest = manifestName(client, version);
    byManifest.set(manifest, [...(byManifest.get(manifest) ?? []), change.ref[0]]);
  }
  return [...byManifest].map(([manifest, ids]) => `- trusted documents of ${manifest}: ${ids.length} (${someIds(ids)})`);
}

/** One line per change (more for a changed item: one per field), as `config apply` shows them and the audit row keeps them. */
export function changeLines(changes: readonly ConfigChange[]): string[] {
  const lines: string[] = [];
  for (const change of changes.filter((c) => c.section !== 'trustedDocuments')) {
    const head = `${SIGNS[change.action]} ${describeItem(change.section, change.ref)}`;
    if (change.action === 'change') {
      lines.push(head, ...change.fields.map(({ field, from, to }) => `    ${field}: ${shown(from)} → ${shown(to)}`));
    } else {
      const side = change.action === 'add' ? 'to' : 'from';
      const fields = change.fields.map((f) => `${f.field}: ${shown(f[side])}`).join(', ');
      lines.push(fields ? `${head}  (${fields})` : head);
    }
  }
  return [...lines, ...documentLines(changes.filter((c) => c.section === 'trustedDocuments'))];
}

/** What apply leaves as it is, one line per reason, items grouped by section (trusted documents counted per manifest). */
function leftAloneLines(leftAlone: readonly LeftAlone[]): string[] {
  const describe = (items: readonly LeftAlone[]) => {
    const documents = items.filter((i) => i.section === 'trustedDocuments');
    const others = items.filter((i) => i.section !== 'trustedDocuments').map((i) => describeItem(i.section, i.ref));
    return [...others, ...(documents.length > 0 ? [`${documents.length} trusted document${documents.length === 1 ? '' : 's'}`] : [])].join('; ');
  };
  const lines: string[] = [];
  const notNamed = leftAlone.filter((i) => i.why === 'not-named');
  const neverPruned = leftAlone.filter((i) => i.why === 'never-pruned');
  if (notNamed.length > 0) lines.push(`left alone, not in the file (--prune removes them): ${describe(notNamed)}`);
  if (neverPruned.length > 0) lines.push(`left alone, not in the file (subgraphs are removed by switchyard subgraph remove): ${describe(neverPruned)}`);
  return lines;
}

/** The whole difference as `config apply` prints it: changes, what is left alone, sections not managed, counts. */
export function formatDiff(diff: ConfigDiff): string {
  const { added, changed, removed } = countChanges(diff.changes);
  const unmanaged = CONFIG_SECTIONS.filter((section) => !diff.sections.includes(section));
  return [
    ...changeLines(diff.changes),
    ...leftAloneLines(diff.leftAlone),
    ...(unmanaged.length > 0 ? [`not in the file, so not managed by it: ${unmanaged.join(', ')}`] : []),
    diff.changes.length === 0 ? 'no changes' : `${added} to add, ${changed} to change, ${removed} to remove`,
  ].join('\n');
}
