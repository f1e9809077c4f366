// Where verification keys come from, and which algorithms each may verify: a static public key, a shared HMAC secret, the dev issuer's key ring (the JWKS source is in jwks-key-source.ts).
import { createPublicKey, type KeyObject } from 'node:crypto';
import type { CryptoKey, JWK, JWSHeaderParameters, JWTVerifyGetKey } from 'jose';
import { SIGNING_ALGORITHMS, type KeyRing } from '../signing-keys.js';
import { AuthConfigError } from './auth-result.js';

/** Asymmetric JWS algorithms (RFC 7518 §3.1, RFC 8037): the default allow-list. */
export const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;
/** HMAC algorithms: allowed only with a shared secret, never with a public key. */
const HMAC_ALGORITHMS = ['HS256', 'HS384', 'HS512'] as const;

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

/** The dev issuer (`switchyard token mint`): its `iss` and `aud`, and the key ring holding its keys. */
export const DEV_ISSUER = 'switchyard-dev';
export const DEV_AUDIENCE = 'switchyard';

export interface DevIssuerOptions {
  /** Holds the `dev-issuer` keys; the authenticator reads them from memory. Tokens carrying `iss: switchyard-dev` are verified with these keys only. */
  keyRing: KeyRing;
}

type VerificationKey = CryptoKey | KeyObject | Uint8Array;

/** One key source, ready to verify: its algorithm allow-list, its key (or a function finding it), and the claims it demands. */
export interface Verifier {
  readonly algorithms: readonly string[];
  readonly key: JWTVerifyGetKey | VerificationKey;
  readonly issuer?: string | string[];
  readonly audience?: string | string[];
}

export type KeyOnly = Pick<Verifier, 'algorithms' | 'key'>;

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

/** Refuses an allow-list that is empty, names `none`, or names an algorithm we do not know. */
export function checkAllowList(algorithms: readonly string[] | undefined): void {
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

export function refuseHmacWithPublicKeys(algorithms: readonly string[] | undefined, where: string): void {
  const hmac = algorithms?.filter((alg) => alg.startsWith('HS')) ?? [];
  // RFC 8725 §2.1/§3.1: HS* verified with a public key as the secret lets anyone who has the public key forge tokens.
  if (hmac.length) throw new AuthConfigError(`auth algorithms: ${hmac.join(', ')} cannot be used with ${where}; HMAC needs a shared secret`);
}

/** Minimum secret length per HMAC algorithm, in bytes (RFC 7518 §3.2: at least the hash size). */
const HMAC_MIN_BYTES: Record<string, number> = { HS256: 32, HS384: 48, HS512: 64 };

export function sharedSecretVerifier(source: SharedSecretSource, algorithms: readonly string[] | undefined): KeyOnly {
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

export function publicKeyVerifier(source: PublicKeySource, algorithms: readonly string[] | undefined): KeyOnly {
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

/** The dev issuer's verifier: its own algorithms, `iss` and `aud`, and the dev keys of the key ring. */
export function devIssuerVerifier(options: DevIssuerOptions): Verifier {
  const { keyRing } = options;
  return {
    algorithms: SIGNING_ALGORITHMS,
    key: function resolveDevKey(header: JWSHeaderParameters) {
      return Promise.resolve(keyRing.verificationKey('dev-issuer', header));
    },
    issuer: [DEV_ISSUER],
    audience: [DEV_AUDIENCE],
  };
}
