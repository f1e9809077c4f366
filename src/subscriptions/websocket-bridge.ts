// How the WebSocket transport gets a subscribe request's result back from the router's HTTP pipeline, unserialised.
import type { ExecutionResult } from 'graphql';

/** The server-context key the WebSocket transport sets on the requests it makes (websocket-server.ts). */
export const WEBSOCKET_BRIDGE = Symbol('switchyard.websocket-bridge');

/** What the WebSocket transport receives back: the result as execution left it (a stream, or a refusal). */
export interface WebSocketBridge {
  result?: ExecutionResult | AsyncIterable<ExecutionResult>;
}
