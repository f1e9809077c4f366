// The bytes between payloads of a streamed answer: server-sent events and `multipart/mixed`, one writing each for `@defer` and subscriptions.
import type { Framing } from './negotiate-stream.js';

/** How one framing writes a stream: its headers, its first bytes, a payload, a keep-alive no reader takes for a payload, its end. */
export interface FramingRules {
  /** The response's headers; `parameters` are added to its Content-Type (`deferSpec=20220824`). */
  headers(parameters?: string): Record<string, string>;
  /** Written at once: some browsers and proxies hold a response until its first bytes. */
  readonly opening: string;
  /** One payload, its JSON given. */
  payload(json: string): string;
  /** Bytes that keep an idle stream open, or undefined where the framing has none of its own (a protocol on it may). */
  readonly keepAlive: string | undefined;
  /** The stream's last bytes. */
  readonly end: string;
}

/**
 * Server-sent events as GraphQL over SSE reads them (distinct connections: graphql-sse, GraphiQL):
 * `event: next` per payload, `:` comments to keep alive, `event: complete` at the end.
 */
const SSE: FramingRules = {
  headers: () => ({ 'content-type': 'text/event-stream', connection: 'keep-alive', 'cache-control': 'no-cache', 'content-encoding': 'none' }),
  opening: ':\n\n',
  payload: (json) => `event: next\ndata: ${json}\n\n`,
  keepAlive: ':\n\n',
  end: 'event: complete\ndata:\n\n',
};

const BOUNDARY = '-';

/**
 * `multipart/mixed` (RFC 2046 §5.1) as Apollo Client, Relay, meros and graphql-js readers read it:
 * each part is closed by the boundary that follows it, written with the part, since a reader hands a
 * part on only once it sees the next boundary (a part whose boundary waited for the next payload
 * would reach the client a payload late). The closing delimiter ends the stream.
 */
const MULTIPART: FramingRules = {
  headers: (parameters) => ({ 'content-type': `multipart/mixed; boundary="${BOUNDARY}"${parameters ? `; ${parameters}` : ''}` }),
  opening: `\r\n--${BOUNDARY}`,
  payload: (json) => `\r\nContent-Type: application/json; charset=utf-8\r\n\r\n${json}\r\n--${BOUNDARY}`,
  keepAlive: undefined,
  end: '--\r\n',
};

/** Every framing the router writes: a new one is one entry here and one in negotiate-stream.ts. */
export const FRAMINGS: Readonly<Record<Framing, FramingRules>> = { sse: SSE, multipart: MULTIPART };
