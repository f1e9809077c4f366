// How the router's own subscription transports get a request's result back from the HTTP pipeline, unserialised.
import type { ExecutionResult } from 'graphql';

/** The server-context key the router's transports set on the requests they pass to the pipeline (websocket-server.ts, http-subscriptions.ts). */
export const STREAM_BRIDGE = Symbol('switchyard.stream-bridge');

/**
 * The marker a transport puts in the server context of its request (decision 032). A subscription
 * does not come back through it: it is on the request state (`requestStateOf(serverContext).subscription`),
 * and the pipeline answers with an empty response whose headers are the plugins' (x-request-id...).
 * `ws` also takes every other result unserialised (an answer, a refusal), since the transport
 * writes graphql-ws messages; `http` takes only subscriptions, any other answer is the pipeline's own response.
 */
export interface StreamBridge {
  readonly transport: 'ws' | 'http';
  /** `ws` only: the result of an operation that is not a subscription, as the pipeline made it. */
  result?: ExecutionResult | AsyncIterable<ExecutionResult>;
}
