// Minting the dev issuer's user tokens (`switchyard token mint`), signed with the key ring's active dev key.
import { randomUUID } from 'node:crypto';
import type { JWTPayload } from 'jose';
import type { KeyRing } from '../signing-keys.js';
import { DEV_AUDIENCE, DEV_ISSUER } from './key-sources.js';

export interface DevTokenOptions {
  /** The subject (`sub`). */
  sub: string;
  /** Written as the space-separated `scope` claim. Default none. */
  scopes?: readonly string[];
  /** `client_id`. Default none. */
  clientId?: string;
  /** `roles`. Default none. */
  roles?: readonly string[];
  /** Lifetime, in seconds. Default 3600. */
  ttlSeconds?: number;
  /** `iss`. Default `switchyard-dev`; must match the authenticator's dev issuer. */
  issuer?: string;
  /** `aud`. Default `switchyard`. */
  audience?: string;
  /** Clock, ms since the epoch. Default `Date.now`. */
  now?: () => number;
}

/**
 * Signs a user token with the dev issuer's active key (`switchyard token mint`). It carries the
 * `kid` of that key, so routers find it in their KeyRing, and `typ: at+jwt` (RFC 9068 §2.1).
 */
export async function mintDevToken(keyRing: KeyRing, options: DevTokenOptions): Promise<string> {
  if (typeof options.sub !== 'string' || options.sub === '') throw new TypeError('mintDevToken: sub is required');
  const ttlSeconds = options.ttlSeconds ?? 3600;
  if (!Number.isFinite(ttlSeconds) || ttlSeconds <= 0) throw new TypeError('mintDevToken: ttlSeconds must be positive');
  const key = keyRing.activeKey('dev-issuer');
  const iat = Math.floor((options.now ?? Date.now)() / 1000);
  const claims: JWTPayload = { iss: options.issuer ?? DEV_ISSUER, aud: options.audience ?? DEV_AUDIENCE, sub: options.sub, iat, exp: iat + Math.ceil(ttlSeconds), jti: randomUUID() };
  if (options.scopes?.length) claims.scope = options.scopes.join(' ');
  if (options.clientId) claims.client_id = options.clientId;
  if (options.roles?.length) claims.roles = [...options.roles];
  return key.signJwt(claims);
}
