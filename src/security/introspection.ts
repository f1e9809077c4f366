// What counts as introspection for the production rule (decision 036): a document that reads the schema through `__schema` or `__type`.
import { Kind, type DocumentNode, type SelectionSetNode } from 'graphql';

/** The meta-fields that read the schema itself (GraphQL spec §4.2). `__typename` is not one: it reads a value's type name, and clients send it everywhere. */
const SCHEMA_FIELDS: ReadonlySet<string> = new Set(['__schema', '__type']);

/**
 * Whether the document selects `__schema` or `__type` anywhere: in any operation, whichever one the
 * request runs, and in any fragment, under any alias (an alias renames the key, not the field). The
 * production rule refuses the whole document, as graphql-js's `NoSchemaIntrospectionCustomRule` did
 * before it: a document is one request, and what it asks for is what it is judged by. Fragments are
 * read as definitions, so a spread needs no following.
 */
export function readsSchema(document: DocumentNode): boolean {
  for (const definition of document.definitions) {
    if ((definition.kind === Kind.OPERATION_DEFINITION || definition.kind === Kind.FRAGMENT_DEFINITION) && selectsSchema(definition.selectionSet)) return true;
  }
  return false;
}

function selectsSchema(set: SelectionSetNode | undefined): boolean {
  if (!set) return false;
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD && (SCHEMA_FIELDS.has(selection.name.value) || selectsSchema(selection.selectionSet))) return true;
    if (selection.kind === Kind.INLINE_FRAGMENT && selectsSchema(selection.selectionSet)) return true;
  }
  return false;
}
