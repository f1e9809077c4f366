// The `trustedDocuments` section: each manifest (client, version) by the ids it holds. The bodies come from the client's build (`operations publish`), so a file only names and withdraws documents.
import { z } from 'zod';
import { assertNever } from '../../errors/assert-never.js';
import { documentIdProblem, listTrustedDocumentEntries, removeTrustedDocuments } from '../trusted-documents.js';
import { compareText, itemKey, type ConfigSectionDescriptor, type ItemsByKey, type SectionChange } from './section.js';
import { checked, isPlainObject } from './section-schema.js';

/** A trusted-document manifest by reference: who published it and the ids it holds, never the documents. */
export interface ManifestReference {
  client: string;
  /** '' when the manifest was published without `--version`. */
  version: string;
  /** Document ids, sorted. */
  documents: string[];
}

/** Sorted by client, then version. */
export type TrustedDocumentsSection = ManifestReference[];

const manifestSchema = z
  .object({
    client: z.string().trim().min(1, 'name the client the manifest was published for'),
    version: z.string({ error: 'the client version is text: quote it, e.g. version: "1.2.0"' }).default(''),
    documents: z.array(checked<string>(documentIdProblem)),
  })
  .strict();

/** Two references to one manifest, or one id in two places, would make the file say two things. */
function checkManifests(manifests: unknown[], ctx: z.RefinementCtx): void {
  const manifestsSeen = new Set<string>();
  const idsSeen = new Set<unknown>();
  manifests.forEach((manifest, i) => {
    if (!isPlainObject(manifest)) return;
    const key = JSON.stringify([manifest.client, manifest.version ?? '']);
    if (manifestsSeen.has(key)) ctx.addIssue({ code: 'custom', message: `the manifest of ${String(manifest.client)} ${String(manifest.version ?? '')} is named twice`.trimEnd(), path: [i] });
    manifestsSeen.add(key);
    if (!Array.isArray(manifest.documents)) return;
    manifest.documents.forEach((id: unknown, j) => {
      if (idsSeen.has(id)) ctx.addIssue({ code: 'custom', message: `document ${String(id)} is named twice (an id belongs to one manifest)`, path: [i, 'documents', j] });
      idsSeen.add(id);
    });
  });
}

const sortManifests = (manifests: ManifestReference[]): ManifestReference[] =>
  manifests.map(({ client, version, documents }) => ({ client, version, documents: [...documents].sort(compareText) })).sort((a, b) => compareText(a.client, b.client) || compareText(a.version, b.version));

const manifestName = (client: unknown, version: unknown) => (version === '' ? String(client) : `${String(client)} ${String(version)}`);

/** Up to `max` ids, then how many more. */
function someIds(ids: readonly string[], max = 5): string {
  return ids.length <= max ? ids.join(', ') : `${ids.slice(0, max).join(', ')} and ${ids.length - max} more`;
}

/** An unpublished document is named per manifest; an id under another manifest than its own, each. */
function problems(changes: readonly SectionChange[], current: ItemsByKey, desired: ItemsByKey): string[] {
  const found: string[] = [];
  const missing = new Map<string, string[]>();
  const manifestOf = (items: ItemsByKey, id: string) => {
    const { fields } = items.get(itemKey([id]))!;
    return manifestName(fields.get('client'), fields.get('version'));
  };
  for (const { action, ref } of changes) {
    const id = ref[0];
    if (action === 'remove') continue;
    if (action === 'change') {
      found.push(`trusted document ${id} is registered for ${manifestOf(current, id)}, not ${manifestOf(desired, id)}: an id belongs to the manifest that first published it`);
    } else {
      const manifest = manifestOf(desired, id);
      missing.set(manifest, [...(missing.get(manifest) ?? []), id]);
    }
  }
  for (const [manifest, ids] of missing) {
    found.push(`trusted documents of ${manifest} are not published: ${ids.join(', ')} (publish the manifest with switchyard operations publish FILE --client ... --version ...; the file names documents, it does not hold them)`);
  }
  return found;
}

export const trustedDocumentsSection: ConfigSectionDescriptor<TrustedDocumentsSection, 'trustedDocuments'> = {
  name: 'trustedDocuments',
  noun: 'trusted document',
  schema: z
    .array(manifestSchema)
    .superRefine(checkManifests, { when: (payload) => Array.isArray(payload.value) })
    .transform(sortManifests),

  async export(db) {
    const byManifest = new Map<string, ManifestReference>();
    for (const { id, clientName, clientVersion } of await listTrustedDocumentEntries(db)) {
      const key = JSON.stringify([clientName, clientVersion]);
      let manifest = byManifest.get(key);
      if (!manifest) byManifest.set(key, (manifest = { client: clientName, version: clientVersion, documents: [] }));
      manifest.documents.push(id);
    }
    return sortManifests([...byManifest.values()]);
  },

  // One item per id, its manifest as its fields: an id that moves between manifests is a change (and refused).
  items: (manifests) => manifests.flatMap(({ client, version, documents }) => documents.map((id) => ({ ref: [id], fields: { client, version } }))),

  problems,

  // One line per manifest: a prune may withdraw thousands of documents.
  changeLines(changes) {
    const byManifest = new Map<string, string[]>();
    for (const change of changes) {
      const client = change.fields.find((f) => f.field === 'client')?.from;
      const version = change.fields.find((f) => f.field === 'version')?.from;
      const manifest = manifestName(client, version);
      byManifest.set(manifest, [...(byManifest.get(manifest) ?? []), change.ref[0]]);
    }
    return [...byManifest].map(([manifest, ids]) => `- trusted documents of ${manifest}: ${ids.length} (${someIds(ids)})`);
  },

  leftAloneSummary: (refs) => [`${refs.length} trusted document${refs.length === 1 ? '' : 's'}`],

  async apply(tx, changes) {
    const removed: string[] = [];
    for (const { action, ref } of changes) {
      switch (action) {
        case 'remove':
          removed.push(ref[0]);
          break;
        case 'add': // refused by `problems`: the file names documents, it does not hold their bodies
        case 'change': // refused by `problems`: an id belongs to the manifest that first published it
          throw new Error(`config apply does not ${action} trusted documents (${ref[0]}): the diff should have refused it`);
        default:
          assertNever(action, 'change action');
      }
    }
    // In one statement: a prune of a large manifest is one delete, not thousands.
    await removeTrustedDocuments(tx, removed);
  },
};
