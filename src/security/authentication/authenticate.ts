// The user-token authenticator (JWT, RFC 7519): picks the key source by issuer, checks size, shape and algorithm before any key is fetched, and answers a typed result.
import { decodeJwt, decodeProtectedHeader, type JWSHeaderParameters } from 'jose';
import { AUTH_FAILURE_REASONS, AuthConfigError, unauthenticated, type AuthResult } from './auth-result.js';
import { jwksVerifier, type JwksKeySource } from './jwks-key-source.js';
import {
  checkAllowList,
  DEV_ISSUER,
  devIssuerVerifier,
  publicKeyVerifier,
  sharedSecretVerifier,
  type DevIssuerOptions,
  type PublicKeySource,
  type SharedSecretSource,
  type Verifier,
} from './key-sources.js';
import { toPrincipal } from './principal.js';
import { classify, verifyToken } from './verify-token.js';

const DEFAULT_CLOCK_TOLERANCE_SECONDS = 30;
const DEFAULT_MAX_TOKEN_BYTES = 8_192;

/** A JWS in compact serialisation (RFC 7515 §7.1): three base64url parts. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export type KeySource = JwksKeySource | PublicKeySource | SharedSecretSource;

export interface AuthenticatorOptions {
  /** Where the identity provider's keys come from. Unset: only dev tokens are accepted (if `devIssuer` is set). */
  source?: KeySource;
  /**
   * Allowed `alg` values for `source` tokens (RFC 8725 §3.1). Default: the asymmetric algorithms the
   * key can use (every one of ASYMMETRIC_ALGORITHMS for a JWKS); for a shared secret, the HMAC
   * algorithms its length allows. `none` is never allowed; HS* only with a shared secret.
   */
  algorithms?: readonly string[];
  /** Accepted `iss` values (RFC 7519 §4.1.1, RFC 8725 §3.8). Unset: not checked. */
  issuer?: string | readonly string[];
  /** Accepted `aud` values (RFC 7519 §4.1.3, RFC 8725 §3.9): the token must name at least one. Unset: not checked. */
  audience?: string | readonly string[];
  /** Leeway for `exp` and `nbf`, in seconds. Default 30. */
  clockToleranceSeconds?: number;
  /** Longest token accepted, in bytes, checked before anything is parsed. Default 8192. */
  maxTokenBytes?: number;
  /** Also accept tokens minted by `mintDevToken` (development only). */
  devIssuer?: DevIssuerOptions;
}

export interface Authenticator {
  /** Verifies a bearer token. Never throws and never passes a token it could not verify. */
  authenticate(token: string): Promise<AuthResult>;
}

function asList(value: string | readonly string[] | undefined): string[] | undefined {
  return value === undefined ? undefined : typeof value === 'string' ? [value] : [...value];
}

/**
 * Builds the authenticator once, at start; throws AuthConfigError for an unsafe or unusable setup.
 *
 * Per token:
 * 1. Size bound, then shape (three base64url parts; a five-part JWE is refused), before any JSON is parsed.
 * 2. The protected header's `alg` must be on the allow-list of the key source that will verify it
 *    (RFC 8725 §3.1), so a refused algorithm never costs a key fetch; `none` never is.
 * 3. Key source by issuer (RFC 8725 §3.8: the key must belong to the issuer): a token claiming the dev
 *    issuer is verified with the dev keys only; every other token with `source`.
 * 4. jose checks the signature, then `iss`, `aud`, `nbf` and `exp` with the clock tolerance; `sub` and
 *    `exp` are required.
 * 5. Any failure becomes a typed result; nothing throws.
 */
export function createAuthenticator(options: AuthenticatorOptions): Authenticator {
  checkAllowList(options.algorithms);
  const clockTolerance = options.clockToleranceSeconds ?? DEFAULT_CLOCK_TOLERANCE_SECONDS;
  const maxTokenBytes = options.maxTokenBytes ?? DEFAULT_MAX_TOKEN_BYTES;
  if (!(clockTolerance >= 0)) throw new AuthConfigError('auth clockToleranceSeconds: must be zero or more');
  if (!(maxTokenBytes > 0)) throw new AuthConfigError('auth maxTokenBytes: must be positive');
  if (!options.source && !options.devIssuer) throw new AuthConfigError('auth: no key source and no dev issuer; nothing could ever verify');

  let main: Verifier | undefined;
  if (options.source) {
    const source = options.source;
    const built =
      source.kind === 'jwks' ? jwksVerifier(source, options.algorithms)
      : source.kind === 'public-key' ? publicKeyVerifier(source, options.algorithms)
      : source.kind === 'shared-secret' ? sharedSecretVerifier(source, options.algorithms)
      : undefined;
    if (!built) throw new AuthConfigError(`auth source: unknown kind ${(source as { kind: string }).kind}`);
    main = { ...built, issuer: asList(options.issuer), audience: asList(options.audience) };
  }

  if (options.devIssuer && asList(options.issuer)?.includes(DEV_ISSUER)) throw new AuthConfigError(`auth: the dev issuer ${DEV_ISSUER} is also a configured issuer`);
  const dev = options.devIssuer ? devIssuerVerifier(options.devIssuer) : undefined;

  return {
    async authenticate(token) {
      try {
        if (typeof token !== 'string' || token === '') return unauthenticated(AUTH_FAILURE_REASONS.malformed);
        // JWTs are ASCII; anything longer in UTF-16 units is longer in bytes too.
        if (token.length > maxTokenBytes) return unauthenticated(AUTH_FAILURE_REASONS.tooLarge);
        if (!COMPACT_JWS.test(token)) {
          return token.split('.').length === 5 ? unauthenticated(AUTH_FAILURE_REASONS.encrypted) : unauthenticated(AUTH_FAILURE_REASONS.malformed);
        }
        let header: JWSHeaderParameters;
        try {
          header = decodeProtectedHeader(token) as JWSHeaderParameters;
        } catch (error) {
          return unauthenticated(AUTH_FAILURE_REASONS.malformed, error);
        }
        if (typeof header.alg !== 'string') return unauthenticated(AUTH_FAILURE_REASONS.malformed);

        let verifier = main;
        if (dev) {
          let issuer: unknown;
          try {
            issuer = decodeJwt(token).iss;
          } catch (error) {
            return unauthenticated(AUTH_FAILURE_REASONS.malformed, error);
          }
          if (issuer === DEV_ISSUER) verifier = dev;
        }
        if (!verifier) return unauthenticated(AUTH_FAILURE_REASONS.issuer);
        if (!verifier.algorithms.includes(header.alg)) return unauthenticated(AUTH_FAILURE_REASONS.algorithmNotAllowed);
        return toPrincipal(await verifyToken(verifier, token, clockTolerance), token);
      } catch (error) {
        return classify(error);
      }
    },
  };
}
