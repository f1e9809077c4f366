// The `Authorization: Bearer` header (RFC 6750): reading the token out of a request, and the `WWW-Authenticate` challenge of a 401.
import { AUTH_FAILURE_REASONS, failure, type AuthFailure } from './auth-result.js';

/** RFC 6750 §2.1 b64token. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

export type BearerExtraction = { ok: true; token: string | undefined } | AuthFailure;

/**
 * Reads `Authorization: Bearer <token>` (RFC 6750 §2.1). No header: `{ ok: true, token: undefined }`
 * (anonymous, for the auth mode to decide). Anything else that is not exactly one bearer token is
 * UNAUTHENTICATED with `invalid_request`: another scheme, an empty token, two headers folded into
 * one (`a, b`), characters outside b64token.
 */
export function extractBearer(authorization: string | null | undefined): BearerExtraction {
  if (authorization === undefined || authorization === null) return { ok: true, token: undefined };
  const value = authorization.trim();
  const space = value.indexOf(' ');
  const scheme = space === -1 ? value : value.slice(0, space);
  if (scheme === '') return failure('UNAUTHENTICATED', AUTH_FAILURE_REASONS.malformedHeader, 'invalid_request');
  // RFC 9110 §11.1: the scheme is case-insensitive.
  if (scheme.toLowerCase() !== 'bearer') return failure('UNAUTHENTICATED', AUTH_FAILURE_REASONS.unsupportedScheme, 'invalid_request');
  const token = space === -1 ? '' : value.slice(space + 1).trimStart();
  if (token === '') return failure('UNAUTHENTICATED', AUTH_FAILURE_REASONS.missingToken, 'invalid_request');
  if (!B64TOKEN.test(token)) return failure('UNAUTHENTICATED', AUTH_FAILURE_REASONS.malformedHeader, 'invalid_request');
  return { ok: true, token };
}

/**
 * The `WWW-Authenticate` value of a 401 (RFC 6750 §3): no error code when no credentials were sent
 * (§3.1), else `invalid_request` / `invalid_token` with the reason. Undefined for AUTH_UNAVAILABLE
 * (a 503 challenges nobody).
 */
export function wwwAuthenticate(failed: AuthFailure | undefined, realm = 'switchyard'): string | undefined {
  if (!failed) return `Bearer realm="${realm}"`;
  if (failed.code !== 'UNAUTHENTICATED') return undefined;
  return `Bearer realm="${realm}", error="${failed.error ?? 'invalid_token'}", error_description="${failed.reason}"`;
}
