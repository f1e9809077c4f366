// The `graphql-transport-ws` protocol's messages as the router reads them: parsing, close reasons, the token in `connection_init`.
import type { RawData } from 'ws';

export interface SubscribePayload {
  query: string;
  variables?: Record<string, unknown> | null;
  operationName?: string | null;
  extensions?: Record<string, unknown> | null;
}

/** A message of the protocol the router reads (a client's). */
type Message =
  | { type: 'connection_init'; payload?: Record<string, unknown> | null }
  | { type: 'ping' | 'pong'; payload?: Record<string, unknown> | null }
  | { type: 'subscribe'; id: string; payload: SubscribePayload }
  | { type: 'complete'; id: string };

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isOptionalObject = (value: unknown) => value === undefined || value === null || isObject(value);
const isOptionalString = (value: unknown) => value === undefined || value === null || typeof value === 'string';

/** A message of the protocol, or why it is not one (the socket then closes with 4400). */
export function parseMessage(text: string): Message | string {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return 'Invalid message received';
  }
  if (!isObject(message) || typeof message.type !== 'string') return 'Invalid message received';
  switch (message.type) {
    case 'connection_init':
    case 'ping':
    case 'pong':
      return isOptionalObject(message.payload) ? (message as Message) : `Invalid ${message.type} payload`;
    case 'subscribe': {
      const payload = message.payload;
      if (typeof message.id !== 'string' || message.id.length === 0) return 'Invalid subscribe id';
      if (!isObject(payload) || typeof payload.query !== 'string' || !isOptionalObject(payload.variables) || !isOptionalString(payload.operationName) || !isOptionalObject(payload.extensions)) {
        return 'Invalid subscribe payload';
      }
      return message as Message;
    }
    case 'complete':
      return typeof message.id === 'string' && message.id.length > 0 ? (message as Message) : 'Invalid complete id';
    default:
      return `Unexpected message of type ${message.type} received`;
  }
}

export function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data as ArrayBuffer).toString('utf8');
}

/** A close reason fits in 123 bytes (RFC 6455 §5.5). */
export function closeReason(text: string): string {
  return Buffer.byteLength(text) <= 123 ? text : Buffer.from(text).subarray(0, 120).toString('utf8') + '...';
}

/** The bearer token a client put in `connection_init` (browsers cannot set headers on a WebSocket). */
export function connectionToken(params: Record<string, unknown> | null | undefined): string | undefined {
  if (!params) return undefined;
  for (const key of ['authorization', 'Authorization']) {
    const value = params[key];
    if (typeof value === 'string' && value.length > 0) return value;
  }
  const headers = params.headers as Record<string, unknown> | undefined;
  return typeof headers?.authorization === 'string' ? headers.authorization : typeof headers?.Authorization === 'string' ? headers.Authorization : undefined;
}
