// One negotiation of streamed answers: the framing (SSE or multipart) and the payload format a client reads, for `@defer` and subscriptions alike.
import { admits, EVENT_STREAM, mediaType, MULTIPART_MIXED, negotiate, parseAccept, type MediaRange, type MediaType } from '../request/media-type.js';
import type { IncrementalFormat } from '../request/request-state.js';

/** How a streamed answer is cut into payloads on the wire (framing.ts): server-sent events or `multipart/mixed`. */
export type Framing = 'sse' | 'multipart';

/** Apollo's multipart subscription protocol: a client names it with `subscriptionSpec=1.0` (Apollo Client does). */
const MULTIPART_SUBSCRIPTIONS = mediaType('multipart/mixed; subscriptionSpec=1.0');

/** The framings of a streamed result in yoga's order of preference (its result processors: the last that matches wins). */
const STREAM_FRAMINGS: readonly (readonly MediaType[])[] = [[MULTIPART_MIXED], [EVENT_STREAM]];

/**
 * The entries that ask for a stream: those that name a type (a wildcard asks for none: a client
 * sending `*\/*`, curl or a plain `fetch`, expects one JSON answer, as GraphQL over HTTP says), in
 * utf-8 (no charset means utf-8).
 */
function naming(accept: string | null | undefined): MediaRange[] {
  return parseAccept(accept).filter((range) => range.type !== '*' && range.subtype !== '*' && (range.params.get('charset') ?? 'utf-8') === 'utf-8');
}

/**
 * The framing a subscription over HTTP is written in, or undefined when the client reads neither
 * (it then gets yoga's answer, a refusal): Apollo's multipart protocol when an entry names
 * `subscriptionSpec=1.0`, else GraphQL over SSE when one names `text/event-stream`.
 */
export function subscriptionFramingOf(accept: string | null | undefined): Framing | undefined {
  const ranges = naming(accept);
  if (ranges.some((range) => admits(range, MULTIPART_SUBSCRIPTIONS))) return 'multipart';
  if (ranges.some((range) => admits(range, EVENT_STREAM))) return 'sse';
  return undefined;
}

/** A deferred query's stream: the shape of its payloads and the framing between them. */
export interface IncrementalStream {
  readonly format: IncrementalFormat;
  readonly framing: Framing;
}

/**
 * How a client reads a query with `@defer`, or undefined when it reads no stream (it then gets one
 * answer, as if `@defer` were absent: never an error).
 * 1. Only an entry naming `multipart/mixed` or `text/event-stream` asks for a stream, the first of
 *    the two named deciding; within it, `incrementalSpec=v0.2` on an entry asks for graphql-js 17's
 *    format, anything else (`deferSpec=20220824`, or no parameter: GraphiQL's fetcher) for Apollo's.
 * 2. The framing is the one yoga's result processors would choose (`negotiate` in media-type.ts
 *    tells why its rule is kept): multipart when any acceptable entry admits it, a wildcard too,
 *    else SSE.
 */
export function incrementalStreamOf(accept: string | null | undefined): IncrementalStream | undefined {
  const ranges = naming(accept);
  for (const type of [MULTIPART_MIXED, EVENT_STREAM]) {
    const named = ranges.filter((range) => admits(range, type));
    if (named.length === 0) continue;
    const format: IncrementalFormat = named.some((range) => range.params.get('incrementalspec') === 'v0.2') ? 'incremental-v0.2' : 'defer-20220824';
    return { format, framing: negotiate(accept, STREAM_FRAMINGS) === EVENT_STREAM ? 'sse' : 'multipart' };
  }
  return undefined;
}
