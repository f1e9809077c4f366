// Verifies incoming user tokens (JWT, RFC 7519) with jose, and mints the dev issuer's tokens: key sources, allow-listed algorithms, claim checks, typed results.
import { createPublicKey, randomUUID, type KeyObject } from 'node:crypto';
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  decodeJwt,
  decodeProtectedHeader,
  jwksCache,
  jwtVerify,
  type CryptoKey,
  type ExportedJWKSCache,
  type FetchImplementation,
  type FlattenedJWSInput,
  type JWK,
  type JWSHeaderParameters,
  type JWTPayload,
  type JWTVerifyGetKey,
  type JWTVerifyOptions,
} from 'jose';
import { SIGNING_ALGORITHMS, type KeyRing } from './signing-keys.js';

/** Asymmetric JWS algorithms (RFC 7518 §3.1, RFC 8037): the default allow-list. */
export const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;
/** HMAC algorithms: allowed only with a shared secret, never with a public key. */
export const HMAC_ALGORITHMS = ['HS256', 'HS384', 'HS512'] as const;
export type JwsAlgorithm = (typeof ASYMMETRIC_ALGORITHMS)[number] | (typeof HMAC_ALGORITHMS)[number];

export const DEFAULT_CLOCK_TOLERANCE_SECONDS = 30;
export const DEFAULT_MAX_TOKEN_BYTES = 8_192;
export const DEV_ISSUER = 'switchyard-dev';
export const DEV_AUDIENCE = 'switchyard';

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

/** Keys fetched from a JWKS URL (the identity provider's), cached and refreshed by jose. */
export interface JwksKeySource {
  kind: 'jwks';
  url: string;
  /** Timeout of one JWKS fetch, in ms. Default 3000. */
  timeoutMs?: number;
  /**
   * Least time between two fetches triggered by an unknown `kid`, in ms. Default 30 000. Bounds what
   * tokens with made-up `kid`s can make us send to the identity provider: at most one fetch per interval.
   */
  cooldownMs?: number;
  /** Age after which the cached JWKS is fetched again before use, in ms. Default 600 000 (10 min). */
  cacheMaxAgeMs?: number;
  /**
   * When a refetch fails (network, timeout, non-200, bad JSON), keep verifying with the last JWKS
   * fetched for up to this long past `cacheMaxAgeMs`, in ms, retrying the fetch at most once per
   * `cooldownMs`. Default 600 000 (10 min); `0` answers AUTH_UNAVAILABLE as soon as a refetch fails.
   * An identity-provider blip then does not turn every request into a 503, while a key the provider
   * removed stays trusted for at most `cacheMaxAgeMs + staleIfErrorMs`.
   */
  staleIfErrorMs?: number;
  /** Extra request headers (an API key some providers want). */
  headers?: Record<string, string>;
  /** Replaces global fetch (tests, a proxy dispatcher). */
  fetch?: FetchImplementation;
}

/** One static public key: PEM (SPKI `BEGIN PUBLIC KEY` or an X.509 `BEGIN CERTIFICATE`) or a public JWK. */
export interface PublicKeySource {
  kind: 'public-key';
  key: string | JWK;
}

/** A shared HMAC secret: the only way HS256/384/512 are ever accepted. At least 32/48/64 bytes (RFC 7518 §3.2). */
export interface SharedSecretSource {
  kind: 'shared-secret';
  secret: string | Uint8Array;
}

export type KeySource = JwksKeySource | PublicKeySource | SharedSecretSource;

export interface DevIssuerOptions {
  /** Holds the `dev-issuer` keys; the authenticator reads them from memory. */
  keyRing: KeyRing;
  /** Default `switchyard-dev`. Tokens carrying this `iss` are verified with the dev keys only. */
  issuer?: string;
  /** Default `switchyard`. */
  audience?: string;
}

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
  /** Clock, ms since the epoch. Default `Date.now`. */
  now?: () => number;
}

export interface Authenticator {
  /** Verifies a bearer token. Never throws and never passes a token it could not verify. */
  authenticate(token: string): Promise<AuthResult>;
}

/** A configuration that would be unsafe or cannot work; thrown by createAuthenticator at start. */
export class AuthConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AuthConfigError';
  }
}

/** The key source could not give keys (JWKS unreachable, timed out, not 200, not a JWKS). */
class KeySourceUnavailableError extends Error {
  constructor(cause: unknown) {
    super('the key source is unavailable', { cause });
    this.name = 'KeySourceUnavailableError';
  }
}

type VerificationKey = CryptoKey | KeyObject | Uint8Array;

interface Verifier {
  readonly algorithms: readonly string[];
  readonly key: JWTVerifyGetKey | VerificationKey;
  readonly issuer?: string | string[];
  readonly audience?: string | string[];
}

function failure(code: AuthFailureCode, reason: string, error?: AuthFailure['error'], cause?: unknown): AuthFailure {
  const result: { -readonly [K in keyof AuthFailure]: AuthFailure[K] } = { ok: false, code, reason };
  if (error) result.error = error;
  if (cause !== undefined) result.cause = cause;
  return result;
}

const unauthenticated = (reason: string, cause?: unknown) => failure('UNAUTHENTICATED', reason, 'invalid_token', cause);

/** RFC 6750 §2.1 b64token. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
/** A JWS in compact serialisation (RFC 7515 §7.1): three base64url parts. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

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

/** The algorithms a public key can verify, from its type and curve. */
function algorithmsForKey(key: KeyObject): readonly string[] {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'];
    case 'rsa-pss':
      return ['PS256', 'PS384', 'PS512'];
    case 'ec':
      return { prime256v1: ['ES256'], secp384r1: ['ES384'], secp521r1: ['ES512'] }[key.asymmetricKeyDetails?.namedCurve ?? ''] ?? [];
    case 'ed25519':
      return ['EdDSA'];
    default:
      return [];
  }
}

function checkAllowList(algorithms: readonly string[] | undefined): void {
  if (!algorithms) return;
  if (algorithms.length === 0) throw new AuthConfigError('auth algorithms: the allow-list is empty');
  for (const alg of algorithms) {
    // RFC 8725 §3.1 / RFC 7518 §3.6: unsecured JWTs are never acceptable for authentication.
    if (alg.toLowerCase() === 'none') throw new AuthConfigError('auth algorithms: "none" can never be allowed');
    if (!(ASYMMETRIC_ALGORITHMS as readonly string[]).includes(alg) && !(HMAC_ALGORITHMS as readonly string[]).includes(alg)) {
      throw new AuthConfigError(`auth algorithms: unknown algorithm ${alg}`);
    }
  }
}

function refuseHmacWithPublicKeys(algorithms: readonly string[] | undefined, where: string): void {
  const hmac = algorithms?.filter((alg) => alg.startsWith('HS')) ?? [];
  // RFC 8725 §2.1/§3.1: HS* verified with a public key as the secret lets anyone who has the public key forge tokens.
  if (hmac.length) throw new AuthConfigError(`auth algorithms: ${hmac.join(', ')} cannot be used with ${where}; HMAC needs a shared secret`);
}

/** Minimum secret length per HMAC algorithm, in bytes (RFC 7518 §3.2: at least the hash size). */
const HMAC_MIN_BYTES: Record<string, number> = { HS256: 32, HS384: 48, HS512: 64 };

function sharedSecretVerifier(source: SharedSecretSource, algorithms: readonly string[] | undefined): Pick<Verifier, 'algorithms' | 'key'> {
  const secret = typeof source.secret === 'string' ? new TextEncoder().encode(source.secret) : source.secret;
  if (typeof source.secret === 'string' && /-----BEGIN [A-Z ]*KEY-----|-----BEGIN CERTIFICATE-----/.test(source.secret)) {
    throw new AuthConfigError('auth shared secret: this is a PEM key, not a secret; use a public-key source');
  }
  const asymmetric = algorithms?.filter((alg) => !alg.startsWith('HS')) ?? [];
  if (asymmetric.length) throw new AuthConfigError(`auth algorithms: ${asymmetric.join(', ')} cannot be verified with a shared secret`);
  const tooShort = algorithms?.filter((alg) => secret.byteLength < HMAC_MIN_BYTES[alg]) ?? [];
  if (tooShort.length) throw new AuthConfigError(`auth shared secret: ${tooShort.join(', ')} need(s) a secret of at least ${HMAC_MIN_BYTES[tooShort[0]]} bytes`);
  const allowed = algorithms ?? HMAC_ALGORITHMS.filter((alg) => secret.byteLength >= HMAC_MIN_BYTES[alg]);
  if (allowed.length === 0) throw new AuthConfigError('auth shared secret: shorter than 32 bytes, too weak for HS256');
  return { algorithms: allowed, key: secret };
}

function publicKeyVerifier(source: PublicKeySource, algorithms: readonly string[] | undefined): Pick<Verifier, 'algorithms' | 'key'> {
  refuseHmacWithPublicKeys(algorithms, 'a public key');
  let key: KeyObject;
  try {
    key = typeof source.key === 'string' ? createPublicKey(source.key) : createPublicKey({ key: source.key as never, format: 'jwk' });
  } catch (error) {
    throw new AuthConfigError(`auth public key: cannot be read (${(error as Error).message})`);
  }
  const usable = algorithmsForKey(key);
  const allowed = (algorithms ?? ASYMMETRIC_ALGORITHMS).filter((alg) => usable.includes(alg));
  if (allowed.length === 0) {
    throw new AuthConfigError(`auth public key: a ${key.asymmetricKeyType} key verifies none of the allowed algorithms (${(algorithms ?? ASYMMETRIC_ALGORITHMS).join(', ')})`);
  }
  return { algorithms: allowed, key };
}

/** True for errors that say something about the token rather than about the key source. */
function isTokenKeyError(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === 'ERR_JWKS_NO_MATCHING_KEY' || code === 'ERR_JWKS_MULTIPLE_MATCHING_KEYS' || code === 'ERR_JOSE_NOT_SUPPORTED' || code === 'ERR_JOSE_ALG_NOT_ALLOWED';
}

/**
 * A jose remote JWKS with a stale-if-error fallback.
 *
 * 1. jose fetches the JWKS on first use and again when it is older than `cacheMaxAgeMs`; a `kid` it
 *    does not know triggers one refetch, at most once per `cooldownMs`. Concurrent callers share one fetch.
 * 2. A failed fetch (network error, timeout, non-200, not a JWKS) is a source failure. If a JWKS was
 *    fetched within `cacheMaxAgeMs + staleIfErrorMs`, its keys answer instead (jose records it in the
 *    `jwksCache` object), and for the next `cooldownMs` they answer without trying the network again,
 *    so an outage costs one timeout per interval, not one per request.
 * 3. With no usable copy the failure becomes KeySourceUnavailableError → AUTH_UNAVAILABLE.
 */
function jwksVerifier(source: JwksKeySource, algorithms: readonly string[] | undefined): Pick<Verifier, 'algorithms' | 'key'> {
  refuseHmacWithPublicKeys(algorithms, 'a JWKS');
  let url: URL;
  try {
    url = new URL(source.url);
  } catch {
    throw new AuthConfigError(`auth JWKS URL: not a URL: ${source.url}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new AuthConfigError('auth JWKS URL: must be http or https');
  const timeoutMs = source.timeoutMs ?? 3_000;
  const cooldownMs = source.cooldownMs ?? 30_000;
  const cacheMaxAgeMs = source.cacheMaxAgeMs ?? 600_000;
  const staleIfErrorMs = source.staleIfErrorMs ?? 600_000;
  for (const [name, value] of Object.entries({ timeoutMs, cooldownMs, cacheMaxAgeMs, staleIfErrorMs })) {
    if (!Number.isInteger(value) || value < 0) throw new AuthConfigError(`auth JWKS ${name}: must be a whole number of milliseconds, zero or more`);
  }
  const cache: Partial<ExportedJWKSCache> = {};
  const remote = createRemoteJWKSet(url, {
    timeoutDuration: timeoutMs,
    cooldownDuration: cooldownMs,
    cacheMaxAge: cacheMaxAgeMs,
    headers: source.headers,
    [jwksCache]: cache as ExportedJWKSCache,
    ...(source.fetch ? { [customFetch]: source.fetch } : {}),
  });
  let failedAt = Number.NEGATIVE_INFINITY;
  let stale: { uat: number; resolve: ReturnType<typeof createLocalJWKSet> } | undefined;

  function staleKeys() {
    if (staleIfErrorMs <= 0 || cache.uat === undefined || !cache.jwks) return undefined;
    if (Date.now() - cache.uat > cacheMaxAgeMs + staleIfErrorMs) return undefined;
    if (stale?.uat !== cache.uat) stale = { uat: cache.uat, resolve: createLocalJWKSet(cache.jwks) };
    return stale.resolve;
  }

  async function resolveRemoteKey(header: JWSHeaderParameters, token: FlattenedJWSInput) {
    if (Date.now() - failedAt < cooldownMs) {
      const fallback = staleKeys();
      if (fallback) return fallback(header, token);
    }
    try {
      return await remote(header, token);
    } catch (error) {
      if (isTokenKeyError(error)) throw error;
      failedAt = Date.now();
      const fallback = staleKeys();
      if (fallback) return fallback(header, token);
      throw new KeySourceUnavailableError(error);
    }
  }
  return { algorithms: algorithms ?? ASYMMETRIC_ALGORITHMS, key: resolveRemoteKey };
}

function asList(value: string | readonly string[] | undefined): string[] | undefined {
  return value === undefined ? undefined : typeof value === 'string' ? [value] : [...value];
}

/** Maps every jose error (and ours) to a client-safe reason. */
function classify(error: unknown): AuthFailure {
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

function parseScopes(payload: JWTPayload): string[] {
  const raw = payload.scope ?? payload.scp;
  const list = typeof raw === 'string' ? raw.split(' ') : Array.isArray(raw) ? raw.filter((s): s is string => typeof s === 'string') : [];
  return [...new Set(list.filter((scope) => scope !== ''))];
}

function toPrincipal(payload: JWTPayload, token: string): AuthResult {
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
  const now = options.now ?? Date.now;
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

  let dev: Verifier | undefined;
  let devIssuer: string | undefined;
  if (options.devIssuer) {
    const { keyRing } = options.devIssuer;
    devIssuer = options.devIssuer.issuer ?? DEV_ISSUER;
    if (asList(options.issuer)?.includes(devIssuer)) throw new AuthConfigError(`auth: the dev issuer ${devIssuer} is also a configured issuer`);
    dev = {
      algorithms: SIGNING_ALGORITHMS,
      key: function resolveDevKey(header: JWSHeaderParameters) {
        return Promise.resolve(keyRing.verificationKey('dev-issuer', header));
      },
      issuer: [devIssuer],
      audience: [options.devIssuer.audience ?? DEV_AUDIENCE],
    };
  }

  async function verify(verifier: Verifier, token: string): Promise<JWTPayload> {
    const verifyOptions: JWTVerifyOptions = {
      algorithms: [...verifier.algorithms],
      issuer: verifier.issuer,
      audience: verifier.audience,
      clockTolerance,
      currentDate: new Date(now()),
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
          if (issuer === devIssuer) verifier = dev;
        }
        if (!verifier) return unauthenticated(AUTH_FAILURE_REASONS.issuer);
        if (!verifier.algorithms.includes(header.alg)) return unauthenticated(AUTH_FAILURE_REASONS.algorithmNotAllowed);
        return toPrincipal(await verify(verifier, token), token);
      } catch (error) {
        return classify(error);
      }
    },
  };
}

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
