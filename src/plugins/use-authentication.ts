// Identifies every request once at the edge: a bearer JWT verified with jose, or an anonymous caller where allowed.
import type { FetchAPI, Plugin } from 'graphql-yoga';
import { BoundedMap } from '../cache/bounded-map.js';
import type { AuthFailure } from '../security/authentication/auth-result.js';
import type { Authenticator } from '../security/authentication/authenticate.js';
import { extractBearer, wwwAuthenticate } from '../security/authentication/bearer-header.js';
import type { Principal } from '../security/authentication/principal.js';
import { requestStateOf } from '../request/request-state.js';
import type { RouterMetrics } from '../telemetry/metrics.js';
import { errorResponse } from './http-error-response.js';

export interface AuthenticationOptions {
  /** `required`: a token is needed; `optional`: anonymous allowed, a bad token is still refused. */
  mode: 'required' | 'optional';
  authenticator: Authenticator;
  metrics?: RouterMetrics;
  /**
   * Verified tokens remembered (least recently used dropped first), so a client's next request skips
   * the signature check. Default 10000: more than the callers active at once on one router; a token
   * dropped only costs its next request a signature check.
   */
  verifiedCacheSize?: number;
  now?: () => number;
}

/**
 * Before the body is parsed:
 * 1. A malformed Authorization header, a bad token (expired, not yet valid, wrong issuer or audience,
 *    disallowed algorithm, unknown key, oversized), or no token in `required` mode: 401
 *    UNAUTHENTICATED with `WWW-Authenticate` (RFC 6750 §3). Nothing reaches a subgraph.
 * 2. Keys that cannot be fetched: 503 AUTH_UNAVAILABLE, never a pass and never a 500.
 * 3. Otherwise the principal joins the request state (`requestStateOf(context).principal`; use-request-state,
 *    before this plugin, made it).
 * A verified token is remembered until its `exp` (bounded LRU), so repeated requests with the same
 * token skip the signature check; a token that fails is never remembered.
 */
const VERIFIED_HIT = { cache: 'verified_token', result: 'hit' } as const;
const VERIFIED_MISS = { cache: 'verified_token', result: 'miss' } as const;

export function useAuthentication(options: AuthenticationOptions): Plugin {
  const { authenticator, metrics } = options;
  const now = options.now ?? Date.now;
  const cacheSize = options.verifiedCacheSize ?? 10_000;
  // Keyed by the token itself: only a byte-identical token hits, and only until it expires. A signature
  // check costs far more than the lookup, and clients send the same token for many requests.
  const verified = new BoundedMap<string, Principal>(cacheSize);
  /** The principal of a token verified before and not yet expired, or undefined. Synchronous: a hit needs no promise. */
  function remembered(token: string): Principal | undefined {
    const known = verified.get(token);
    if (known === undefined) return undefined;
    if (known.expiresAt.getTime() <= now()) {
      verified.delete(token);
      return undefined;
    }
    metrics?.tokenCacheRequests.inc(VERIFIED_HIT);
    return known;
  }
  async function verify(token: string) {
    metrics?.tokenCacheRequests.inc(VERIFIED_MISS);
    const result = await authenticator.authenticate(token);
    if (result.ok) verified.set(token, result.principal);
    return result;
  }
  function refuse(result: AuthFailure, request: Request, context: unknown, endResponse: (response: Response) => void, fetchAPI: FetchAPI): void {
    metrics?.authFailures.inc({ reason: result.code === 'AUTH_UNAVAILABLE' ? 'unavailable' : 'invalid' });
    if (result.code === 'AUTH_UNAVAILABLE') {
      endResponse(errorResponse(fetchAPI, request, context, 'AUTH_UNAVAILABLE', `Cannot check the token now: ${result.reason}.`, { 'retry-after': '5' }));
      return;
    }
    endResponse(errorResponse(fetchAPI, request, context, 'UNAUTHENTICATED', `Invalid token: ${result.reason}.`, { 'www-authenticate': wwwAuthenticate(result) ?? 'Bearer realm="switchyard"' }));
  }
  return {
    // Synchronous unless the token must be verified: yoga then stays on its synchronous path for a
    // client whose token was seen before, instead of chaining a promise through every later hook.
    onRequestParse({ request, serverContext, endResponse, fetchAPI }): void | Promise<void> {
      const bearer = extractBearer(request.headers.get('authorization'));
      if (!bearer.ok) return refuse(bearer, request, serverContext, endResponse, fetchAPI);
      if (bearer.token === undefined) {
        if (options.mode === 'optional') return;
        metrics?.authFailures.inc({ reason: 'missing' });
        endResponse(errorResponse(fetchAPI, request, serverContext, 'UNAUTHENTICATED', 'Authentication required: send a bearer token.', { 'www-authenticate': wwwAuthenticate(undefined) ?? 'Bearer realm="switchyard"' }));
        return;
      }
      const state = requestStateOf(serverContext);
      const known = remembered(bearer.token);
      if (known) {
        state.principal = known;
        return;
      }
      return verify(bearer.token).then((result) => {
        if (!result.ok) refuse(result, request, serverContext, endResponse, fetchAPI);
        else state.principal = result.principal;
      });
    },
  };
}
