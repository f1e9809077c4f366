// What authenticating a request can come to: the typed success and failure results, the client-facing reasons, and the start-time configuration error.
import type { Principal } from '../../request/principal.js';

export type AuthFailureCode = 'UNAUTHENTICATED' | 'AUTH_UNAVAILABLE';

export interface AuthFailure {
  readonly ok: false;
  /** UNAUTHENTICATED → 401; AUTH_UNAVAILABLE → 503 (the keys could not be fetched: neither the client's fault nor a pass). */
  readonly code: AuthFailureCode;
  /** Short and safe to show clients (one of AUTH_FAILURE_REASONS): says what is wrong, never why a signature failed in detail. */
  readonly reason: string;
  /** RFC 6750 §3.1 error code for `WWW-Authenticate`; absent for AUTH_UNAVAILABLE. */
  readonly error?: 'invalid_request' | 'invalid_token';
  /** The underlying error, for logs only; never send it to a client. */
  readonly cause?: unknown;
}

export interface AuthSuccess {
  readonly ok: true;
  readonly principal: Principal;
}

export type AuthResult = AuthSuccess | AuthFailure;

/** Every client-facing reason, in one place so a test can pin them. */
export const AUTH_FAILURE_REASONS = {
  malformedHeader: 'malformed authorization header',
  unsupportedScheme: 'unsupported authorization scheme',
  missingToken: 'missing bearer token',
  tooLarge: 'token too large',
  malformed: 'token is malformed',
  encrypted: 'encrypted tokens are not accepted',
  algorithmNotAllowed: 'token algorithm not allowed',
  algorithmNotSupported: 'token algorithm not supported',
  unknownKey: 'token signing key not recognised',
  ambiguousKey: 'token signing key is ambiguous',
  badSignature: 'token signature invalid',
  expired: 'token expired',
  notYetValid: 'token not yet valid',
  issuer: 'token issuer not accepted',
  audience: 'token audience not accepted',
  type: 'token type not accepted',
  noSubject: 'token has no subject',
  noExpiry: 'token has no expiry',
  unverifiable: 'token could not be verified',
  keysUnavailable: 'identity provider keys unavailable',
} as const;

/** A configuration that would be unsafe or cannot work; thrown by createAuthenticator at start. */
export class AuthConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AuthConfigError';
  }
}

export function failure(code: AuthFailureCode, reason: string, error?: AuthFailure['error'], cause?: unknown): AuthFailure {
  const result: { -readonly [K in keyof AuthFailure]: AuthFailure[K] } = { ok: false, code, reason };
  if (error) result.error = error;
  if (cause !== undefined) result.cause = cause;
  return result;
}

/** UNAUTHENTICATED with RFC 6750 `invalid_token`. */
export const unauthenticated = (reason: string, cause?: unknown) => failure('UNAUTHENTICATED', reason, 'invalid_token', cause);
