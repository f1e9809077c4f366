// Apollo's multipart subscription protocol (`multipart/mixed; subscriptionSpec=1.0`): each event a part wrapped in `payload`, heartbeats, errors that end the stream.
import type { ExecutionResult } from 'graphql';
import { parseAccept } from '../request/media-type.js';
import { endOf } from './open-subscriptions.js';

/** Whether the client reads Apollo's multipart subscription protocol (Apollo Client sends `subscriptionSpec=1.0`). */
export function readsMultipartSubscriptions(accept: string | null | undefined): boolean {
  return parseAccept(accept).some((range) => range.type === 'multipart' && range.subtype === 'mixed' && range.params.get('subscriptionspec') === '1.0');
}

const BOUNDARY = 'graphql';
/**
 * Each part is closed by the boundary that follows it, written with the part: a reader hands a part
 * on only once it sees the next boundary, so a part whose boundary waited for the next one would
 * reach the client a heartbeat late.
 */
const OPENING = `\r\n--${BOUNDARY}`;
const part = (body: string) => `\r\nContent-Type: application/json; charset=utf-8\r\n\r\n${body}\r\n--${BOUNDARY}`;
const END = '--\r\n';

/**
 * The protocol as Apollo Client reads it:
 * 1. every event is a part `{"payload": <result>}`;
 * 2. a part `{}` every `heartbeatMs` while nothing else is sent (at most 5 s apart, as the protocol asks),
 *    so proxies keep the connection and the client sees it alive;
 * 3. a subscription that ends with an error (TOKEN_EXPIRED, FORBIDDEN, SUBGRAPH_UNAVAILABLE...) sends
 *    `{"payload": null, "errors": [...]}`: a transport error, which Apollo Client raises as an error,
 *    never a normal end; then the closing boundary.
 * `serialize` writes a result as the router's other processors do (yoga strips its internals).
 */
export function multipartSubscriptionResponse(
  events: AsyncIterable<ExecutionResult>,
  fetchAPI: { Response: typeof Response; ReadableStream: typeof ReadableStream; TextEncoder: typeof TextEncoder },
  heartbeatMs: number,
  serialize: (result: ExecutionResult) => string,
): Response {
  const encoder = new fetchAPI.TextEncoder();
  const iterator = events[Symbol.asyncIterator]();
  let heartbeat: NodeJS.Timeout | undefined;
  const stream = new fetchAPI.ReadableStream<Uint8Array>({
    start(controller) {
      heartbeat = setInterval(() => {
        if (controller.desiredSize !== null && controller.desiredSize > 0) controller.enqueue(encoder.encode(part('{}')));
      }, Math.min(heartbeatMs, 5_000));
      heartbeat.unref();
      // The first part at once: some proxies hold a response until its first bytes.
      controller.enqueue(encoder.encode(OPENING + part('{}')));
    },
    async pull(controller) {
      let next: IteratorResult<ExecutionResult>;
      try {
        next = await iterator.next();
      } catch (error) {
        clearInterval(heartbeat);
        controller.error(error);
        return;
      }
      if (next.done) {
        clearInterval(heartbeat);
        controller.enqueue(encoder.encode(END));
        controller.close();
        return;
      }
      const ended = endOf(next.value);
      // A transport error: Apollo Client raises it as the subscription's error.
      const body = ended ? `{"payload":null,${serialize({ errors: [ended.error] }).slice(1)}` : `{"payload":${serialize(next.value)}}`;
      controller.enqueue(encoder.encode(part(body)));
    },
    async cancel() {
      clearInterval(heartbeat);
      await iterator.return?.();
    },
  });
  return new fetchAPI.Response(stream, {
    status: 200,
    headers: { 'content-type': `multipart/mixed; boundary="${BOUNDARY}"; subscriptionSpec=1.0`, 'cache-control': 'no-store' },
  });
}
