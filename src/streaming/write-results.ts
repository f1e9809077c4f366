// A stream of results (a deferred query's payloads) written as they come to the body of the pipeline's response.
import type { ExecutionResult } from 'graphql';
import { ReadableTarget, streamResponse, type HttpStreams, type StreamProtocol } from './http-stream.js';
import { jsonOf } from './result-json.js';

/**
 * The response that writes `results` in `protocol`: each result as soon as the iterator gives it,
 * then the framing's end. A client that leaves returns the iterator at once (its generator's
 * `finally` ends the stream's record); an iterator that throws cuts the stream without its end, so
 * the client reads a broken answer, never a complete one.
 */
export function writeResults(results: AsyncIterable<ExecutionResult>, streams: HttpStreams, protocol: StreamProtocol, heartbeatMs: number, fetchAPI: { Response: typeof Response }): Response {
  const iterator = results[Symbol.asyncIterator]();
  const target = new ReadableTarget(function clientLeft() {
    void iterator.return?.();
  });
  const stream = streams.open(target, protocol, heartbeatMs);
  void (async function pump() {
    try {
      for (;;) {
        const { value, done } = await iterator.next();
        if (done) break;
        if (!stream.write(jsonOf(value))) return;
      }
      stream.finish();
    } catch {
      stream.finish(null);
    }
  })();
  return streamResponse(target, protocol, fetchAPI);
}
