// Subscriptions over HTTP: GraphQL over SSE (distinct connections) and Apollo's multipart protocol (`multipart/mixed; subscriptionSpec=1.0`), written as events come.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { ExecutionResult, GraphQLError } from 'graphql';
import { sendNodeResponse } from '@whatwg-node/server';
import { MASKED_MESSAGE } from '../errors/mask-errors.js';
import { parseAccept } from '../request/media-type.js';
import type { Logger } from '../telemetry/logger.js';
import { requestStateOf } from '../request/request-state.js';
import type { ClientSubscription, SubscriptionSink } from './client-subscription.js';
import type { EndedExtension } from './subscription-iterator.js';
import { formattedError, jsonOf } from './event-json.js';
import { HeartbeatWheel } from './heartbeat-wheel.js';
import { STREAM_BRIDGE, type StreamBridge } from './stream-bridge.js';
import type { FetchHandler } from './websocket-server.js';

/** Whether the client reads Apollo's multipart subscription protocol (Apollo Client sends `subscriptionSpec=1.0`). */
export function readsMultipartSubscriptions(accept: string | null | undefined): boolean {
  return parseAccept(accept).some((range) => range.type === 'multipart' && range.subtype === 'mixed' && range.params.get('subscriptionspec') === '1.0');
}

/** Whether the client reads `text/event-stream` (GraphQL over SSE). */
export function readsEventStream(accept: string | null | undefined): boolean {
  return parseAccept(accept).some((range) => range.type === 'text' && range.subtype === 'event-stream');
}

/** Bytes a client may have waiting in its response before new events are dropped for it (a live screen wants the latest). */
const MAX_BUFFERED_BYTES = 1 << 20;

/** How one protocol writes a stream: its opening, an event, a heartbeat, its end. */
interface WireFormat {
  readonly headers: Record<string, string>;
  readonly opening: string;
  readonly heartbeat: string;
  event(json: string): string;
  /** The stream's last bytes, or null: the stream is cut without an end, which the client reads as "reconnect". */
  end(error: GraphQLError | undefined): string | null;
}

const errorPayload = (error: GraphQLError) => JSON.stringify({ errors: [formattedError(error)], extensions: { subscription: { ended: error.extensions.code as EndedExtension['subscription']['ended'] } } satisfies EndedExtension });

/**
 * GraphQL over SSE, distinct connections (what graphql-sse's client and GraphiQL read): `:` comments
 * as heartbeats, `event: next` per event, `event: complete` at the end. SSE has no error event: an
 * end with an error is a last `next` holding it, then `complete`; SHUTTING_DOWN cuts the stream
 * without `complete`, which the client reads as a dropped connection and retries (another router).
 */
const SSE: WireFormat = {
  headers: { 'content-type': 'text/event-stream', connection: 'keep-alive', 'cache-control': 'no-cache', 'content-encoding': 'none' },
  // A first write at once: some browsers and proxies hold a response until its first bytes.
  opening: ':\n\n',
  heartbeat: ':\n\n',
  event: (json) => `event: next\ndata: ${json}\n\n`,
  end(error) {
    if (error?.extensions.code === 'SHUTTING_DOWN') return null;
    return `${error ? `event: next\ndata: ${errorPayload(error)}\n\n` : ''}event: complete\ndata:\n\n`;
  },
};

const BOUNDARY = 'graphql';
/**
 * Each part is closed by the boundary that follows it, written with the part: a reader hands a part
 * on only once it sees the next boundary, so a part whose boundary waited for the next one would
 * reach the client a heartbeat late.
 */
const part = (body: string) => `\r\nContent-Type: application/json; charset=utf-8\r\n\r\n${body}\r\n--${BOUNDARY}`;

/**
 * Apollo's multipart subscription protocol, as Apollo Client reads it: every event a part
 * `{"payload": <result>}`; a part `{}` as heartbeat (at most 5 s apart, as the protocol asks); an end
 * with an error is `{"payload": null, "errors": [...]}` (a transport error, which Apollo Client
 * raises as the subscription's error, never a normal end); then the closing boundary.
 */
const MULTIPART: WireFormat = {
  headers: { 'content-type': `multipart/mixed; boundary="${BOUNDARY}"; subscriptionSpec=1.0`, 'cache-control': 'no-store' },
  opening: `\r\n--${BOUNDARY}${part('{}')}`,
  heartbeat: part('{}'),
  event: (json) => part(`{"payload":${json}}`),
  end: (error) => `${error ? part(`{"payload":null,"errors":[${JSON.stringify(formattedError(error))}]}`) : ''}--\r\n`,
};

/**
 * Where a stream's bytes go: the Node response itself (a request that came through
 * `serveHttpSubscriptions`), or a Readable that is the body of a response the pipeline sends.
 */
export interface StreamTarget {
  write(chunk: string): void;
  end(chunk: string): void;
  /** Cuts the stream without its end. */
  destroy(): void;
  readonly writableLength: number;
  readonly destroyed: boolean;
}

const formatOf = (multipart: boolean): WireFormat => (multipart ? MULTIPART : SSE);

/** A subscription's HTTP stream: written by the subscription as events come (its sink), beaten while idle; a client that goes away ends the subscription at once. */
export class HttpSubscriptionStream implements SubscriptionSink {
  readonly #subscription: ClientSubscription;
  readonly #target: StreamTarget;
  readonly #format: WireFormat;
  readonly #heartbeats: HeartbeatWheel<HttpSubscriptionStream>;

  constructor(subscription: ClientSubscription, target: StreamTarget, format: WireFormat, heartbeats: HeartbeatWheel<HttpSubscriptionStream>) {
    this.#subscription = subscription;
    this.#target = target;
    this.#format = format;
    this.#heartbeats = heartbeats;
    target.write(format.opening);
    heartbeats.add(this);
    subscription.attach(this);
  }

  next(event: ExecutionResult): boolean {
    if (this.#target.destroyed || this.#target.writableLength > MAX_BUFFERED_BYTES) return false;
    this.#target.write(this.#format.event(jsonOf(event)));
    return true;
  }

  end(error: GraphQLError | undefined): void {
    this.#heartbeats.delete(this);
    if (this.#target.destroyed) return;
    const last = this.#format.end(error);
    if (last === null) this.#target.destroy();
    else this.#target.end(last);
  }

  /** The client left (or the stream was cut): the subscription ends with `client`. */
  closed(): void {
    this.#heartbeats.delete(this);
    this.#subscription.cancel();
  }

  beat(): void {
    if (!this.#target.destroyed && this.#target.writableLength === 0) this.#target.write(this.#format.heartbeat);
  }
}

/** The HTTP subscription streams of one router: their heartbeats, and the two ways a stream is written. */
export interface HttpSubscriptionStreams {
  /** Writes `subscription` to `target` from now on. */
  open(subscription: ClientSubscription, target: StreamTarget, multipart: boolean): HttpSubscriptionStream;
  /** A subscription's response for a request that did not come through `serveHttpSubscriptions` (its stream is the body of the pipeline's response). */
  response(subscription: ClientSubscription, multipart: boolean, fetchAPI: { Response: typeof Response }): Response;
}

/** The streams of one router: SSE heartbeats every `heartbeatMs`, multipart ones at most 5 s apart (as Apollo's protocol asks). */
export function httpSubscriptionStreams(heartbeatMs: number): HttpSubscriptionStreams {
  const sse = new HeartbeatWheel<HttpSubscriptionStream>(heartbeatMs, (stream) => stream.beat());
  const multipart = new HeartbeatWheel<HttpSubscriptionStream>(Math.min(heartbeatMs, 5_000), (stream) => stream.beat());
  const streams: HttpSubscriptionStreams = {
    open: (subscription, target, isMultipart) => new HttpSubscriptionStream(subscription, target, formatOf(isMultipart), isMultipart ? multipart : sse),
    response(subscription, isMultipart, fetchAPI) {
      const target = new ReadableTarget();
      const stream = streams.open(subscription, target, isMultipart);
      target.onClose = () => stream.closed();
      return new fetchAPI.Response(target.body as unknown as ReadableStream, { status: 200, headers: formatOf(isMultipart).headers });
    },
  };
  return streams;
}

export interface HttpSubscriptionsOptions {
  /** The endpoint (yoga's `graphqlEndpoint`). */
  path: string;
  /** The router's body limit (`maxBodyBytes`): a larger or unannounced body takes the ordinary way, where it is refused or counted. */
  maxBodyBytes: number;
  logger?: Logger;
}

/**
 * The router's request listener in front of the pipeline's (decision 032): a request to `path` that
 * reads an event stream or Apollo's multipart subscriptions goes through the pipeline (yoga, every
 * plugin of the gate) with the bridge, and a subscription is then written straight to the Node
 * response. What is kept for the life of the stream is the Node response and the subscription: not
 * the fetch adapter's request and response, their listeners on the socket, or a stream pipe, which
 * the adapter would keep until the stream ends. `handle` answers false for any other request.
 */
export function serveHttpSubscriptions(
  router: { fetch: FetchHandler; fetchAPI: { Request: typeof Request } },
  streams: HttpSubscriptionStreams,
  options: HttpSubscriptionsOptions,
): (request: IncomingMessage, response: ServerResponse) => boolean {
  async function serve(request: IncomingMessage, response: ServerResponse, multipart: boolean): Promise<void> {
    const bridge: StreamBridge = { transport: 'http' };
    const serverContext = { [STREAM_BRIDGE]: bridge, req: request, res: response };
    // The request's state, made now: the pipeline's context is a copy of this one and shares it, so a subscription comes back on it.
    const state = requestStateOf(serverContext);
    const aborted = new AbortController();
    const abort = () => aborted.abort();
    response.once('close', abort);
    let answer: Response;
    try {
      const method = request.method ?? 'GET';
      // The body is read here, whole (its length is known and within the limit): a body stream handed on would keep its reader's listeners until the connection closes.
      const body = method === 'GET' || method === 'HEAD' ? undefined : await bodyOf(request);
      answer = await router.fetch(
        new router.fetchAPI.Request(`http://${request.headers.host ?? 'localhost'}${request.url ?? '/'}`, {
          method,
          headers: request.headers as Record<string, string>,
          body,
          signal: aborted.signal,
        }),
        serverContext,
      );
    } finally {
      response.off('close', abort);
    }
    const subscription = state.subscription;
    if (!subscription) {
      await sendNodeResponse(answer, response, request, false);
      return;
    }
    if (response.destroyed) {
      subscription.cancel();
      return;
    }
    // The pipeline's response carries the headers its plugins set (x-request-id, CORS...): the stream's own go over them.
    // All in one writeHead, no setHeader: Node then keeps no table of them for the life of the stream.
    const headers: Record<string, string> = {};
    answer.headers.forEach((value, name) => {
      if (name !== 'content-length') headers[name] = value;
    });
    response.writeHead(200, Object.assign(headers, formatOf(multipart).headers));
    keepOnlyTheStream(request, response, streams.open(subscription, response, multipart));
  }

  return function handle(request, response) {
    const url = request.url ?? '/';
    const pathname = url.includes('?') ? url.slice(0, url.indexOf('?')) : url;
    if (pathname !== options.path) return false;
    const accept = request.headers.accept;
    const multipart = readsMultipartSubscriptions(accept);
    if (!multipart && !readsEventStream(accept)) return false;
    const method = request.method ?? 'GET';
    if (method !== 'GET' && method !== 'HEAD') {
      const length = request.headers['content-length'];
      if (length === undefined || !/^\d+$/.test(length) || Number(length) > options.maxBodyBytes) return false;
    }
    serve(request, response, multipart).catch((error: unknown) => {
      // A client that left while its request was answered: nobody to tell, nothing went wrong.
      if (response.destroyed) return;
      options.logger?.error({ err: error }, 'a streamed request could not be answered');
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ errors: [{ message: MASKED_MESSAGE, extensions: { code: 'INTERNAL_SERVER_ERROR' } }] }));
      else response.destroy();
    });
    return true;
  };
}

/**
 * What stays for the life of an SSE or multipart stream: the Node request and response, the stream
 * and its subscription, and nothing of `serve` (a closure made there would keep its whole scope: the
 * request it made, its abort controller). A client that leaves ends the subscription at once.
 */
function keepOnlyTheStream(request: IncomingMessage, response: ServerResponse, stream: HttpSubscriptionStream): void {
  flattenHead(response);
  // Node's response points to its request for as long as the stream lasts; the request's headers
  // were read (the pipeline got its own copy): they need not stay (0.8 KB per open stream).
  request.headers = {};
  request.rawHeaders = [];
  response.once('close', () => stream.closed());
}

/**
 * Node keeps the head it sent as the response's `_header`: a string it built by appending each
 * header, so a rope of about 30 pieces (1 KB) held for the life of a stream that may last hours. A
 * flat copy in its place lets the pieces go (measured: 0.9 KB per open SSE subscription). Where a
 * Node version keeps no such string, this does nothing.
 */
function flattenHead(response: ServerResponse): void {
  const head = (response as unknown as { _header?: unknown })._header;
  if (typeof head === 'string') (response as unknown as { _header: string })._header = Buffer.from(head, 'latin1').toString('latin1');
}

/** A request's body, whole, as text (its `content-length`, checked against the limit, bounds it); no listener is left on the request. */
function bodyOf(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const onData = (chunk: Buffer) => chunks.push(chunk);
    const done = (error?: Error) => {
      request.off('data', onData);
      request.off('end', done);
      request.off('error', done);
      if (error) reject(error);
      else resolve(Buffer.concat(chunks).toString('utf8'));
    };
    request.on('data', onData);
    request.once('end', done);
    request.once('error', done);
  });
}

/** A Readable as a stream's target: the body of a response the pipeline sends (the HTTP layer pipes a Node stream body to the socket). */
class ReadableTarget implements StreamTarget {
  onClose: (() => void) | undefined;
  readonly body: Readable;

  constructor() {
    this.body = new Readable({
      read() {},
      destroy: (error, callback) => {
        this.onClose?.();
        callback(error);
      },
    });
  }

  write(chunk: string): void {
    this.body.push(chunk);
  }

  end(chunk: string): void {
    this.body.push(chunk);
    this.body.push(null);
  }

  destroy(): void {
    this.body.destroy();
  }

  get writableLength(): number {
    return this.body.readableLength;
  }

  get destroyed(): boolean {
    return this.body.destroyed;
  }
}
