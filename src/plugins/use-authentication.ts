// Identifies every request once at the edge: a bearer JWT verified with jose, or an anonymous caller where allowed.
import type { Plugin, YogaInitialContext } from 'graphql-yoga';
import { extractBearer, wwwAuthenticate, type Authenticator, type Principal } from '../security/authenticate.js';
import type { RouterMetrics } from '../telemetry/metrics.js';
import { errorResponse } from './http-error-response.js';

export interface AuthenticationOptions {
  /** `required`: a token is needed; `optional`: anonymous allowed, a bad token is still refused. */
  mode: 'required' | 'optional';
  authenticator: Authenticator;
  metrics?: RouterMetrics;
  /** Verified tokens remembered (least recently used dropped first), so a client's next request skips the signature check. Default 10000. */
  verifiedCacheSize?: number;
  now?: () => number;
}

/** The caller of a GraphQL context, set by this plugin (undefined: anonymous). */
export function principalOf(context: unknown): Principal | undefined {
  return (context as { principal?: Principal } | undefined)?.principal;
}

/**
 * Before the body is parsed:
 * 1. A malformed Authorization header, a bad token (expired, not yet valid, wrong issuer or audience,
 *    disallowed algorithm, unknown key, oversized), or no token in `required` mode: 401
 *    UNAUTHENTICATED with `WWW-Authenticate` (RFC 6750 §3). Nothing reaches a subgraph.
 * 2. Keys that cannot be fetched: 503 AUTH_UNAVAILABLE, never a pass and never a 500.
 * 3. Otherwise the principal joins the GraphQL context (`context.principal`).
 * A verified token is remembered until its `exp` (bounded LRU), so repeated requests with the same
 * token skip the signature check; a token that fails is never remembered.
 */
const VERIFIED_HIT = { cache: 'verified_token', result: 'hit' } as const;
const VERIFIED_MISS = { cache: 'verified_token', result: 'miss' } as const;

export function useAuthentication(options: AuthenticationOptions): Plugin {
  const { authenticator, metrics } = options;
  const principals = new WeakMap<Request, Principal>();
  const now = options.now ?? Date.now;
  const cacheSize = options.verifiedCacheSize ?? 10_000;
  // Keyed by the token itself: only a byte-identical token hits, and only until it expires. A signature
  // check costs far more than the lookup, and clients send the same token for many requests.
  const verified = new Map<string, Principal>();
  async function verify(token: string) {
    const known = verified.get(token);
    if (known && known.expiresAt.getTime() > now()) {
      metrics?.cacheRequests.inc(VERIFIED_HIT);
      verified.delete(token);
      verified.set(token, known);
      return { ok: true as const, principal: known };
    }
    if (known) verified.delete(token);
    metrics?.cacheRequests.inc(VERIFIED_MISS);
    const result = await authenticator.authenticate(token);
    if (result.ok) {
      verified.set(token, result.principal);
      if (verified.size > cacheSize) verified.delete(verified.keys().next().value as string);
    }
    return result;
  }
  return {
    async onRequestParse({ request, endResponse, fetchAPI }) {
      const bearer = extractBearer(request.headers.get('authorization'));
      if (bearer.ok && bearer.token === undefined) {
        if (options.mode === 'optional') return;
        metrics?.authFailures.inc({ reason: 'missing' });
        endResponse(errorResponse(fetchAPI, request, 401, 'UNAUTHENTICATED', 'Authentication required: send a bearer token.', { 'www-authenticate': wwwAuthenticate(undefined) ?? 'Bearer realm="switchyard"' }));
        return;
      }
      const result = bearer.ok ? await verify(bearer.token!) : bearer;
      if (result.ok) {
        principals.set(request, result.principal);
        return;
      }
      metrics?.authFailures.inc({ reason: result.code === 'AUTH_UNAVAILABLE' ? 'unavailable' : 'invalid' });
      if (result.code === 'AUTH_UNAVAILABLE') {
        endResponse(errorResponse(fetchAPI, request, 503, 'AUTH_UNAVAILABLE', `Cannot check the token now: ${result.reason}.`, { 'retry-after': '5' }));
        return;
      }
      endResponse(errorResponse(fetchAPI, request, 401, 'UNAUTHENTICATED', `Invalid token: ${result.reason}.`, { 'www-authenticate': wwwAuthenticate(result) ?? 'Bearer realm="switchyard"' }));
    },
    onContextBuilding({ context, extendContext }) {
      const principal = principals.get((context as YogaInitialContext).request);
      if (principal) extendContext({ principal } as never);
    },
  };
}
