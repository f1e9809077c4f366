// The principal: who made the request, read from a verified token's claims (sub, scope/scp, client_id/azp, roles, exp).
import type { JWTPayload } from 'jose';
import { AUTH_FAILURE_REASONS, unauthenticated, type AuthResult } from './auth-result.js';

/** Who made the request, after the token verified. */
export interface Principal {
  /** `sub` (required: RFC 9068 §2.2 makes it mandatory in JWT access tokens). */
  readonly subject: string;
  /** `scope` (space-separated, RFC 8693 §4.2 / RFC 9068 §2.2.3) or `scp` (array or string, as some IdPs send it). */
  readonly scopes: string[];
  /** `client_id` (RFC 8693 §4.3, RFC 9068 §2.2), else `azp`. */
  readonly clientId?: string;
  /** `roles` (RFC 9068 §2.2.3.1), when it is an array of strings. */
  readonly roles?: string[];
  /** Every verified claim. */
  readonly claims: JWTPayload;
  /**
   * The raw token, for the token exchange (`subject_token`). Not enumerable: logging or serialising a
   * principal never writes it out.
   */
  readonly token: string;
  /** `exp` (required here: a token without an expiry would be valid forever). */
  readonly expiresAt: Date;
}

function parseScopes(payload: JWTPayload): string[] {
  const raw = payload.scope ?? payload.scp;
  const list = typeof raw === 'string' ? raw.split(' ') : Array.isArray(raw) ? raw.filter((s): s is string => typeof s === 'string') : [];
  return [...new Set(list.filter((scope) => scope !== ''))];
}

/** The principal of a verified token, or UNAUTHENTICATED when it lacks `sub` or `exp`. The token is kept, not enumerable. */
export function toPrincipal(payload: JWTPayload, token: string): AuthResult {
  if (typeof payload.sub !== 'string' || payload.sub === '') return unauthenticated(AUTH_FAILURE_REASONS.noSubject);
  if (typeof payload.exp !== 'number') return unauthenticated(AUTH_FAILURE_REASONS.noExpiry);
  const clientId = typeof payload.client_id === 'string' ? payload.client_id : typeof payload.azp === 'string' ? payload.azp : undefined;
  const roles = Array.isArray(payload.roles) ? payload.roles.filter((r): r is string => typeof r === 'string') : undefined;
  const principal = {
    subject: payload.sub,
    scopes: parseScopes(payload),
    ...(clientId !== undefined ? { clientId } : {}),
    ...(roles !== undefined ? { roles } : {}),
    claims: payload,
    expiresAt: new Date(payload.exp * 1000),
  } as Principal;
  Object.defineProperty(principal, 'token', { value: token, enumerable: false });
  return { ok: true, principal };
}
