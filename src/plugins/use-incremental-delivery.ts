// `@defer` on the wire: the format a client reads, chosen by its Accept header, and the stream's Content-Type that names it.
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { isAsyncIterable, type Plugin, type YogaInitialContext } from 'graphql-yoga';
import { maskedErrors } from '../errors/mask-errors.js';
import type { ExecutionResult, GraphQLError } from 'graphql';
import { incrementalFormatOf } from '../request/media-type.js';
import { requestStateOf, type IncrementalFormat } from '../request/request-state.js';

/** The media-type parameter naming each format, as clients send it and as the response's Content-Type repeats it. */
const FORMAT_PARAMETER: Readonly<Record<IncrementalFormat, string>> = {
  'defer-20220824': 'deferSpec=20220824',
  'incremental-v0.2': 'incrementalSpec=v0.2',
};

export interface IncrementalDeliveryOptions {
  /** Told each error masked in a later payload (yoga logs those it masks itself). */
  onMasked?: (error: unknown) => void;
}

/** What a later payload may hold errors in: its parts' entries, and v0.2's closed parts. */
interface IncrementalPayload extends ExecutionResult {
  incremental?: { errors?: readonly GraphQLError[] }[];
  completed?: { errors?: readonly GraphQLError[] }[];
}

/**
 * 4. Errors inside a later payload's entries are masked as yoga masks a result's own `errors` (it
 * masks no deeper): an unexpected error becomes `Unexpected error.` with INTERNAL_SERVER_ERROR, a
 * GraphQL error keeps its message and code. Returns the masked payload, or undefined when nothing changed.
 */
function maskNested(payload: IncrementalPayload, onMasked: ((error: unknown) => void) | undefined): IncrementalPayload | undefined {
  let changed = false;
  const maskAll = <T extends { errors?: readonly GraphQLError[] }>(entries: T[] | undefined): T[] | undefined =>
    entries?.map((entry) => {
      const errors = entry.errors?.length ? maskedErrors(entry.errors, onMasked) : undefined;
      if (!errors) return entry;
      changed = true;
      return { ...entry, errors };
    });
  const incremental = maskAll(payload.incremental);
  const completed = maskAll(payload.completed);
  return changed ? { ...payload, ...(incremental ? { incremental } : {}), ...(completed ? { completed } : {}) } : undefined;
}

/**
 * 1. Validation of `@defer` and `@stream` as the incremental delivery RFC sets it (unique labels, no
 *    `@defer` on a mutation's or subscription's root fields), by yoga's defer-stream plugin. The API
 *    schema declares both directives already (gateway-schema.ts), so the plugin never replaces it.
 * 2. At execution, the format the client reads goes on the request state: the query plans stream a
 *    deferred query in it, and answer a client that reads none in one payload.
 * 3. A streamed response's Content-Type names its format (`multipart/mixed; boundary="-";
 *    deferSpec=20220824`), as Apollo Client and graphql-js 17 readers check.
 * 4. Errors inside later payloads are masked like a result's own (`maskNested`).
 */
export function useIncrementalDelivery(options: IncrementalDeliveryOptions = {}): Plugin[] {
  const wire: Plugin = {
    onExecute({ args }) {
      const request = (args.contextValue as Partial<YogaInitialContext>).request;
      requestStateOf(args.contextValue).incremental = incrementalFormatOf(request?.headers.get('accept'));
      return {
        onExecuteDone({ result }) {
          if (!isAsyncIterable(result)) return;
          return {
            onNext({ result: payload, setResult }) {
              const masked = maskNested(payload as IncrementalPayload, options.onMasked);
              if (masked) setResult(masked as ExecutionResult);
            },
          };
        },
      };
    },
    onResponse({ serverContext, response }) {
      const state = requestStateOf(serverContext);
      if (!state.stream || !state.incremental) return;
      const type = response.headers.get('content-type');
      if (!type?.startsWith('multipart/mixed')) return;
      // Deleted first: the server's headers keep yoga's `Content-Type` apart from a lower-case `set`.
      response.headers.delete('Content-Type');
      response.headers.delete('content-type');
      response.headers.set('content-type', `${type}; ${FORMAT_PARAMETER[state.incremental]}`);
    },
  };
  return [useDeferStream() as Plugin, wire];
}
