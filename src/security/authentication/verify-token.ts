// Verifying a compact JWS with jose against one key source, and classifying every failure into a client-safe reason (UNAUTHENTICATED or AUTH_UNAVAILABLE).
import { jwtVerify, type CryptoKey, type JWTPayload, type JWTVerifyOptions } from 'jose';
import { AUTH_FAILURE_REASONS, failure, unauthenticated, type AuthFailure } from './auth-result.js';
import type { Verifier } from './key-sources.js';

/** The key source could not give keys (JWKS unreachable, timed out, not 200, not a JWKS). */
export class KeySourceUnavailableError extends Error {
  constructor(cause: unknown) {
    super('the key source is unavailable', { cause });
    this.name = 'KeySourceUnavailableError';
  }
}

/** True for errors that say something about the token rather than about the key source. */
export function isTokenKeyError(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === 'ERR_JWKS_NO_MATCHING_KEY' || code === 'ERR_JWKS_MULTIPLE_MATCHING_KEYS' || code === 'ERR_JOSE_NOT_SUPPORTED' || code === 'ERR_JOSE_ALG_NOT_ALLOWED';
}

/**
 * Checks the signature with the verifier's key (trying each candidate when a JWKS holds several that
 * fit a token without `kid`), then `iss`, `aud`, `nbf` and `exp` with the clock tolerance, in seconds;
 * `sub` and `exp` are required. Throws jose's errors (or KeySourceUnavailableError) for `classify`.
 */
export async function verifyToken(verifier: Verifier, token: string, clockTolerance: number): Promise<JWTPayload> {
  const verifyOptions: JWTVerifyOptions = {
    algorithms: [...verifier.algorithms],
    issuer: verifier.issuer,
    audience: verifier.audience,
    clockTolerance,
    requiredClaims: ['sub', 'exp'],
  };
  if (typeof verifier.key !== 'function') return (await jwtVerify(token, verifier.key, verifyOptions)).payload;
  try {
    return (await jwtVerify(token, verifier.key, verifyOptions)).payload;
  } catch (error) {
    // A JWKS may hold several keys that fit a token without `kid`: jose hands them over to try in turn.
    if ((error as { code?: string }).code !== 'ERR_JWKS_MULTIPLE_MATCHING_KEYS') throw error;
    for await (const candidate of error as AsyncIterable<CryptoKey>) {
      try {
        return (await jwtVerify(token, candidate, verifyOptions)).payload;
      } catch (inner) {
        if ((inner as { code?: string }).code !== 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED') throw inner;
      }
    }
    throw error;
  }
}

/** Maps every jose error (and ours) to a client-safe reason. */
export function classify(error: unknown): AuthFailure {
  if (error instanceof KeySourceUnavailableError) return failure('AUTH_UNAVAILABLE', AUTH_FAILURE_REASONS.keysUnavailable, undefined, error.cause);
  const { code, claim } = (error ?? {}) as { code?: string; claim?: string };
  switch (code) {
    case 'ERR_JWT_EXPIRED':
      return unauthenticated(AUTH_FAILURE_REASONS.expired, error);
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      switch (claim) {
        case 'nbf':
          return unauthenticated(AUTH_FAILURE_REASONS.notYetValid, error);
        case 'iss':
          return unauthenticated(AUTH_FAILURE_REASONS.issuer, error);
        case 'aud':
          return unauthenticated(AUTH_FAILURE_REASONS.audience, error);
        case 'typ':
          return unauthenticated(AUTH_FAILURE_REASONS.type, error);
        case 'sub':
          return unauthenticated(AUTH_FAILURE_REASONS.noSubject, error);
        case 'exp':
          return unauthenticated(AUTH_FAILURE_REASONS.noExpiry, error);
        default:
          // `iat` not a number, and the like: malformed claims.
          return unauthenticated(AUTH_FAILURE_REASONS.malformed, error);
      }
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return unauthenticated(AUTH_FAILURE_REASONS.algorithmNotAllowed, error);
    case 'ERR_JOSE_NOT_SUPPORTED':
      return unauthenticated(AUTH_FAILURE_REASONS.algorithmNotSupported, error);
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return unauthenticated(AUTH_FAILURE_REASONS.badSignature, error);
    case 'ERR_JWKS_NO_MATCHING_KEY':
      return unauthenticated(AUTH_FAILURE_REASONS.unknownKey, error);
    case 'ERR_JWKS_MULTIPLE_MATCHING_KEYS':
      return unauthenticated(AUTH_FAILURE_REASONS.ambiguousKey, error);
    case 'ERR_JWT_INVALID':
    case 'ERR_JWS_INVALID':
      return unauthenticated(AUTH_FAILURE_REASONS.malformed, error);
    case 'ERR_JWKS_INVALID':
    case 'ERR_JWKS_TIMEOUT':
      // Only reachable from a key source; wrapped above, kept here so no source error ever reads as the client's.
      return failure('AUTH_UNAVAILABLE', AUTH_FAILURE_REASONS.keysUnavailable, undefined, error);
    default:
      // A key that does not fit its algorithm (an RSA key under 2048 bits, say) or anything unforeseen: refuse, log the cause.
      return unauthenticated(AUTH_FAILURE_REASONS.unverifiable, error);
  }
}
