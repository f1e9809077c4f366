// The demo subgraphs' own check of the router's per-subgraph tokens: a copy owned here, as another team would write it (jose and node built-ins only).
import { createLocalJWKSet, createRemoteJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet, type JWK, type JWTPayload, type JWTVerifyGetKey } from 'jose';

/** Asymmetric JWS algorithms only: the router signs with a private key and publishes the public one. */
const DEFAULT_ALGORITHMS = ['ES256', 'ES384', 'ES512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'EdDSA'];

export interface TokenVerifierOptions {
  /**
   * This subgraph's name. The token's `aud` must contain it (RFC 7519 §4.1.3, RFC 8725 §3.9): a token
   * the router minted for another subgraph is refused here, so a token stolen from one is useless at the others.
   */
  audience: string;
  /** Expected `iss`. Default `switchyard` (the router's). */
  issuer?: string;
  /** The router's JWKS, e.g. `http://127.0.0.1:4000/.well-known/jwks.json`. Give this or `keys`. */
  jwksUrl?: string;
  /** Fixed public keys instead of a URL (tests, or keys distributed out of band). */
  keys?: JSONWebKeySet | JWK[];
  /** Allowed `alg` values (RFC 8725 §3.1). Default the asymmetric ones; HS* and `none` are refused whatever this says. */
  algorithms?: string[];
  /** Leeway for `exp` and `nbf`, in seconds. Default 5: router and subgraphs share a data centre, and tokens live ~60 s. */
  clockToleranceSeconds?: number;
  /** Longest token accepted, in bytes, checked before parsing. Default 8192. */
  maxTokenBytes?: number;
  /** When set, `act.sub` must equal it (RFC 8693 §4.1): only tokens the router obtained for a user pass. Default unchecked. */
  actor?: string;
  /** When set, the `typ` header must equal it (RFC 8725 §3.11), e.g. `at+jwt` for the router's own tokens. Default unchecked. */
  type?: string;
  /** Timeout of one JWKS fetch, in ms. Default 3000. */
  jwksTimeoutMs?: number;
  /** Least time between refetches caused by an unknown `kid` (a router rotated its key), in ms. Default 30 000. */
  jwksCooldownMs?: number;
  /** Clock, ms since the epoch. Default `Date.now`. */
  now?: () => number;
}

export interface VerifiedToken {
  ok: true;
  /** The user the router acts for (`anonymous` when the request had none). */
  subject: string;
  /** From the space-separated `scope` claim. */
  scopes: string[];
  /** `act.sub`: who is acting for the subject. */
  actor: string | undefined;
  clientId: string | undefined;
  expiresAt: Date;
  claims: JWTPayload;
}

export interface RefusedToken {
  ok: false;
  /** 401: no usable token. 503: the router's keys could not be fetched (try again; never a pass). */
  status: 401 | 503;
  /** Short and safe to return to the caller. */
  reason: string;
  /** For logs only. */
  cause?: unknown;
}

export type TokenCheck = VerifiedToken | RefusedToken;

export interface TokenVerifier {
  /** Checks an `Authorization` header value (RFC 6750 §2.1: `Bearer <token>`). Never throws. */
  verify(authorization: string | null | undefined): Promise<TokenCheck>;
  /** Checks a bare token. Never throws. */
  verifyToken(token: string): Promise<TokenCheck>;
}

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

const refuse = (reason: string, cause?: unknown): RefusedToken => ({ ok: false, status: 401, reason, ...(cause === undefined ? {} : { cause }) });

/** Errors of the key source itself (unreachable, timeout, non-200, not a JWKS), as opposed to the token's. */
class KeysUnavailable extends Error {}

function reasonFor(error: unknown, audience: string): RefusedToken {
  if (error instanceof KeysUnavailable) return { ok: false, status: 503, reason: 'router keys unavailable', cause: error.cause };
  const { code, claim } = (error ?? {}) as { code?: string; claim?: string };
  switch (code) {
    case 'ERR_JWT_EXPIRED':
      return refuse('token expired', error);
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      if (claim === 'aud') return refuse(`token is not for ${audience}`, error);
      if (claim === 'iss') return refuse('token issuer not accepted', error);
      if (claim === 'nbf') return refuse('token not yet valid', error);
      if (claim === 'typ') return refuse('token type not accepted', error);
      if (claim === 'exp' || claim === 'sub') return refuse(`token has no ${claim}`, error);
      return refuse('token is malformed', error);
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
    case 'ERR_JOSE_NOT_SUPPORTED':
      return refuse('token algorithm not allowed', error);
    case 'ERR_JWKS_NO_MATCHING_KEY':
    case 'ERR_JWKS_MULTIPLE_MATCHING_KEYS':
      return refuse('token signing key not recognised', error);
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return refuse('token signature invalid', error);
    default:
      return refuse(code === 'ERR_JWT_INVALID' || code === 'ERR_JWS_INVALID' ? 'token is malformed' : 'token could not be verified', error);
  }
}

/**
 * Builds the verifier a subgraph puts in front of its resolvers.
 *
 * 1. Size, shape and `alg` (allow-listed, never `none` or HS*: RFC 8725 §3.1) before any key lookup.
 * 2. Signature with the router's keys (a JWKS URL refetched once per cooldown when a new `kid`
 *    appears after a rotation), then `iss`, `aud` (this subgraph), `exp`, `nbf`; `sub` and `exp` required.
 * 3. Optionally `act.sub` and `typ`. Every failure is a typed refusal; a JWKS outage is 503.
 */
export function createTokenVerifier(options: TokenVerifierOptions): TokenVerifier {
  if (!options.audience) throw new TypeError('createTokenVerifier: audience (this subgraph\'s name) is required');
  if (!options.jwksUrl === !options.keys) throw new TypeError('createTokenVerifier: give exactly one of jwksUrl and keys');
  const algorithms = (options.algorithms ?? DEFAULT_ALGORITHMS).filter((alg) => DEFAULT_ALGORITHMS.includes(alg));
  if (algorithms.length === 0) throw new TypeError('createTokenVerifier: no allowed asymmetric algorithm');
  const issuer = options.issuer ?? 'switchyard';
  const clockTolerance = options.clockToleranceSeconds ?? 5;
  const maxTokenBytes = options.maxTokenBytes ?? 8_192;
  const now = options.now ?? Date.now;

  let getKey: JWTVerifyGetKey;
  if (options.jwksUrl) {
    const remote = createRemoteJWKSet(new URL(options.jwksUrl), {
      timeoutDuration: options.jwksTimeoutMs ?? 3_000,
      cooldownDuration: options.jwksCooldownMs ?? 30_000,
    });
    getKey = async function resolveRouterKey(header, token) {
      try {
        return await remote(header, token);
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (code === 'ERR_JWKS_NO_MATCHING_KEY' || code === 'ERR_JWKS_MULTIPLE_MATCHING_KEYS' || code === 'ERR_JOSE_NOT_SUPPORTED') throw error;
        throw new KeysUnavailable('router keys unavailable', { cause: error });
      }
    };
  } else {
    const keys = options.keys as JSONWebKeySet | JWK[];
    getKey = createLocalJWKSet(Array.isArray(keys) ? { keys } : keys);
  }

  async function verifyToken(token: string): Promise<TokenCheck> {
    try {
      if (typeof token !== 'string' || token.length > maxTokenBytes) return refuse('token too large');
      if (!COMPACT_JWS.test(token)) return refuse('token is malformed');
      let alg: unknown;
      try {
        alg = decodeProtectedHeader(token).alg;
      } catch (error) {
        return refuse('token is malformed', error);
      }
      if (typeof alg !== 'string' || !algorithms.includes(alg)) return refuse('token algorithm not allowed');
      const { payload } = await jwtVerify(token, getKey, {
        algorithms,
        issuer,
        audience: options.audience,
        clockTolerance,
        currentDate: new Date(now()),
        requiredClaims: ['sub', 'exp'],
        ...(options.type ? { typ: options.type } : {}),
      });
      const act = payload.act as { sub?: unknown } | undefined;
      const actor = act && typeof act === 'object' && typeof act.sub === 'string' ? act.sub : undefined;
      if (options.actor !== undefined && actor !== options.actor) return refuse('token actor not accepted');
      if (typeof payload.sub !== 'string') return refuse('token has no sub');
      return {
        ok: true,
        subject: payload.sub,
        scopes: typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : [],
        actor,
        clientId: typeof payload.client_id === 'string' ? payload.client_id : undefined,
        expiresAt: new Date((payload.exp as number) * 1000),
        claims: payload,
      };
    } catch (error) {
      return reasonFor(error, options.audience);
    }
  }

  return {
    verifyToken,
    async verify(authorization) {
      if (authorization === undefined || authorization === null || authorization.trim() === '') return refuse('missing bearer token');
      const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(authorization.trim());
      if (!match) return refuse('malformed authorization header');
      return verifyToken(match[1]);
    },
  };
}
