// `@defer` on the wire: the format a client reads, chosen by its Accept header, and the stream's Content-Type that names it.
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { isAsyncIterable, type Plugin, type YogaInitialContext } from 'graphql-yoga';
import { maskedResult } from '../errors/mask-errors.js';
import type { ExecutionResult, GraphQLError } from 'graphql';
import { requestStateOf, type IncrementalFormat } from '../request/request-state.js';
import { FRAMINGS } from '../streaming/framing.js';
import type { HttpStreams, StreamProtocol } from '../streaming/http-stream.js';
import { incrementalStreamOf, type IncrementalStream } from '../streaming/negotiate-stream.js';
import { writeResults } from '../streaming/write-results.js';
import { maskedErrorLogger, type Logger } from '../telemetry/logger.js';

/** The media-type parameter naming each format, as clients send it and as a multipart response's Content-Type repeats it. */
const FORMAT_PARAMETER: Readonly<Record<IncrementalFormat, string>> = {
  'defer-20220824': 'deferSpec=20220824',
  'incremental-v0.2': 'incrementalSpec=v0.2',
};

/**
 * A deferred query's stream on the wire: its framing as it is, the format named in a multipart
 * Content-Type (Apollo Client and graphql-js 17 readers check it); SSE's keep-alive comments as its
 * heartbeat (multipart has none: a `{}` part would be read as a payload).
 */
function protocolOf({ format, framing }: IncrementalStream): StreamProtocol {
  const rules = FRAMINGS[framing];
  return {
    framing: rules,
    opening: rules.opening,
    heartbeat: rules.keepAlive,
    parameters: framing === 'multipart' ? FORMAT_PARAMETER[format] : undefined,
    payload: rules.payload,
  };
}

export interface IncrementalDeliveryOptions {
  /** Where each error masked in a later payload is logged (yoga logs those it masks itself). */
  logger?: Logger;
  /** The router's HTTP streams (their heartbeats). */
  streams: HttpStreams;
  /** Period of an SSE stream's keep-alive comments, in ms (`subscriptionHeartbeatMs`). */
  heartbeatMs: number;
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
      const masked = maskedResult(entry, onMasked);
      if (masked !== entry) changed = true;
      return masked;
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
 * 3. A deferred query's stream is written by the router's streaming layer (streaming/), in the
 *    framing negotiate-stream.ts chose and with the format named in its Content-Type
 *    (`multipart/mixed; boundary="-"; deferSpec=20220824`), as subscriptions are.
 * 4. Errors inside later payloads are masked like a result's own (`maskNested`).
 */
export function useIncrementalDelivery(options: IncrementalDeliveryOptions): Plugin[] {
  const wire: Plugin = {
    onExecute({ args }) {
      const request = (args.contextValue as Partial<YogaInitialContext>).request;
      requestStateOf(args.contextValue).incremental = incrementalStreamOf(request?.headers.get('accept'))?.format;
      return {
        onExecuteDone({ result }) {
          if (!isAsyncIterable(result)) return;
          const onMasked = maskedErrorLogger(options.logger, args.operationName);
          return {
            onNext({ result: payload, setResult }) {
              const masked = maskNested(payload as IncrementalPayload, onMasked);
              if (masked) setResult(masked as ExecutionResult);
            },
          };
        },
      };
    },
    onResultProcess({ request, result, serverContext, setResultProcessor }) {
      // A subscription's stream is the subscriptions plugin's; `incremental` is set only where a query executed.
      if (!isAsyncIterable(result) || !requestStateOf(serverContext).incremental) return;
      const stream = incrementalStreamOf(request.headers.get('accept'));
      if (!stream) return;
      const protocol = protocolOf(stream);
      setResultProcessor(function writeIncrementalStream(payloads, fetchAPI) {
        return writeResults(payloads as AsyncIterable<ExecutionResult>, options.streams, protocol, options.heartbeatMs, fetchAPI);
      }, stream.framing === 'sse' ? 'text/event-stream' : 'multipart/mixed');
    },
  };
  return [useDeferStream() as Plugin, wire];
}
