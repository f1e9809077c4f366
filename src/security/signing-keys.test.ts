// Unit tests of the signing key store and KeyRing, on the embedded database or TEST_DATABASE_URL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jwtVerify, SignJWT, createLocalJWKSet } from 'jose';
import { createTestStore, openMigrated, type TestStore } from '../../test/helpers/database.js';
import type { Database } from '../registry/database.js';
import { KeyRing, loadOrCreateKeys, NoActiveKeyError, rotateKeys } from './signing-keys.js';

// One store for the file: a PGlite start costs seconds. The KeyRing tests only rely on what the store tests leave behind.
let store: TestStore;
let db: Database;
beforeAll(async () => {
  store = await createTestStore();
  db = await openMigrated(store);
});
afterAll(async () => {
  await db?.close();
  await store?.destroy();
});

/** The JWKS a router serves at `/.well-known/jwks.json`: its key ring, reloaded from the store. */
async function publishedJwks() {
  const ring = new KeyRing();
  await ring.reload(db);
  return ring.jwks();
}

describe('signing keys in the database', () => {
  it('two routers starting together create one active key', async () => {
    const other = await store.open();
    try {
      const keys = await Promise.all([
        loadOrCreateKeys(db, 'subgraph-token'),
        loadOrCreateKeys(other, 'subgraph-token'),
        loadOrCreateKeys(db, 'subgraph-token'),
        loadOrCreateKeys(other, 'subgraph-token'),
      ]);
      expect(new Set(keys.map((k) => k.kid)).size).toBe(1);
      const { rows } = await db.query("select count(*)::int as n from signing_keys where purpose = 'subgraph-token'");
      expect(rows[0].n).toBe(1);
    } finally {
      await other.close();
    }
  });

  it('returns the existing key on the next start, with a usable private key', async () => {
    const first = await loadOrCreateKeys(db, 'dev-issuer');
    const again = await loadOrCreateKeys(db, 'dev-issuer', { alg: 'EdDSA' });
    expect(again.kid).toBe(first.kid);
    expect(again.alg).toBe('ES256');
    expect(first.privateKey.extractable).toBe(false);
    const token = await new SignJWT({ ok: true }).setProtectedHeader({ alg: first.alg, kid: first.kid }).sign(first.privateKey);
    const { payload } = await jwtVerify(token, createLocalJWKSet(await publishedJwks()));
    expect(payload.ok).toBe(true);
  });

  it('refuses unknown purposes and symmetric algorithms', async () => {
    await expect(loadOrCreateKeys(db, 'other' as never)).rejects.toThrow(/unknown key purpose/);
    await expect(rotateKeys(db, 'dev-issuer', { alg: 'HS256' as never })).rejects.toThrow(/unsupported signing algorithm/);
  });

  it('publishes public keys of both purposes, never private material', async () => {
    const jwks = await publishedJwks();
    expect(jwks.keys).toHaveLength(2);
    for (const key of jwks.keys) {
      expect(key).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
      expect(key.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(key).not.toHaveProperty('d');
    }
  });

  it('rotates: a new active key, the old one still published until it retires, expired ones deleted', async () => {
    const before = await loadOrCreateKeys(db, 'subgraph-token');
    const rotated = await rotateKeys(db, 'subgraph-token', { alg: 'EdDSA' });
    expect(rotated.kid).not.toBe(before.kid);
    expect(rotated.alg).toBe('EdDSA');
    expect((await loadOrCreateKeys(db, 'subgraph-token')).kid).toBe(rotated.kid);
    const kids = (await publishedJwks()).keys.map((k) => k.kid);
    expect(kids).toContain(before.kid);
    expect(kids).toContain(rotated.kid);

    // An immediate retirement (a leaked key): gone from the JWKS now, deleted at the next rotation.
    const third = await rotateKeys(db, 'subgraph-token', { retireAfterMs: 0 });
    expect(third.alg).toBe('EdDSA');
    expect((await publishedJwks()).keys.map((k) => k.kid)).not.toContain(rotated.kid);
    await rotateKeys(db, 'subgraph-token', { retireAfterMs: 0 });
    const { rows } = await db.query('select kid from signing_keys where kid = $1', [rotated.kid]);
    expect(rows).toHaveLength(0);
  });

  it('bumps the signing_keys change topic so other routers reload', async () => {
    const read = async () => Number((await db.query("select version from registry_changes where topic = 'signing_keys'")).rows[0].version);
    const before = await read();
    await rotateKeys(db, 'dev-issuer');
    expect(await read()).toBeGreaterThan(before);
  });
});

describe('KeyRing', () => {
  it('opens with an active key per purpose and signs and verifies from memory', async () => {
    const ring = await KeyRing.open(db);
    const signing = ring.activeKey('subgraph-token');
    const dev = ring.activeKey('dev-issuer');
    expect(signing.kid).not.toBe(dev.kid);
    const token = await new SignJWT({}).setProtectedHeader({ alg: signing.alg, kid: signing.kid }).sign(signing.privateKey);
    await expect(jwtVerify(token, (header) => ring.verificationKey('subgraph-token', header))).resolves.toBeTruthy();
    // Purposes are separate: a subgraph-token key does not verify as a dev-issuer key.
    await expect(jwtVerify(token, (header) => ring.verificationKey('dev-issuer', header))).rejects.toMatchObject({ code: 'ERR_JWKS_NO_MATCHING_KEY' });
    // Published: the active keys and the rotated-out ones still within their grace period.
    const { rows } = await db.query("select kid, purpose from signing_keys where not_after is null or not_after > now()");
    expect(ring.jwks().keys.map((k) => k.kid).sort()).toEqual(rows.map((r) => r.kid).sort());
    expect(ring.jwks('dev-issuer').keys.map((k) => k.kid).sort()).toEqual(rows.filter((r) => r.purpose === 'dev-issuer').map((r) => r.kid).sort());
    expect(ring.jwks('subgraph-token').keys.map((k) => k.kid)).toContain(signing.kid);
    expect(ring.jwks('subgraph-token').keys.map((k) => k.kid)).not.toContain(dev.kid);
    expect(ring.algorithms('dev-issuer')).toEqual(['ES256']);
  });

  it('throws NoActiveKeyError for a purpose it was not opened with', async () => {
    const ring = new KeyRing();
    expect(ring.hasActiveKey('dev-issuer')).toBe(false);
    expect(() => ring.activeKey('dev-issuer')).toThrow(NoActiveKeyError);
  });

  it('picks up a rotation on reload and keeps verifying tokens of the previous key until it retires', async () => {
    const clock = { ms: Date.now() };
    const ring = await KeyRing.open(db, { now: () => clock.ms });
    const old = ring.activeKey('subgraph-token');
    const oldToken = await new SignJWT({}).setProtectedHeader({ alg: old.alg, kid: old.kid }).sign(old.privateKey);
    const rotated = await rotateKeys(db, 'subgraph-token', { retireAfterMs: 60_000 });
    expect(ring.activeKey('subgraph-token').kid).toBe(old.kid); // nothing changes until the integrator reloads
    await ring.reload(db);
    expect(ring.activeKey('subgraph-token').kid).toBe(rotated.kid);
    await expect(jwtVerify(oldToken, (header) => ring.verificationKey('subgraph-token', header))).resolves.toBeTruthy();
    expect(ring.jwks().keys.map((k) => k.kid)).toContain(old.kid);

    clock.ms += 61_000; // past not_after, without a reload: the ring drops it by itself
    await expect(jwtVerify(oldToken, (header) => ring.verificationKey('subgraph-token', header))).rejects.toMatchObject({ code: 'ERR_JWKS_NO_MATCHING_KEY' });
    expect(ring.jwks().keys.map((k) => k.kid)).not.toContain(old.kid);
  });

  it('refuses a header whose alg differs from the key\'s', async () => {
    const ring = await KeyRing.open(db);
    const key = ring.activeKey('dev-issuer');
    expect(() => ring.verificationKey('dev-issuer', { alg: 'RS256', kid: key.kid })).toThrow(/no applicable key|JSON Web Key Set/);
    expect(() => ring.verificationKey('dev-issuer', { alg: key.alg })).toThrow();
  });
});
