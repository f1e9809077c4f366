// Unit tests of the subgraphs' token verifier: audience binding, expiry, issuer, actor, type, algorithm and JWKS failures.
import { base64url, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, startTestTokenIssuer, type TestTokenIssuer } from './test-token-issuer.js';
import { createTokenVerifier, type TokenCheck } from './token-verifier.js';

let router: TestTokenIssuer;

beforeAll(async () => {
  router = await startTestTokenIssuer();
});
afterAll(() => router?.close());

function refused(check: TokenCheck): { status: number; reason: string } {
  expect(check.ok).toBe(false);
  return check.ok ? { status: 200, reason: '' } : { status: check.status, reason: check.reason };
}

describe('token verifier', () => {
  it('accepts a token minted for this subgraph and says who it is for', async () => {
    const token = await router.mint('reviews', { subject: 'user-9', scopes: ['reviews:read'], clientId: 'web' });
    const verifier = createTokenVerifier({ audience: 'reviews', jwksUrl: router.jwksUrl, actor: 'switchyard-router', type: 'at+jwt' });
    const check = await verifier.verify(`Bearer ${token}`);
    expect(check).toMatchObject({ ok: true, subject: 'user-9', scopes: ['reviews:read'], actor: 'switchyard-router', clientId: 'web' });
  });

  it('refuses a token made for another subgraph', async () => {
    const token = await router.mint('reviews');
    const inventory = createTokenVerifier({ audience: 'inventory', keys: router.jwks() });
    expect(refused(await inventory.verifyToken(token))).toEqual({ status: 401, reason: 'token is not for inventory' });
  });

  it('refuses an expired token, within the clock tolerance only', async () => {
    const verifier = createTokenVerifier({ audience: 'reviews', keys: router.jwks() });
    const old = await router.mint('reviews', { issuedAt: Date.now() - 120_000 });
    expect(refused(await verifier.verifyToken(old))).toEqual({ status: 401, reason: 'token expired' });
    // Expired 2 s ago: inside the default 5 s leeway.
    const barely = await router.mint('reviews', { issuedAt: Date.now() - 62_000 });
    expect(await verifier.verifyToken(barely)).toMatchObject({ ok: true });
  });

  it('refuses another issuer, another actor and another type', async () => {
    const keys = router.jwks();
    const token = await router.mint('reviews', { issuer: 'someone-else', actor: 'intruder' });
    expect(refused(await createTokenVerifier({ audience: 'reviews', keys }).verifyToken(token)).reason).toBe('token issuer not accepted');
    const strict = createTokenVerifier({ audience: 'reviews', issuer: 'someone-else', keys, actor: 'switchyard-router' });
    expect(refused(await strict.verifyToken(token)).reason).toBe('token actor not accepted');
    const untyped = await router.mint('reviews', { type: null, actor: null });
    expect(refused(await createTokenVerifier({ audience: 'reviews', keys, type: 'at+jwt' }).verifyToken(untyped)).reason).toBe('token type not accepted');
    expect(refused(await createTokenVerifier({ audience: 'reviews', keys, actor: 'switchyard-router' }).verifyToken(untyped)).reason).toBe('token actor not accepted');
    const idToken = await router.mint('reviews', { type: 'JWT' });
    expect(refused(await createTokenVerifier({ audience: 'reviews', keys, type: 'at+jwt' }).verifyToken(idToken)).reason).toBe('token type not accepted');
  });

  it('refuses forgeries: unknown keys, a key swapped under a known kid, alg none and HS*', async () => {
    const keys = router.jwks();
    const verifier = createTokenVerifier({ audience: 'reviews', keys });
    const stranger = await createTestSigner();
    expect(refused(await verifier.verifyToken(await stranger.mint('reviews'))).reason).toBe('token signing key not recognised');
    const impostor = await createTestSigner(router.kid);
    expect(refused(await verifier.verifyToken(await impostor.mint('reviews'))).reason).toBe('token signature invalid');
    // The same against the JWKS URL: an unknown kid makes jose refetch once, and still find nothing.
    const remote = createTokenVerifier({ audience: 'reviews', jwksUrl: router.jwksUrl });
    expect(refused(await remote.verifyToken(await stranger.mint('reviews')))).toEqual({ status: 401, reason: 'token signing key not recognised' });

    const claims = { iss: 'switchyard', aud: 'reviews', sub: 'x', exp: Math.floor(Date.now() / 1000) + 60, act: { sub: 'switchyard-router' } };
    const none = `${base64url.encode('{"alg":"none","typ":"at+jwt"}')}.${base64url.encode(JSON.stringify(claims))}.`;
    expect(refused(await verifier.verifyToken(none)).reason).toBe('token algorithm not allowed');
    // HMAC keyed with the public JWKS (the classic confusion attack) is refused even when HS256 is asked for.
    const hs = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' }).sign(new TextEncoder().encode(JSON.stringify(keys)));
    expect(refused(await createTokenVerifier({ audience: 'reviews', keys, algorithms: ['HS256', 'ES256'] }).verifyToken(hs)).reason).toBe('token algorithm not allowed');
    const unsigned = (await router.mint('reviews')).replace(/[^.]+$/, '');
    expect(refused(await verifier.verifyToken(unsigned)).status).toBe(401);
  });

  it('refuses missing and malformed headers', async () => {
    const verifier = createTokenVerifier({ audience: 'reviews', keys: router.jwks() });
    expect(refused(await verifier.verify(undefined)).reason).toBe('missing bearer token');
    expect(refused(await verifier.verify('Basic abc')).reason).toBe('malformed authorization header');
    expect(refused(await verifier.verify('Bearer not-a-jwt')).reason).toBe('token is malformed');
    expect(refused(await verifier.verify(`Bearer ${'a'.repeat(9_000)}.b.c`)).reason).toBe('token too large');
  });

  it('answers 503 when the router JWKS cannot be fetched, never a pass', async () => {
    const token = await router.mint('reviews');
    router.mode = 'error';
    try {
      const verifier = createTokenVerifier({ audience: 'reviews', jwksUrl: router.jwksUrl });
      expect(refused(await verifier.verifyToken(token))).toEqual({ status: 503, reason: 'router keys unavailable' });
    } finally {
      router.mode = 'ok';
    }
    const gone = await startTestTokenIssuer();
    const orphan = await gone.mint('reviews');
    await gone.close();
    const unreachable = createTokenVerifier({ audience: 'reviews', jwksUrl: gone.jwksUrl });
    expect(refused(await unreachable.verifyToken(orphan))).toEqual({ status: 503, reason: 'router keys unavailable' });
  });

  it('verifies tokens from another issuer against that issuer\'s keys (an RFC 8693 token endpoint)', async () => {
    const endpoint = await startTestTokenIssuer();
    try {
      const token = await endpoint.mint('inventory', { issuer: 'https://sts.example', subject: 'user-9' });
      const verifier = createTokenVerifier({ audience: 'inventory', issuer: 'https://sts.example', jwksUrl: endpoint.jwksUrl });
      expect(await verifier.verifyToken(token)).toMatchObject({ ok: true, subject: 'user-9', actor: 'switchyard-router' });
      const other = createTokenVerifier({ audience: 'reviews', issuer: 'https://sts.example', jwksUrl: endpoint.jwksUrl });
      expect(refused(await other.verifyToken(token)).reason).toBe('token is not for reviews');
      const routerKeysOnly = createTokenVerifier({ audience: 'inventory', issuer: 'https://sts.example', jwksUrl: router.jwksUrl });
      expect(refused(await routerKeysOnly.verifyToken(token)).reason).toBe('token signing key not recognised');
    } finally {
      await endpoint.close();
    }
  });

  it('needs an audience and exactly one key source', () => {
    expect(() => createTokenVerifier({ audience: '', keys: [] })).toThrow(/audience/);
    expect(() => createTokenVerifier({ audience: 'x' })).toThrow(/exactly one/);
    expect(() => createTokenVerifier({ audience: 'x', keys: [], jwksUrl: router.jwksUrl })).toThrow(/exactly one/);
  });
});
