// Subscriptions over HTTP: GraphQL over SSE (distinct connections) and Apollo's multipart protocol (`multipart/mixed; subscriptionSpec=1.0`), written as events come.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ExecutionResult, GraphQLError } from 'graphql';
import { sendNodeResponse } from '@whatwg-node/server';
import { MASKED_MESSAGE } from '../errors/mask-errors.js';
import { FRAMINGS } from '../streaming/framing.js';
import { headersOf, HttpStream, ReadableTarget, streamResponse, type HttpStreams, type StreamProtocol, type StreamTarget } from '../streaming/http-stream.js';
import { subscriptionFramingOf, type Framing } from '../streaming/negotiate-stream.js';
import { formattedError, jsonOf } from '../streaming/result-json.js';
import type { Logger } from '../telemetry/logger.js';
import { requestStateOf } from '../request/request-state.js';
import type { ClientSubscription, SubscriptionSink } from './client-subscription.js';
import type { EndedExtension } from './subscription-iterator.js';
import { STREAM_BRIDGE, type StreamBridge } from './stream-bridge.js';
import type { FetchHandler } from './websocket-server.js';

/** Bytes a client may have waiting in its response before new events are dropped for it (a live screen wants the latest). */
const MAX_BUFFERED_BYTES = 1 << 20;

/** Apollo's multipart protocol asks for a heartbeat at least every 5 s. */
const MULTIPART_HEARTBEAT_MS = 5_000;

/** A subscription's protocol on a framing: how it opens, beats, writes an event, and ends (undefined: ended without error; null: cut). */
interface SubscriptionProtocol extends StreamProtocol {
  last(error: GraphQLError | undefined): string | null;
}

const errorPayload = (error: GraphQLError) => JSON.stringify({ errors: [formattedError(error)], extensions: { subscription: { ended: error.extensions.code as EndedExtension['subscription']['ended'] } } satisfies EndedExtension });

/**
 * GraphQL over SSE, distinct connections (what graphql-sse's client and GraphiQL read): the
 * framing's comments as heartbeats, an event per `next`, `complete` at the end. SSE has no error
 * event: an end with an error is a last `next` holding it, then `complete`; SHUTTING_DOWN cuts the
 * stream without `complete`, which the client reads as a dropped connection and retries (another router).
 */
const SSE: SubscriptionProtocol = {
  framing: FRAMINGS.sse,
  opening: FRAMINGS.sse.opening,
  heartbeat: FRAMINGS.sse.keepAlive,
  payload: FRAMINGS.sse.payload,
  last(error) {
    if (error?.extensions.code === 'SHUTTING_DOWN') return null;
    return error ? FRAMINGS.sse.payload(errorPayload(error)) : '';
  },
};

/**
 * Apollo's multipart subscription protocol, as Apollo Client reads it: every event a part
 * `{"payload": <result>}`; a part `{}` as heartbeat (at most 5 s apart, as the protocol asks), the
 * first at once; an end with an error is `{"payload": null, "errors": [...]}` (a transport error,
 * which Apollo Client raises as the subscription's error, never a normal end); then the framing's end.
 */
const HEARTBEAT_PART = FRAMINGS.multipart.payload('{}');
const MULTIPART: SubscriptionProtocol = {
  framing: FRAMINGS.multipart,
  parameters: 'subscriptionSpec=1.0',
  headers: { 'cache-control': 'no-store' },
  opening: `${FRAMINGS.multipart.opening}${HEARTBEAT_PART}`,
  heartbeat: HEARTBEAT_PART,
  payload: (json) => FRAMINGS.multipart.payload(`{"payload":${json}}`),
  last: (error) => (error ? FRAMINGS.multipart.payload(`{"payload":null,"errors":[${JSON.stringify(formattedError(error))}]}`) : ''),
};

const PROTOCOLS: Readonly<Record<Framing, SubscriptionProtocol>> = { sse: SSE, multipart: MULTIPART };

/** A subscription's HTTP stream, and the subscription's sink (it writes each event as it is completed); a client that goes away ends the subscription at once. */
export class HttpSubscriptionStream extends HttpStream implements SubscriptionSink {
  readonly #subscription: ClientSubscription;

  constructor(subscription: ClientSubscription, target: StreamTarget, protocol: SubscriptionProtocol, streams: HttpStreams, periodMs: number) {
    super(target, protocol, streams.wheelFor(protocol, periodMs));
    this.#subscription = subscription;
    subscription.attach(this);
  }

  /** False (the event is dropped for this client) when it is gone or has more than MAX_BUFFERED_BYTES waiting. */
  next(event: ExecutionResult): boolean {
    if (this.buffered > MAX_BUFFERED_BYTES) return false;
    return this.write(jsonOf(event));
  }

  end(error: GraphQLError | undefined): void {
    this.finish((this.protocol as SubscriptionProtocol).last(error));
  }

  /** The client left (or the stream was cut): the subscription ends with `client`. */
  closed(): void {
    this.stop();
    this.#subscription.cancel();
  }
}

/** The HTTP subscription streams of one router: the two ways a stream is written, on the router's HTTP streams. */
export interface HttpSubscriptionStreams {
  /** The response headers of a subscription's stream in `framing`. */
  headers(framing: Framing): Record<string, string>;
  /** Writes `subscription` to `target` from now on. */
  open(subscription: ClientSubscription, target: StreamTarget, framing: Framing): HttpSubscriptionStream;
  /** A subscription's response for a request that did not come through `serveHttpSubscriptions` (its stream is the body of the pipeline's response). */
  response(subscription: ClientSubscription, framing: Framing, fetchAPI: { Response: typeof Response }): Response;
}

/** The subscription streams on `streams`: SSE heartbeats every `heartbeatMs`, multipart ones at most 5 s apart (as Apollo's protocol asks). */
export function httpSubscriptionStreams(streams: HttpStreams, heartbeatMs: number): HttpSubscriptionStreams {
  const periodOf = (framing: Framing) => (framing === 'multipart' ? Math.min(heartbeatMs, MULTIPART_HEARTBEAT_MS) : heartbeatMs);
  const subscriptionStreams: HttpSubscriptionStreams = {
    headers: (framing) => headersOf(PROTOCOLS[framing]),
    open: (subscription, target, framing) => new HttpSubscriptionStream(subscription, target, PROTOCOLS[framing], streams, periodOf(framing)),
    response(subscription, framing, fetchAPI) {
      const target = new ReadableTarget(() => stream.closed());
      const stream = subscriptionStreams.open(subscription, target, framing);
      return streamResponse(target, PROTOCOLS[framing], fetchAPI);
    },
  };
  return subscriptionStreams;
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
  async function serve(request: IncomingMessage, response: ServerResponse, framing: Framing): Promise<void> {
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
    response.writeHead(200, Object.assign(headers, streams.headers(framing)));
    keepOnlyTheStream(request, response, streams.open(subscription, response, framing));
  }

  return function handle(request, response) {
    const url = request.url ?? '/';
    const pathname = url.includes('?') ? url.slice(0, url.indexOf('?')) : url;
    if (pathname !== options.path) return false;
    const framing = subscriptionFramingOf(request.headers.accept);
    if (!framing) return false;
    const method = request.method ?? 'GET';
    if (method !== 'GET' && method !== 'HEAD') {
      const length = request.headers['content-length'];
      if (length === undefined || !/^\d+$/.test(length) || Number(length) > options.maxBodyBytes) return false;
    }
    serve(request, response, framing).catch((error: unknown) => {
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
