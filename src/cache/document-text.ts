// The normalised text of a parsed document, printed once per document object: the key that outlives one parse.
import { print, type DocumentNode } from 'graphql';

export type DocumentText = (document: DocumentNode) => string;

/**
 * graphql-js `print` of a document, memoised by the document's identity (yoga's parse cache hands the
 * same object to every request with the same query text, so a document is printed once in its life,
 * whatever the number of graphs it runs on). Two documents that differ only in whitespace, commas or
 * comments print the same, which is what the operation registry stores (`operations.normalised`).
 * Owned by whoever creates it (a graph source): no module-level state.
 */
export function createDocumentText(): DocumentText {
  const printed = new WeakMap<DocumentNode, string>();
  return function documentText(document) {
    let text = printed.get(document);
    if (text === undefined) printed.set(document, (text = print(document)));
    return text;
  };
}
