// Content negotiation on the Accept header: the one rule by which results, refusals and (next) streams choose their media type.
import type { IncrementalFormat } from './request-state.js';

const NO_PARAMS: ReadonlyMap<string, string> = new Map();

/** No Accept header (or an empty one) accepts anything (RFC 9110 §12.5.1), as yoga reads it. */
const ANYTHING = '*/*';

/** One entry of an Accept header (RFC 9110 §12.5.1): a media range, its parameters and its weight. */
export interface MediaRange {
  /** Lower case; `*` for a wildcard. */
  readonly type: string;
  readonly subtype: string;
  /** Parameters other than `q`: names in lower case (`deferspec`), values as sent but the charset's, which is lower-cased (`utf-8`). */
  readonly params: ReadonlyMap<string, string>;
  /** The weight, 0 to 1 (default 1). Carried for callers; `negotiate` follows yoga, which does not weigh. */
  readonly q: number;
}

/** A media type a response may be sent in, parsed once: `type/subtype` and the parameters an Accept entry must name to admit it. */
export interface MediaType {
  /** As written (`multipart/mixed; deferSpec=20220824`): what `negotiate` returns. */
  readonly text: string;
  readonly type: string;
  readonly subtype: string;
  readonly params: ReadonlyMap<string, string>;
}

/** Parses a media type to offer; throws on text that is not `type/subtype[; name=value]*` (a programming error). */
export function mediaType(text: string): MediaType {
  const [range] = parseAccept(text);
  if (!range || range.type === '*' || range.subtype === '*' || text.includes(',')) throw new Error(`not a media type: ${text}`);
  return { text, type: range.type, subtype: range.subtype, params: range.params };
}

export const APPLICATION_JSON = mediaType('application/json');
export const GRAPHQL_RESPONSE_JSON = mediaType('application/graphql-response+json');
export const MULTIPART_MIXED = mediaType('multipart/mixed');
export const EVENT_STREAM = mediaType('text/event-stream');

/** The two JSON media types of a single result (GraphQL over HTTP), the one a wildcard means first. */
export const JSON_MEDIA_TYPES: readonly MediaType[] = [APPLICATION_JSON, GRAPHQL_RESPONSE_JSON];

/**
 * What graphql-yoga answers a single result in, by priority: JSON when any acceptable entry names
 * one, else `multipart/mixed`, else `text/event-stream` (yoga's result processors, see `negotiate`).
 */
export const RESULT_MEDIA_TYPES: readonly (readonly MediaType[])[] = [JSON_MEDIA_TYPES, [MULTIPART_MIXED], [EVENT_STREAM]];

/** Every media type the router answers in, as a 406 lists them. */
export const ANSWER_MEDIA_TYPES: readonly string[] = [GRAPHQL_RESPONSE_JSON, APPLICATION_JSON, EVENT_STREAM, MULTIPART_MIXED].map((type) => type.text);

/**
 * The entries of an Accept header, in the order sent. Whitespace is dropped and names are lower-cased
 * (as yoga does); an entry without a `/` is not a media range and is left out.
 */
export function parseAccept(header: string | null | undefined): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const entry of (header || ANYTHING).replace(/\s/g, '').split(',')) {
    const [range, ...parameters] = entry.split(';');
    const slash = range.indexOf('/');
    if (slash <= 0 || slash === range.length - 1) continue;
    const params = parameters.length > 0 ? new Map<string, string>() : NO_PARAMS;
    let q = 1;
    for (const parameter of parameters) {
      const equals = parameter.indexOf('=');
      if (equals <= 0) continue;
      const name = parameter.slice(0, equals).toLowerCase();
      const value = parameter.slice(equals + 1);
      if (name === 'q') {
        const weight = Number(value);
        if (Number.isFinite(weight) && weight >= 0 && weight <= 1) q = weight;
      } else (params as Map<string, string>).set(name, name === 'charset' ? value.toLowerCase() : value);
    }
    ranges.push({ type: range.slice(0, slash).toLowerCase(), subtype: range.slice(slash + 1).toLowerCase(), params, q });
  }
  return ranges;
}

/**
 * Whether an Accept entry admits an offered media type (`type/subtype` with optional `; name=value`
 * parameters): the types match or the entry's is `*`, and every parameter the offer names is in the
 * entry with the same value. The entry's other parameters do not matter (yoga ignores them), so an
 * offer of `multipart/mixed; deferSpec=20220824` is made only to a client that names that spec, and
 * an offer of `multipart/mixed` to any client that accepts multipart.
 */
export function admits(range: MediaRange, offer: MediaType): boolean {
  if (range.type !== '*' && range.type !== offer.type) return false;
  if (range.subtype !== '*' && range.subtype !== offer.subtype) return false;
  for (const [name, value] of offer.params) if (range.params.get(name) !== value) return false;
  return true;
}

/**
 * The media type to answer in, or undefined when the client accepts none of the offers. This is
 * graphql-yoga's rule for results (its `useResultProcessors`), kept exactly so that an answer and a
 * refusal of the same request always agree:
 * 1. Entries whose `charset` is not utf-8 are not acceptable (no charset means utf-8).
 * 2. `groups` are tried in order (yoga's result processors, the last matching of which wins: JSON,
 *    then multipart, then event streams); the first group any acceptable entry admits decides.
 * 3. Within it, the first entry in header order that admits one of the group's types decides, and
 *    for an entry that admits several (a wildcard), the group's first type: the full wildcard and
 *    `application/*` mean `application/json`.
 * 4. Weights (`q`) are not considered, as yoga does not consider them: `application/json;q=0.1,
 *    application/graphql-response+json` answers in `application/json`. Honouring them would mean
 *    choosing yoga's result processor too (decision 021).
 */
export function negotiate(accept: string | null | undefined, groups: readonly (readonly MediaType[])[]): MediaType | undefined {
  const ranges = parseAccept(accept).filter((range) => (range.params.get('charset') ?? 'utf-8') === 'utf-8');
  for (const group of groups) {
    for (const range of ranges) {
      const offer = group.find((type) => admits(range, type));
      if (offer !== undefined) return offer;
    }
  }
  return undefined;
}

/** The media type yoga answers a single (non-streamed) result in for this Accept header, or undefined (406). */
export function resultMediaType(accept: string | null | undefined): MediaType | undefined {
  return negotiate(accept, RESULT_MEDIA_TYPES);
}

/**
 * The media type of a refusal built before yoga's result processing (401, 503, 406): the JSON type a
 * result of the same request gets, and `application/json` when the client accepts no JSON at all (an
 * event stream or multipart only: an HTTP error status is not a stream).
 */
export function refusalMediaType(accept: string | null | undefined): MediaType {
  return negotiate(accept, [JSON_MEDIA_TYPES]) ?? APPLICATION_JSON;
}

/**
 * The incremental format a client reads, or undefined when it reads none (it then gets one answer,
 * as if `@defer` were absent: never an error). Follows which result processor yoga will write a
 * stream with (`negotiate` above tells why it is yoga's rule): `multipart/mixed` when the
 * client names it, else `text/event-stream`. Only an entry naming the type counts, not a wildcard:
 * a client sending `*\/*` (curl, a plain `fetch`) expects one JSON answer (GraphQL over HTTP).
 * Within the chosen type, `incrementalSpec=v0.2` on an entry asks for graphql-js 17's format;
 * anything else (`deferSpec=20220824`, or no parameter: GraphiQL's fetcher) gets Apollo's.
 */
export function incrementalFormatOf(accept: string | null | undefined): IncrementalFormat | undefined {
  const ranges = parseAccept(accept).filter((range) => (range.params.get('charset') ?? 'utf-8') === 'utf-8' && range.type !== '*' && range.subtype !== '*');
  for (const type of [MULTIPART_MIXED, EVENT_STREAM]) {
    const naming = ranges.filter((range) => admits(range, type));
    if (naming.length > 0) return naming.some(asksV02) ? 'incremental-v0.2' : 'defer-20220824';
  }
  return undefined;
}

function asksV02(range: MediaRange): boolean {
  return range.params.get('incrementalspec') === 'v0.2';
}
