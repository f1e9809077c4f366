// How the router's own subscription transports get a request's result back from the HTTP pipeline, unserialised.
import type { ExecutionResult } from 'graphql';
import type { ClientSubscription } from './open-subscriptions.js';

/** The server-context key the router's transports set on the requests they pass to the pipeline (websocket-server.ts, http-subscriptions.ts). */
export const STREAM_BRIDGE = Symbol('switchyard.stream-bridge');

/**
 * What a transport receives back (decision 032). `ws`: every result, unserialised (the subscription
 * itself, or an answer, or a refusal), since the transport writes graphql-ws messages. `http`: only
 * a subscription; any other answer is the pipeline's own response.
 */
export interface StreamBridge {
  readonly transport: 'ws' | 'http';
  subscription?: ClientSubscription;
  result?: ExecutionResult | AsyncIterable<ExecutionResult>;
}
