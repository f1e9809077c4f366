// Records every executed operation and its client in the operation registry, off the request path.
import { createHash } from 'node:crypto';
import { print, type DocumentNode } from 'graphql';
import type { Plugin, YogaInitialContext } from 'graphql-yoga';
import { alsoOnSubscribe } from './subscribe-hooks.js';
import type { OperationRecorder } from '../registry/operation-recorder.js';
import { executingOperation } from '../request/operation-analysis.js';
import { requestStateOf } from '../request/request-state.js';

export interface OperationRegistryOptions {
  recorder: OperationRecorder;
}

interface Normalised {
  hash: string;
  text: string;
}

/** Longest client name or version kept, in characters (headers are the client's to fill). */
const MAX_CLIENT_TEXT = 128;

function header(request: Request | undefined, ...names: string[]): string {
  for (const name of names) {
    const value = request?.headers.get(name);
    if (value) return value.slice(0, MAX_CLIENT_TEXT);
  }
  return '';
}

/**
 * 1. Normalise the document once: graphql-js `print` of the parsed document, so whitespace, commas and
 *    comments do not make a new document (literal values are kept: a check needs them, and documents
 *    that inline values differ by design). Memoised by the parsed document's identity, which yoga's
 *    parse cache keeps per query text, so a document is printed and hashed once, not per request.
 * 2. The client: the token's client claim (`client_id`/`azp`) when the caller has one, else the
 *    `graphql-client-name` / `graphql-client-version` headers, else Apollo's `apollographql-client-name`
 *    / `-version`; '' when none says.
 * 3. `recorder.record()` only bumps a counter in memory; the recorder writes in batches on its interval.
 */
export function useOperationRegistry(options: OperationRegistryOptions): Plugin {
  const { recorder } = options;
  const normalised = new WeakMap<DocumentNode, Normalised>();
  function normalise(document: DocumentNode): Normalised {
    let known = normalised.get(document);
    if (!known) {
      const text = print(document);
      known = { text, hash: createHash('sha256').update(text).digest('hex') };
      normalised.set(document, known);
    }
    return known;
  }
  return alsoOnSubscribe({
    onExecute({ args }) {
      const operation = executingOperation(args.contextValue, args.document, args.operationName);
      if (!operation) return;
      const { text, hash } = normalise(args.document);
      const request = (args.contextValue as Partial<YogaInitialContext>).request;
      const tokenClient = requestStateOf(args.contextValue).principal?.clientId;
      recorder.record({
        hash,
        normalised: text,
        operationName: operation.name?.value ?? null,
        operationType: operation.operation,
        clientName: tokenClient?.slice(0, MAX_CLIENT_TEXT) ?? header(request, 'graphql-client-name', 'apollographql-client-name'),
        clientVersion: header(request, 'graphql-client-version', 'apollographql-client-version'),
      });
    },
  });
}
