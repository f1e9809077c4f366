// The principal: who made the request, read from a verified token's claims (sub, scope/scp, client_id/azp, roles, exp).
import type { JWTPayload } from 'jose';
import type { Principal } from '../../request/principal.js';
import { AUTH_FAILURE_REASONS, unauthenticated, type AuthResult } from './auth-result.js';

export type { Principal } from '../../request/principal.js';

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
