// Unit tests of the signing key store's SQL (no cryptography: the JWKs are opaque JSON here), on the embedded database or TEST_DATABASE_URL.
import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../../test/helpers/database.js';
import type { Database } from './database.js';
import { activeSigningKey, insertSigningKeyUnlessActive, publishedSigningKeys, rotateSigningKey, type NewSigningKey } from './signing-key-store.js';

let db: Database;
useTestDatabase((opened) => (db = opened));

const key = (kid: string): NewSigningKey => ({ kid, purpose: 'dev-issuer', alg: 'ES256', privateJwk: { kty: 'EC', kid, d: `private-${kid}` }, publicJwk: { kty: 'EC', kid, use: 'sig' } });

describe('signing key store', () => {
  it('inserts a key only when its purpose has no active one, and returns the active one', async () => {
    expect(await activeSigningKey(db, 'dev-issuer')).toBeUndefined();
    const first = await insertSigningKeyUnlessActive(db, key('k1'));
    expect(first).toMatchObject({ kid: 'k1', purpose: 'dev-issuer', alg: 'ES256', not_after: null, private_jwk: { d: 'private-k1' } });
    expect((await insertSigningKeyUnlessActive(db, key('k2'))).kid).toBe('k1');
    expect((await activeSigningKey(db, 'dev-issuer'))?.kid).toBe('k1');
    expect(await activeSigningKey(db, 'subgraph-token')).toBeUndefined();
  });

  it('rotates: the outgoing key stays published without its private half until it retires, expired keys are deleted', async () => {
    const rotated = await rotateSigningKey(db, key('k3'), 60_000);
    expect(rotated).toMatchObject({ kid: 'k3', not_after: null });
    const published = await publishedSigningKeys(db);
    expect(published.map((row) => row.kid)).toEqual(['k3', 'k1']);
    expect(published[0].private_jwk).toMatchObject({ d: 'private-k3' });
    expect(published[1].private_jwk).toBeNull();
    expect(published[1].not_after).toBeInstanceOf(Date);

    await rotateSigningKey(db, key('k4'), 0); // k3 retires at once: unpublished now, deleted at the next rotation
    expect((await publishedSigningKeys(db)).map((row) => row.kid)).toEqual(['k4', 'k1']);
    await rotateSigningKey(db, key('k5'), 60_000);
    const { rows } = await db.query('select kid from signing_keys order by kid');
    expect(rows.map((row) => row.kid)).toEqual(['k1', 'k4', 'k5']);
  });
});
