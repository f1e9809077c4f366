// Trusted documents (table `trusted_documents`): manifests client teams publish, and the in-memory book every router reads them from.
import { createHash } from 'node:crypto';
import { parse, type DocumentNode, type OperationDefinitionNode } from 'graphql';
import type { Database, Queryable } from './database.js';

export interface TrustedDocumentInput {
  id: string;
  body: string;
}

export interface TrustedDocumentRecord {
  id: string;
  document: string;
  sha256: string;
  operationName: string | null;
  clientName: string;
  clientVersion: string;
  createdAt: Date;
}

/** A manifest refused as a whole: nothing was stored. */
export class InvalidManifestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidManifestError';
  }
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Why `id` cannot be a document id, or undefined: the rule publish applies (and `config apply`). */
export function documentIdProblem(id: unknown): string | undefined {
  return typeof id === 'string' && id !== '' && id.length <= 256 ? undefined : `invalid document id ${JSON.stringify(id) ?? String(id)}`;
}

/**
 * Stores a manifest's documents in one transaction. Every body must parse and hold one named or
 * anonymous operation it can run; an id already registered with another body refuses the whole
 * manifest (an id is a promise to clients: it never changes meaning). Re-publishing the same
 * manifest is a no-op. Returns how many documents were new.
 */
export async function publishTrustedDocuments(db: Database, manifest: { clientName: string; clientVersion: string; documents: readonly TrustedDocumentInput[] }): Promise<{ added: number; known: number }> {
  if (manifest.clientName.trim() === '') throw new InvalidManifestError('--client must name the client');
  if (manifest.documents.length === 0) throw new InvalidManifestError('the manifest holds no document');
  const rows = manifest.documents.map(({ id, body }) => {
    const idProblem = documentIdProblem(id);
    if (idProblem) throw new InvalidManifestError(idProblem);
    if (typeof body !== 'string') throw new InvalidManifestError(`document ${id}: the body must be a string`);
    let document: DocumentNode;
    try {
      document = parse(body);
    } catch (error) {
      throw new InvalidManifestError(`document ${id} does not parse: ${(error as Error).message}`);
    }
    const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === 'OperationDefinition');
    if (operations.length === 0) throw new InvalidManifestError(`document ${id} holds no operation`);
    return { id, body, sha256: sha256(body), operationName: operations.length === 1 ? (operations[0].name?.value ?? null) : null };
  });
  return db.transaction(async (tx) => {
    const { rows: existing } = await tx.query<{ id: string; document: string }>('select id, document from trusted_documents where id = any($1::text[])', [rows.map((r) => r.id)]);
    const known = new Map(existing.map((row) => [row.id, row.document]));
    const clashes = rows.filter((row) => known.has(row.id) && known.get(row.id) !== row.body).map((row) => row.id);
    if (clashes.length > 0) throw new InvalidManifestError(`already registered with another document: ${clashes.join(', ')} (an id never changes meaning; give the new document a new id)`);
    const fresh = rows.filter((row) => !known.has(row.id));
    if (fresh.length > 0) {
      await tx.query(
        `insert into trusted_documents (id, document, sha256, operation_name, client_name, client_version)
         select u.id, u.document, u.sha256, u.operation_name, $5, $6 from unnest($1::text[], $2::text[], $3::text[], $4::text[]) as u(id, document, sha256, operation_name)
         on conflict (id) do nothing`,
        [fresh.map((r) => r.id), fresh.map((r) => r.body), fresh.map((r) => r.sha256), fresh.map((r) => r.operationName), manifest.clientName, manifest.clientVersion],
      );
    }
    return { added: fresh.length, known: rows.length - fresh.length };
  });
}

/**
 * Removes documents by id (`config apply --prune`); returns how many were there. Clients still
 * sending one of these ids are refused from then on: an id removed is a promise withdrawn.
 */
export async function removeTrustedDocuments(db: Queryable, ids: readonly string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const { rowCount } = await db.query('delete from trusted_documents where id = any($1::text[])', [[...ids]]);
  return rowCount ?? 0;
}

/** A document as its manifest lists it: its id and who published it, without its body. */
export interface TrustedDocumentEntry {
  id: string;
  clientName: string;
  clientVersion: string;
}

/** Every document's id and manifest, without the bodies (`config export` names documents, it never holds them). Unordered. */
export async function listTrustedDocumentEntries(db: Queryable): Promise<TrustedDocumentEntry[]> {
  const { rows } = await db.query<{ id: string; client_name: string; client_version: string }>('select id, client_name, client_version from trusted_documents');
  return rows.map((row) => ({ id: row.id, clientName: row.client_name, clientVersion: row.client_version }));
}

interface TrustedRow {
  id: string;
  document: string;
  sha256: string;
  operation_name: string | null;
  client_name: string;
  client_version: string;
  created_at: Date;
}

export async function listTrustedDocuments(db: Queryable): Promise<TrustedDocumentRecord[]> {
  const { rows } = await db.query<TrustedRow>('select id, document, sha256, operation_name, client_name, client_version, created_at from trusted_documents order by client_name, id');
  return rows.map((row) => ({
    id: row.id,
    document: row.document,
    sha256: row.sha256,
    operationName: row.operation_name,
    clientName: row.client_name,
    clientVersion: row.client_version,
    createdAt: row.created_at,
  }));
}

/**
 * What routers look documents up in: id (and the body's SHA-256, for APQ clients) to the parsed
 * document. Each document is parsed once, when the book is filled, so a request by id skips parsing.
 * Replaced whole by the change feed; a reader sees either the old book or the new one.
 */
export class TrustedDocumentBook {
  #byKey = new Map<string, DocumentNode>();

  replace(records: readonly TrustedDocumentRecord[]): void {
    const next = new Map<string, DocumentNode>();
    const parsed = new Map<string, DocumentNode>();
    for (const record of records) {
      let document = parsed.get(record.document);
      if (!document) {
        try {
          document = parse(record.document);
        } catch {
          continue; // refused at publish; a row edited by hand by mistake must not stop the others
        }
        parsed.set(record.document, document);
      }
      next.set(record.id, document);
    }
    // Ids first, then hashes where no id already answers: a client's id always means its own document.
    for (const record of records) {
      const document = parsed.get(record.document);
      if (document && !next.has(record.sha256)) next.set(record.sha256, document);
    }
    this.#byKey = next;
  }

  get(key: string): DocumentNode | undefined {
    return this.#byKey.get(key);
  }

  get size(): number {
    return this.#byKey.size;
  }
}
