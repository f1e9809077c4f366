// Unit tests of user-token authentication: every failure class, JWKS caching, rotation and outages, static keys, the dev issuer (the bearer header is in bearer-header.test.ts).
import { createHmac } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { base64url, CompactSign, exportJWK, exportSPKI, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import { createTestStore, openMigrated, type TestStore } from '../../../test/helpers/database.js';
import type { Database } from '../../registry/database.js';
import { KeyRing } from '../signing-keys.js';
import { startTestIdentityProvider, type TestIdentityProvider } from '../../../test/helpers/identity-provider.js';
import { AUTH_FAILURE_REASONS as R, AuthConfigError, type AuthResult } from './auth-result.js';
import { createAuthenticator, type AuthenticatorOptions } from './authenticate.js';
import { mintDevToken } from './dev-token.js';

const AUDIENCE = 'switchyard-api';
const seconds = () => Math.floor(Date.now() / 1000);
/** A clock for the JWKS source's durations (cache age, cooldown, stale-if-error), moved by the test. */
function fakeClock(start = 1_000_000) {
  let at = start;
  return { now: () => at, advance: (ms: number) => void (at += ms) };
}

function expectFailure(result: AuthResult, code: 'UNAUTHENTICATED' | 'AUTH_UNAVAILABLE', reason: string): void {
  expect(result.ok).toBe(false);
  if (result.ok) return;
  expect({ code: result.code, reason: result.reason }).toEqual({ code, reason });
}

/** An unsigned JWT (`alg: none`, RFC 7519 §6). */
function unsecured(claims: JWTPayload): string {
  return `${base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT' }))}.${base64url.encode(JSON.stringify(claims))}.`;
}

/** An HS256 JWT whose HMAC secret is `secret` (the classic public-key-as-secret forgery). */
function hs256(claims: JWTPayload, secret: string, kid?: string): string {
  const input = `${base64url.encode(JSON.stringify({ alg: 'HS256', ...(kid ? { kid } : {}) }))}.${base64url.encode(JSON.stringify(claims))}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

describe('authentication with a JWKS', () => {
  const providers: TestIdentityProvider[] = [];
  let idp: TestIdentityProvider;
  const claims = (over: JWTPayload = {}): JWTPayload => ({ iss: idp.issuer, aud: AUDIENCE, sub: 'user-1', scope: 'read write', iat: seconds(), exp: seconds() + 300, ...over });
  const authenticator = (over: Partial<AuthenticatorOptions> = {}, source: Partial<Extract<AuthenticatorOptions['source'], { kind: 'jwks' }>> = {}) =>
    createAuthenticator({ source: { kind: 'jwks', url: idp.jwksUrl, ...source }, issuer: idp.issuer, audience: AUDIENCE, ...over });

  beforeAll(async () => {
    idp = await startTestIdentityProvider();
    providers.push(idp);
  });
  afterEach(() => {
    idp.mode = 'ok';
  });
  afterAll(async () => {
    await Promise.all(providers.map((p) => p.close()));
  });

  it('accepts a valid token and describes the principal', async () => {
    const auth = authenticator();
    const signed = claims({ client_id: 'web', roles: ['admin', 7] });
    const token = await idp.sign(signed);
    const result = await auth.authenticate(token);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const { principal } = result;
    expect(principal).toMatchObject({ subject: 'user-1', scopes: ['read', 'write'], clientId: 'web', roles: ['admin'] });
    expect(principal.claims.iss).toBe(idp.issuer);
    expect(principal.expiresAt.getTime()).toBe((signed.exp as number) * 1000);
    expect(principal.token).toBe(token);
    // The raw token stays out of logs and JSON.
    expect(JSON.stringify(principal)).not.toContain(token);
  });

  it('reads scopes from scp (array) and the client from azp', async () => {
    const result = await authenticator().authenticate(await idp.sign(claims({ scope: undefined, scp: ['a', 'b', 'a'], azp: 'spa' })));
    expect(result.ok && result.principal).toMatchObject({ scopes: ['a', 'b'], clientId: 'spa' });
  });

  describe('refuses', () => {
    it('an expired token, but not within the clock tolerance', async () => {
      const auth = authenticator();
      expectFailure(await auth.authenticate(await idp.sign(claims({ exp: seconds() - 31 }))), 'UNAUTHENTICATED', R.expired);
      expect((await auth.authenticate(await idp.sign(claims({ exp: seconds() - 20 })))).ok).toBe(true);
      const strict = authenticator({ clockToleranceSeconds: 0 });
      expectFailure(await strict.authenticate(await idp.sign(claims({ exp: seconds() - 1 }))), 'UNAUTHENTICATED', R.expired);
    });

    it('a token not yet valid', async () => {
      expectFailure(await authenticator().authenticate(await idp.sign(claims({ nbf: seconds() + 120 }))), 'UNAUTHENTICATED', R.notYetValid);
    });

    it('a wrong issuer', async () => {
      expectFailure(await authenticator().authenticate(await idp.sign(claims({ iss: 'https://evil.test' }))), 'UNAUTHENTICATED', R.issuer);
    });

    it('a wrong or missing audience', async () => {
      const auth = authenticator();
      expectFailure(await auth.authenticate(await idp.sign(claims({ aud: 'other-api' }))), 'UNAUTHENTICATED', R.audience);
      expectFailure(await auth.authenticate(await idp.sign(claims({ aud: undefined }))), 'UNAUTHENTICATED', R.audience);
      expect((await auth.authenticate(await idp.sign(claims({ aud: ['other-api', AUDIENCE] })))).ok).toBe(true);
    });

    it('alg: none', async () => {
      const fetchesBefore = idp.fetches;
      expectFailure(await authenticator().authenticate(unsecured(claims())), 'UNAUTHENTICATED', R.algorithmNotAllowed);
      expect(idp.fetches).toBe(fetchesBefore); // refused before any key lookup
    });

    it('HS256 signed with the public key as the secret (RFC 8725 §2.1 algorithm confusion)', async () => {
      const auth = authenticator();
      expect((await auth.authenticate(await idp.sign(claims()))).ok).toBe(true);
      const jwk = idp.publicJwk('test-key-1');
      expectFailure(await auth.authenticate(hs256(claims(), JSON.stringify(jwk), jwk.kid)), 'UNAUTHENTICATED', R.algorithmNotAllowed);
      // The same forgery against a PEM-configured router.
      const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true });
      const pem = await exportSPKI(publicKey);
      const pinned = createAuthenticator({ source: { kind: 'public-key', key: pem } });
      expectFailure(await pinned.authenticate(hs256(claims(), pem)), 'UNAUTHENTICATED', R.algorithmNotAllowed);
      const genuine = await new SignJWT(claims()).setProtectedHeader({ alg: 'RS256' }).sign(privateKey);
      expect((await pinned.authenticate(genuine)).ok).toBe(true);
    });

    it('a tampered payload', async () => {
      const [header, , signature] = (await idp.sign(claims())).split('.');
      const forged = `${header}.${base64url.encode(JSON.stringify(claims({ sub: 'admin' })))}.${signature}`;
      expectFailure(await authenticator().authenticate(forged), 'UNAUTHENTICATED', R.badSignature);
    });

    it('malformed tokens', async () => {
      const auth = authenticator();
      for (const token of ['', 'abc', 'a.b', 'a.b.c.d', 'not a token.x.y', '!!!.e30.sig']) {
        expectFailure(await auth.authenticate(token), 'UNAUTHENTICATED', R.malformed);
      }
      const valid = await idp.sign(claims());
      const [, payload, signature] = valid.split('.');
      expectFailure(await auth.authenticate(`${base64url.encode('{not json')}.${payload}.${signature}`), 'UNAUTHENTICATED', R.malformed);
      // Correctly signed, but the claims set is not a JSON object (RFC 7519 §7.2 step 10).
      const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
      const notClaims = await new CompactSign(new TextEncoder().encode('[1]')).setProtectedHeader({ alg: 'ES256' }).sign(privateKey);
      const pinned = createAuthenticator({ source: { kind: 'public-key', key: await exportJWK(publicKey) } });
      expectFailure(await pinned.authenticate(notClaims), 'UNAUTHENTICATED', R.malformed);
      expectFailure(await auth.authenticate('a.b.c.d.e'), 'UNAUTHENTICATED', R.encrypted);
    });

    it('an oversized token, before parsing anything', async () => {
      const fetchesBefore = idp.fetches;
      const big = await idp.sign(claims({ padding: 'x'.repeat(9_000) }));
      expectFailure(await authenticator().authenticate(big), 'UNAUTHENTICATED', R.tooLarge);
      expect((await authenticator({ maxTokenBytes: 16_384 }).authenticate(big)).ok).toBe(true);
      expect(idp.fetches).toBe(fetchesBefore + 1);
    });

    it('a token without a subject or an expiry', async () => {
      const auth = authenticator();
      expectFailure(await auth.authenticate(await idp.sign(claims({ sub: undefined }))), 'UNAUTHENTICATED', R.noSubject);
      expectFailure(await auth.authenticate(await idp.sign(claims({ sub: 42 as never }))), 'UNAUTHENTICATED', R.noSubject);
      expectFailure(await auth.authenticate(await idp.sign(claims({ exp: undefined }))), 'UNAUTHENTICATED', R.noExpiry);
    });
  });

  describe('JWKS caching', () => {
    it('fetches once for many tokens', async () => {
      const provider = await startTestIdentityProvider();
      providers.push(provider);
      const auth = createAuthenticator({ source: { kind: 'jwks', url: provider.jwksUrl } });
      const tokens = await Promise.all(Array.from({ length: 20 }, (_, i) => provider.sign({ sub: `u${i}`, exp: seconds() + 60 })));
      const results = await Promise.all(tokens.map((t) => auth.authenticate(t)));
      expect(results.every((r) => r.ok)).toBe(true);
      expect(provider.fetches).toBe(1);
    });

    it('an unknown kid refetches the JWKS once per cooldown, then fails', async () => {
      const provider = await startTestIdentityProvider();
      providers.push(provider);
      const clock = fakeClock();
      const auth = createAuthenticator({ source: { kind: 'jwks', url: provider.jwksUrl, cooldownMs: 500, now: clock.now } });
      expect((await auth.authenticate(await provider.sign({ sub: 'u', exp: seconds() + 60 }))).ok).toBe(true);
      expect(provider.fetches).toBe(1);
      const stranger = await provider.addKey({ publish: false });
      const forged = await provider.sign({ sub: 'u', exp: seconds() + 60 }, { kid: stranger });
      // Within the cooldown: no refetch at all.
      expectFailure(await auth.authenticate(forged), 'UNAUTHENTICATED', R.unknownKey);
      expect(provider.fetches).toBe(1);
      clock.advance(499);
      expectFailure(await auth.authenticate(forged), 'UNAUTHENTICATED', R.unknownKey);
      expect(provider.fetches).toBe(1);
      clock.advance(1);
      expectFailure(await auth.authenticate(forged), 'UNAUTHENTICATED', R.unknownKey);
      expect(provider.fetches).toBe(2);
      // A burst of made-up kids right after costs nothing more.
      const results = await Promise.all(Array.from({ length: 10 }, () => auth.authenticate(forged)));
      expect(results.every((r) => !r.ok && r.reason === R.unknownKey)).toBe(true);
      expect(provider.fetches).toBe(2);
    });

    it('picks up a key rotation after one refetch', async () => {
      const provider = await startTestIdentityProvider();
      providers.push(provider);
      const clock = fakeClock();
      const auth = createAuthenticator({ source: { kind: 'jwks', url: provider.jwksUrl, cooldownMs: 100, now: clock.now } });
      const oldToken = await provider.sign({ sub: 'u', exp: seconds() + 60 });
      expect((await auth.authenticate(oldToken)).ok).toBe(true);
      clock.advance(150);
      const newKid = await provider.addKey({ alg: 'EdDSA' });
      const newToken = await provider.sign({ sub: 'u', exp: seconds() + 60 }, { kid: newKid });
      expect((await auth.authenticate(newToken)).ok).toBe(true);
      expect(provider.fetches).toBe(2);
      expect((await auth.authenticate(newToken)).ok).toBe(true);
      expect((await auth.authenticate(oldToken)).ok).toBe(true);
      expect(provider.fetches).toBe(2);
    });

    it('tries each key when several fit a token without kid', async () => {
      const a = await generateKeyPair('ES256');
      const b = await generateKeyPair('ES256');
      const jwks = { keys: [await exportJWK(a.publicKey), await exportJWK(b.publicKey)] };
      const fetchJwks = async () => new Response(JSON.stringify(jwks), { status: 200, headers: { 'content-type': 'application/json' } });
      const auth = createAuthenticator({ source: { kind: 'jwks', url: 'https://idp.invalid/jwks', fetch: fetchJwks } });
      const token = await new SignJWT({ sub: 'u', exp: seconds() + 60 }).setProtectedHeader({ alg: 'ES256' }).sign(b.privateKey);
      expect((await auth.authenticate(token)).ok).toBe(true);
      const other = await generateKeyPair('ES256');
      const stranger = await new SignJWT({ sub: 'u', exp: seconds() + 60 }).setProtectedHeader({ alg: 'ES256' }).sign(other.privateKey);
      expectFailure(await auth.authenticate(stranger), 'UNAUTHENTICATED', R.ambiguousKey);
    });
  });

  describe('an unreachable JWKS is AUTH_UNAVAILABLE, never a pass', () => {
    it('server closed', async () => {
      const provider = await startTestIdentityProvider();
      const token = await provider.sign({ sub: 'u', exp: seconds() + 60 });
      await provider.close();
      const auth = createAuthenticator({ source: { kind: 'jwks', url: provider.jwksUrl } });
      expectFailure(await auth.authenticate(token), 'AUTH_UNAVAILABLE', R.keysUnavailable);
    });

    it('returns 500, or something that is not a JWKS', async () => {
      const provider = await startTestIdentityProvider();
      providers.push(provider);
      const token = await provider.sign({ sub: 'u', exp: seconds() + 60 });
      provider.mode = 'error';
      expectFailure(await createAuthenticator({ source: { kind: 'jwks', url: provider.jwksUrl } }).authenticate(token), 'AUTH_UNAVAILABLE', R.keysUnavailable);
      provider.mode = 'garbage';
      expectFailure(await createAuthenticator({ source: { kind: 'jwks', url: provider.jwksUrl } }).authenticate(token), 'AUTH_UNAVAILABLE', R.keysUnavailable);
      const notJwks = async () => new Response('{"keys": "nope"}', { status: 200 });
      expectFailure(await createAuthenticator({ source: { kind: 'jwks', url: 'https://idp.invalid/', fetch: notJwks } }).authenticate(token), 'AUTH_UNAVAILABLE', R.keysUnavailable);
    });

    it('hangs past the timeout', async () => {
      const provider = await startTestIdentityProvider();
      providers.push(provider);
      const token = await provider.sign({ sub: 'u', exp: seconds() + 60 });
      provider.mode = 'hang';
      const auth = createAuthenticator({ source: { kind: 'jwks', url: provider.jwksUrl, timeoutMs: 200 } });
      const started = performance.now();
      expectFailure(await auth.authenticate(token), 'AUTH_UNAVAILABLE', R.keysUnavailable);
      expect(performance.now() - started).toBeLessThan(1_500);
    });

    it('keeps verifying with the last JWKS for a while when a refetch fails (stale-if-error)', async () => {
      const provider = await startTestIdentityProvider();
      providers.push(provider);
      const token = await provider.sign({ sub: 'u', exp: seconds() + 60 });
      const clock = fakeClock();
      const lenient = createAuthenticator({ source: { kind: 'jwks', url: provider.jwksUrl, cacheMaxAgeMs: 50, cooldownMs: 10_000, now: clock.now } });
      const strict = createAuthenticator({ source: { kind: 'jwks', url: provider.jwksUrl, cacheMaxAgeMs: 50, staleIfErrorMs: 0, now: clock.now } });
      expect((await lenient.authenticate(token)).ok).toBe(true);
      expect((await strict.authenticate(token)).ok).toBe(true);
      provider.mode = 'error';
      clock.advance(80);
      const fetches = provider.fetches;
      expect((await lenient.authenticate(token)).ok).toBe(true);
      expect((await lenient.authenticate(token)).ok).toBe(true); // no second attempt within the cooldown
      expect(provider.fetches).toBe(fetches + 1);
      expectFailure(await strict.authenticate(token), 'AUTH_UNAVAILABLE', R.keysUnavailable);
      // Stale keys still refuse what they must.
      const stranger = await provider.addKey({ publish: false });
      expectFailure(await lenient.authenticate(await provider.sign({ sub: 'u', exp: seconds() + 60 }, { kid: stranger })), 'UNAUTHENTICATED', R.unknownKey);
      // Past cacheMaxAgeMs + staleIfErrorMs (default 10 min) the copy is too old to stand in.
      clock.advance(600_000);
      expectFailure(await lenient.authenticate(token), 'AUTH_UNAVAILABLE', R.keysUnavailable);
    });
  });
});

describe('authentication with a static key or a shared secret', () => {
  const claims = (over: JWTPayload = {}): JWTPayload => ({ sub: 'user-1', exp: seconds() + 300, ...over });

  it('verifies with a PEM or a JWK, narrowing the algorithms to the key type', async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    for (const key of [await exportSPKI(publicKey), await exportJWK(publicKey)]) {
      const auth = createAuthenticator({ source: { kind: 'public-key', key } });
      expect((await auth.authenticate(await new SignJWT(claims()).setProtectedHeader({ alg: 'ES256' }).sign(privateKey))).ok).toBe(true);
      const rsa = await generateKeyPair('RS256');
      expectFailure(await auth.authenticate(await new SignJWT(claims()).setProtectedHeader({ alg: 'RS256' }).sign(rsa.privateKey)), 'UNAUTHENTICATED', R.algorithmNotAllowed);
    }
  });

  it('accepts HS256 only when a shared secret is configured', async () => {
    const secret = 'a-shared-secret-of-at-least-32-bytes!!';
    const auth = createAuthenticator({ source: { kind: 'shared-secret', secret } });
    expect((await auth.authenticate(hs256(claims(), secret))).ok).toBe(true);
    expectFailure(await auth.authenticate(hs256(claims(), 'another-secret-of-at-least-32-bytes!!!')), 'UNAUTHENTICATED', R.badSignature);
    const { privateKey } = await generateKeyPair('ES256');
    expectFailure(await auth.authenticate(await new SignJWT(claims()).setProtectedHeader({ alg: 'ES256' }).sign(privateKey)), 'UNAUTHENTICATED', R.algorithmNotAllowed);
  });

  it('refuses unsafe configurations at start', async () => {
    const { publicKey } = await generateKeyPair('ES256', { extractable: true });
    const pem = await exportSPKI(publicKey);
    const bad: AuthenticatorOptions[] = [
      {},
      { source: { kind: 'jwks', url: 'https://idp.test/jwks' }, algorithms: ['none'] },
      { source: { kind: 'jwks', url: 'https://idp.test/jwks' }, algorithms: ['HS256'] },
      { source: { kind: 'jwks', url: 'https://idp.test/jwks' }, algorithms: [] },
      { source: { kind: 'jwks', url: 'file:///etc/jwks.json' } },
      { source: { kind: 'jwks', url: 'https://idp.test/jwks', timeoutMs: 1.5 } },
      { source: { kind: 'jwks', url: 'https://idp.test/jwks', cooldownMs: -1 } },
      { source: { kind: 'public-key', key: pem }, algorithms: ['HS256', 'ES256'] },
      { source: { kind: 'public-key', key: pem }, algorithms: ['RS256'] },
      { source: { kind: 'public-key', key: 'not a key' } },
      { source: { kind: 'shared-secret', secret: 'short' } },
      { source: { kind: 'shared-secret', secret: 'x'.repeat(40) }, algorithms: ['HS512'] },
      { source: { kind: 'shared-secret', secret: pem } },
      { source: { kind: 'shared-secret', secret: 'x'.repeat(40) }, algorithms: ['ES256'] },
    ];
    for (const options of bad) expect(() => createAuthenticator(options), JSON.stringify(options)).toThrow(AuthConfigError);
  });
});

describe('the dev issuer', () => {
  let store: TestStore;
  let db: Database;
  let ring: KeyRing;
  beforeAll(async () => {
    store = await createTestStore();
    db = await openMigrated(store);
    ring = await KeyRing.open(db);
  });
  afterAll(async () => {
    await db?.close();
    await store?.destroy();
  });

  it('mints tokens the router accepts from its KeyRing, next to an identity provider', async () => {
    const idp = await startTestIdentityProvider();
    try {
      const auth = createAuthenticator({ source: { kind: 'jwks', url: idp.jwksUrl }, issuer: idp.issuer, audience: AUDIENCE, devIssuer: { keyRing: ring } });
      const token = await mintDevToken(ring, { sub: 'dev-user', scopes: ['products:read'], clientId: 'cli' });
      const result = await auth.authenticate(token);
      expect(result.ok && result.principal).toMatchObject({ subject: 'dev-user', scopes: ['products:read'], clientId: 'cli' });
      expect(result.ok && result.principal.claims).toMatchObject({ iss: 'switchyard-dev', aud: 'switchyard' });
      expect(result.ok && result.principal.expiresAt.getTime() - Date.now()).toBeGreaterThan(3_500_000);
      // The identity provider's tokens still work alongside.
      expect((await auth.authenticate(await idp.sign({ iss: idp.issuer, aud: AUDIENCE, sub: 'u', exp: seconds() + 60 }))).ok).toBe(true);
      expect(idp.fetches).toBe(1);
    } finally {
      await idp.close();
    }
  });

  it('trusts only dev keys for the dev issuer, and only the dev issuer with dev keys', async () => {
    const idp = await startTestIdentityProvider();
    try {
      const auth = createAuthenticator({ source: { kind: 'jwks', url: idp.jwksUrl }, devIssuer: { keyRing: ring } });
      // An identity-provider key cannot vouch for the dev issuer.
      expectFailure(await auth.authenticate(await idp.sign({ iss: 'switchyard-dev', aud: 'switchyard', sub: 'u', exp: seconds() + 60 })), 'UNAUTHENTICATED', R.unknownKey);
      // A subgraph-token key (same ring, other purpose) cannot either.
      const key = ring.activeKey('subgraph-token');
      const subgraphKeySigned = await new SignJWT({ iss: 'switchyard-dev', aud: 'switchyard', sub: 'u', exp: seconds() + 60 }).setProtectedHeader({ alg: key.alg, kid: key.kid }).sign(key.privateKey);
      expectFailure(await auth.authenticate(subgraphKeySigned), 'UNAUTHENTICATED', R.unknownKey);
      expectFailure(await auth.authenticate(await mintDevToken(ring, { sub: 'u', audience: 'elsewhere' })), 'UNAUTHENTICATED', R.audience);
      expectFailure(await auth.authenticate(await mintDevToken(ring, { sub: 'u', ttlSeconds: 1, now: () => Date.now() - 120_000 })), 'UNAUTHENTICATED', R.expired);
      // Without the dev issuer configured, dev tokens are just tokens from an unknown key.
      const plain = createAuthenticator({ source: { kind: 'jwks', url: idp.jwksUrl } });
      expectFailure(await plain.authenticate(await mintDevToken(ring, { sub: 'u' })), 'UNAUTHENTICATED', R.unknownKey);
      // Only the dev issuer: other issuers are not accepted.
      const devOnly = createAuthenticator({ devIssuer: { keyRing: ring } });
      expectFailure(await devOnly.authenticate(await idp.sign({ iss: idp.issuer, sub: 'u', exp: seconds() + 60 })), 'UNAUTHENTICATED', R.issuer);
    } finally {
      await idp.close();
    }
  });

  it('requires a subject and a positive lifetime', async () => {
    await expect(mintDevToken(ring, { sub: '' })).rejects.toThrow(/sub/);
    await expect(mintDevToken(ring, { sub: 'u', ttlSeconds: 0 })).rejects.toThrow(/ttlSeconds/);
  });
});
