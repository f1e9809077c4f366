// Router signing keys: generated here, kept in the database (src/registry/signing-key-store.ts), and the in-memory KeyRing that signs and verifies with them.
import { calculateJwkThumbprint, errors, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JSONWebKeySet, type JWK, type JWSHeaderParameters } from 'jose';
import type { Database, Queryable } from '../registry/database.js';
import { activeSigningKey, insertSigningKeyUnlessActive, publishedSigningKeys, rotateSigningKey, type SigningKeyRow } from '../registry/signing-key-store.js';
import { createJwtSigner, SIGNING_ALGORITHMS, type JwtSigner, type SigningAlgorithm } from './jws-signer.js';

/**
 * What a key signs. Each purpose has its own keys, so a token of one kind can never verify as the other:
 * the router's authenticator trusts only `dev-issuer` keys for dev tokens, and a subgraph token (signed
 * with a `subgraph-token` key) presented to the router as a user token matches no dev key.
 */
export type KeyPurpose = 'subgraph-token' | 'dev-issuer';
const KEY_PURPOSES: readonly KeyPurpose[] = ['subgraph-token', 'dev-issuer'];

export { SIGNING_ALGORITHMS, type SigningAlgorithm };

const DEFAULT_SIGNING_ALGORITHM: SigningAlgorithm = 'ES256';
/** How long a rotated-out key stays published and accepted, in ms: 24 h, longer than any token it signed. */
const DEFAULT_RETIRE_AFTER_MS = 86_400_000;

/** A key that can sign: the active key of its purpose. */
export interface SigningKey {
  readonly kid: string;
  readonly purpose: KeyPurpose;
  readonly alg: SigningAlgorithm;
  /** Non-extractable. */
  readonly privateKey: CryptoKey;
  /** Signs claims as a compact JWT with header `{ alg, kid, typ: "at+jwt" }` (RFC 9068 §2.1), synchronously: see jws-signer.ts. */
  readonly signJwt: JwtSigner;
  /** The public JWK as published in the JWKS (`kid`, `alg`, `use: "sig"` included). */
  readonly publicJwk: JWK;
  readonly createdAt: Date;
}

/** Thrown when a KeyRing is asked to sign with a purpose it holds no active key for (not opened, or not reloaded yet). */
export class NoActiveKeyError extends Error {
  constructor(readonly purpose: KeyPurpose) {
    super(`no active ${purpose} signing key is loaded; open the key ring with this purpose first`);
    this.name = 'NoActiveKeyError';
  }
}

export interface LoadOrCreateKeysOptions {
  /** Algorithm of a key created here. Default `ES256`. An existing active key is returned whatever its algorithm; use `rotateKeys` to change it. */
  alg?: SigningAlgorithm;
}

export interface RotateKeysOptions {
  /** Algorithm of the new key. Default: the current active key's, else `ES256`. */
  alg?: SigningAlgorithm;
  /**
   * How long the outgoing key stays published and accepted, in ms. Default 86 400 000 (24 h). It must
   * cover the longest token it signed plus the time every router takes to reload; `0` retires it at
   * once (a leaked key).
   */
  retireAfterMs?: number;
}

/** A stored key whose `purpose` and `alg` the table's checks limit to ours. */
interface KeyRow extends SigningKeyRow {
  purpose: KeyPurpose;
  alg: SigningAlgorithm;
}

function assertPurpose(purpose: string): asserts purpose is KeyPurpose {
  if (!(KEY_PURPOSES as readonly string[]).includes(purpose)) throw new TypeError(`unknown key purpose: ${purpose}`);
}

function assertAlgorithm(alg: string): asserts alg is SigningAlgorithm {
  if (!(SIGNING_ALGORITHMS as readonly string[]).includes(alg)) {
    throw new TypeError(`unsupported signing algorithm ${alg}; use one of ${SIGNING_ALGORITHMS.join(', ')}`);
  }
}

/** A new key pair as stored: the `kid` is the RFC 7638 thumbprint of the public key, so it is unique without coordination. */
async function generateKey(purpose: KeyPurpose, alg: SigningAlgorithm) {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk, 'sha256');
  const privateJwk = await exportJWK(privateKey);
  return {
    kid,
    purpose,
    alg,
    privateJwk: { ...privateJwk, kid, alg },
    // RFC 7517 §4.2/§4.4: `use: "sig"` and `alg` keep verifiers from using the key for anything else.
    publicJwk: { ...publicJwk, kid, alg, use: 'sig' },
  };
}

async function toSigningKey(row: KeyRow): Promise<SigningKey> {
  if (!row.private_jwk) throw new Error(`signing key ${row.kid} has no private key`);
  // Stored JWKs carry `ext: true` from the export; the imported key must not be extractable again.
  const { ext: _ext, key_ops: _ops, ...jwk } = row.private_jwk;
  const privateKey = (await importJWK(jwk, row.alg, { extractable: false })) as CryptoKey;
  const signJwt = createJwtSigner(jwk, row.alg, { kid: row.kid, typ: 'at+jwt' });
  return { kid: row.kid, purpose: row.purpose, alg: row.alg, privateKey, signJwt, publicJwk: row.public_jwk, createdAt: row.created_at };
}

/**
 * Returns the active key of `purpose`, creating it if there is none.
 *
 * 1. Read without a lock: the common case (keys exist) costs one query.
 * 2. Otherwise generate a key pair outside any transaction (RSA takes ~0.2 s), then, holding a
 *    transaction-level advisory lock, read again and insert only if still nobody has (see
 *    `insertSigningKeyUnlessActive`). Two routers starting together both end up with the one key the
 *    first inserted; the second's is discarded.
 */
export async function loadOrCreateKeys(db: Database, purpose: KeyPurpose, options: LoadOrCreateKeysOptions = {}): Promise<SigningKey> {
  assertPurpose(purpose);
  const alg = options.alg ?? DEFAULT_SIGNING_ALGORITHM;
  assertAlgorithm(alg);
  const existing = await activeSigningKey<KeyRow>(db, purpose);
  if (existing) return toSigningKey(existing);
  const fresh = await generateKey(purpose, alg);
  return toSigningKey(await insertSigningKeyUnlessActive<KeyRow>(db, fresh));
}

/**
 * Makes a new key the active one of `purpose`. The outgoing key stops signing but stays published
 * (and accepted) for `retireAfterMs`, so tokens it signed, and tokens signed by routers that have not
 * reloaded yet, keep verifying. Keys past their `not_after` are deleted here: retired private keys do
 * not linger in the table. Other routers learn of the change through the `signing_keys` change topic.
 */
export async function rotateKeys(db: Database, purpose: KeyPurpose, options: RotateKeysOptions = {}): Promise<SigningKey> {
  assertPurpose(purpose);
  const retireAfterMs = options.retireAfterMs ?? DEFAULT_RETIRE_AFTER_MS;
  if (!Number.isFinite(retireAfterMs) || retireAfterMs < 0) throw new TypeError('retireAfterMs must be a non-negative number of milliseconds');
  const alg = options.alg ?? (await activeSigningKey<KeyRow>(db, purpose))?.alg ?? DEFAULT_SIGNING_ALGORITHM;
  assertAlgorithm(alg);
  const fresh = await generateKey(purpose, alg);
  return toSigningKey(await rotateSigningKey<KeyRow>(db, fresh, retireAfterMs));
}

interface RingEntry {
  readonly kid: string;
  readonly purpose: KeyPurpose;
  readonly alg: SigningAlgorithm;
  readonly publicJwk: JWK;
  readonly publicKey: CryptoKey;
  /** ms since the epoch; undefined while the key is active. */
  readonly notAfter: number | undefined;
}

interface RingSnapshot {
  readonly byKid: ReadonlyMap<string, RingEntry>;
  readonly active: ReadonlyMap<KeyPurpose, SigningKey>;
  readonly loadedAt: Date | undefined;
}

export interface KeyRingOptions {
  /** Clock, ms since the epoch. Default `Date.now`; tests pass their own. */
  now?: () => number;
}

export interface OpenKeyRingOptions extends KeyRingOptions {
  /** Purposes to make sure an active key exists for (created if missing). Default both. */
  purposes?: readonly KeyPurpose[];
  /** Algorithm of keys created on open. Default `ES256`. */
  alg?: SigningAlgorithm;
}

/**
 * The signing keys in memory, so that minting and verifying never query the database per request.
 * The composition root opens one per process and calls `reload(db)` when the `signing_keys` change
 * topic moves (and after a rotation it did itself). A reload swaps the whole set at once; a failed
 * reload keeps the previous set.
 */
export class KeyRing {
  #snapshot: RingSnapshot = { byKid: new Map(), active: new Map(), loadedAt: undefined };
  /** Orders overlapping reloads: an older read never replaces a newer one. */
  #reloads = 0;
  #applied = 0;
  readonly #now: () => number;

  constructor(options: KeyRingOptions = {}) {
    this.#now = options.now ?? Date.now;
  }

  /** Ensures an active key exists for each purpose, then loads every published key. */
  static async open(db: Database, options: OpenKeyRingOptions = {}): Promise<KeyRing> {
    for (const purpose of options.purposes ?? KEY_PURPOSES) await loadOrCreateKeys(db, purpose, { alg: options.alg });
    const ring = new KeyRing(options);
    await ring.reload(db);
    return ring;
  }

  /**
   * A ring of keys generated in memory, for a router without a database (serving a supergraph file):
   * its tokens verify against its own `/.well-known/jwks.json` only, and new keys come with a restart.
   */
  static async ephemeral(options: OpenKeyRingOptions = {}): Promise<KeyRing> {
    const alg = options.alg ?? DEFAULT_SIGNING_ALGORITHM;
    const created = new Date();
    const rows: KeyRow[] = [];
    for (const purpose of options.purposes ?? KEY_PURPOSES) {
      const key = await generateKey(purpose, alg);
      rows.push({ kid: key.kid, purpose, alg, private_jwk: key.privateJwk, public_jwk: key.publicJwk, created_at: created, not_after: null });
    }
    const ring = new KeyRing(options);
    await ring.#apply(rows, ++ring.#reloads);
    return ring;
  }

  /** Re-reads the published keys (one query) and swaps them in. */
  async reload(db: Queryable): Promise<void> {
    const sequence = ++this.#reloads;
    await this.#apply(await publishedSigningKeys<KeyRow>(db), sequence);
  }

  async #apply(rows: readonly KeyRow[], sequence: number): Promise<void> {
    const byKid = new Map<string, RingEntry>();
    const active = new Map<KeyPurpose, SigningKey>();
    for (const row of rows) {
      const { ext: _ext, key_ops: _ops, ...publicJwk } = row.public_jwk;
      const publicKey = (await importJWK(publicJwk, row.alg)) as CryptoKey;
      byKid.set(row.kid, { kid: row.kid, purpose: row.purpose, alg: row.alg, publicJwk: row.public_jwk, publicKey, notAfter: row.not_after?.getTime() });
      if (row.not_after === null && !active.has(row.purpose)) active.set(row.purpose, await toSigningKey(row));
    }
    if (sequence < this.#applied) return;
    this.#applied = sequence;
    this.#snapshot = { byKid, active, loadedAt: new Date(this.#now()) };
  }

  /** When the keys in memory were last read; undefined before the first reload. */
  get loadedAt(): Date | undefined {
    return this.#snapshot.loadedAt;
  }

  /** The key to sign with. Throws NoActiveKeyError when none is loaded for `purpose`. */
  activeKey(purpose: KeyPurpose): SigningKey {
    const key = this.#snapshot.active.get(purpose);
    if (!key) throw new NoActiveKeyError(purpose);
    return key;
  }

  hasActiveKey(purpose: KeyPurpose): boolean {
    return this.#snapshot.active.has(purpose);
  }

  /**
   * The public key that verifies a token of `purpose` with this protected header, as a jose key
   * resolver wants it. The `kid` must name a published key of that purpose whose `alg` is the
   * header's (RFC 8725 §3.1: the algorithm comes from the key, not from the token); otherwise
   * jose's JWKSNoMatchingKey, which the authenticator reports as an unknown signing key.
   */
  verificationKey(purpose: KeyPurpose, header: JWSHeaderParameters): CryptoKey {
    const entry = typeof header.kid === 'string' ? this.#snapshot.byKid.get(header.kid) : undefined;
    if (!entry || entry.purpose !== purpose || entry.alg !== header.alg || !this.#published(entry)) {
      throw new errors.JWKSNoMatchingKey();
    }
    return entry.publicKey;
  }

  /** The algorithms of the published keys of `purpose` (what a verifier should allow). */
  algorithms(purpose: KeyPurpose): SigningAlgorithm[] {
    const algs = new Set<SigningAlgorithm>();
    for (const entry of this.#snapshot.byKid.values()) if (entry.purpose === purpose && this.#published(entry)) algs.add(entry.alg);
    return [...algs];
  }

  /** The JWKS of every published key (of one purpose if given); keys whose `not_after` passed since the last reload are left out. */
  jwks(purpose?: KeyPurpose): JSONWebKeySet {
    const keys: JWK[] = [];
    for (const entry of this.#snapshot.byKid.values()) {
      if (this.#published(entry) && (purpose === undefined || entry.purpose === purpose)) keys.push({ ...entry.publicJwk });
    }
    return { keys };
  }

  #published(entry: RingEntry): boolean {
    return entry.notAfter === undefined || entry.notAfter > this.#now();
  }
}
