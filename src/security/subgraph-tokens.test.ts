// Unit tests of per-subgraph tokens: the local minter's claims, the RFC 8693 client against the test endpoint, and the cache.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { createTestStore, openMigrated, type TestStore } from '../../test/helpers/database.js';
import type { Database } from '../registry/database.js';
import { createAuthenticator } from './authentication/authenticate.js';
import { mintDevToken } from './authentication/dev-token.js';
import type { Principal } from './authentication/principal.js';
import { KeyRing, rotateKeys } from './signing-keys.js';
import {
  createLocalMinter,
  createTokenExchangeClient,
  SubgraphTokenError,
  TOKEN_TYPE_ACCESS_TOKEN,
  type IssuedToken,
  type SubgraphTokenSource,
} from './subgraph-tokens.js';
import { withTokenCache } from './subgraph-token-cache.js';
import { startTestTokenEndpoint, type TestTokenEndpoint } from '../../test/helpers/token-endpoint.js';

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

/** A principal as the authenticator produces it, from a real dev token. */
async function principalFor(sub: string, options: { scopes?: string[]; clientId?: string; ttlSeconds?: number } = {}): Promise<Principal> {
  const token = await mintDevToken(ring, { sub, ...options });
  const result = await createAuthenticator({ devIssuer: { keyRing: ring } }).authenticate(token);
  if (!result.ok) throw new Error(result.reason);
  return result.principal;
}

const seconds = () => Math.floor(Date.now() / 1000);

describe('local minter', () => {
  it('mints a token for one subgraph, acting for the user', async () => {
    const user = await principalFor('user-7', { scopes: ['reviews:read', 'reviews:write'], clientId: 'web' });
    const minter = createLocalMinter(ring);
    const issued = await minter.issue(user, 'reviews');
    const { payload, protectedHeader } = await jwtVerify(issued.token, createLocalJWKSet(ring.jwks()), { audience: 'reviews', issuer: 'switchyard' });
    expect(payload).toMatchObject({ iss: 'switchyard', aud: 'reviews', sub: 'user-7', scope: 'reviews:read reviews:write', act: { sub: 'switchyard-router' }, client_id: 'web' });
    expect(typeof payload.jti).toBe('string');
    expect(protectedHeader).toEqual({ alg: 'ES256', kid: ring.activeKey('subgraph-token').kid, typ: 'at+jwt' });
    expect((payload.exp as number) - (payload.iat as number)).toBe(300);
    expect(issued.expiresAt).toBe((payload.exp as number) * 1000);
    expect(await minter.tokenFor(user, 'reviews')).not.toBe(issued.token); // fresh jti each time
  });

  it('never outlives the user token', async () => {
    const user = await principalFor('short-lived', { ttlSeconds: 20 });
    const token = await createLocalMinter(ring, { lifetimeSeconds: 300 }).tokenFor(user, 'inventory');
    const { exp } = decodeJwt(token);
    expect(exp).toBe(user.expiresAt.getTime() / 1000);
    expect(exp).toBeLessThanOrEqual(seconds() + 20);
  });

  it('mints for anonymous requests without scopes, with configurable issuer and actor', async () => {
    const token = await createLocalMinter(ring, { issuer: 'router.example', actor: 'edge-7', lifetimeSeconds: 30 }).tokenFor(undefined, 'product');
    const payload = decodeJwt(token);
    expect(payload).toMatchObject({ iss: 'router.example', sub: 'anonymous', aud: 'product', act: { sub: 'edge-7' } });
    expect(payload).not.toHaveProperty('scope');
    expect((payload.exp as number) - (payload.iat as number)).toBe(30);
  });

  it('signs with the new key after a rotation is reloaded', async () => {
    const other = await KeyRing.open(db);
    const before = other.activeKey('subgraph-token').kid;
    const rotated = await rotateKeys(db, 'subgraph-token');
    await other.reload(db);
    const token = await createLocalMinter(other).tokenFor(undefined, 'product');
    expect(decodeProtectedHeader(token).kid).toBe(rotated.kid);
    expect(rotated.kid).not.toBe(before);
    await ring.reload(db);
  });
});

describe('RFC 8693 token exchange client', () => {
  let endpoint: TestTokenEndpoint;
  beforeAll(async () => {
    endpoint = await startTestTokenEndpoint({ expiresInSeconds: 120 });
  });
  afterAll(async () => {
    await endpoint?.close();
  });

  it('posts the token exchange form and returns the issued token', async () => {
    const user = await principalFor('user-1', { scopes: ['a', 'b'] });
    const client = createTokenExchangeClient({ url: endpoint.url, clientId: 'router id', clientSecret: 's3cr=t&' });
    const calls = endpoint.calls;
    const started = Date.now();
    const issued = await client.issue(user, 'reviews');
    expect(endpoint.calls).toBe(calls + 1);
    const request = endpoint.requests.at(-1)!;
    expect(request.method).toBe('POST');
    expect(request.contentType).toBe('application/x-www-form-urlencoded');
    expect(request.form).toEqual({
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token: user.token,
      subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
      audience: 'reviews',
    });
    // RFC 6749 §2.3.1: id and secret form-encoded, then Basic.
    expect(request.authorization).toBe(`Basic ${Buffer.from('router+id:s3cr%3Dt%26').toString('base64')}`);
    expect(decodeJwt(issued.token)).toMatchObject({ iss: endpoint.issuer, aud: 'reviews', sub: 'user-1', scope: 'a b', act: { sub: 'router id' } });
    expect(issued.expiresAt).toBeGreaterThanOrEqual(started + 120_000);
    expect(issued.expiresAt).toBeLessThanOrEqual(Date.now() + 120_000);
  });

  it('sends client_id in the form for a public client, and the optional token types', async () => {
    const user = await principalFor('user-2');
    const client = createTokenExchangeClient({ url: endpoint.url, clientId: 'public-router', subjectTokenType: TOKEN_TYPE_ACCESS_TOKEN, requestedTokenType: TOKEN_TYPE_ACCESS_TOKEN });
    await client.tokenFor(user, 'inventory');
    const request = endpoint.requests.at(-1)!;
    expect(request.authorization).toBeUndefined();
    expect(request.form).toMatchObject({ client_id: 'public-router', subject_token_type: TOKEN_TYPE_ACCESS_TOKEN, requested_token_type: TOKEN_TYPE_ACCESS_TOKEN });
  });

  it('types every failure', async () => {
    const user = await principalFor('user-3');
    const client = createTokenExchangeClient({ url: endpoint.url, timeoutMs: 200 });
    const failure = async (mode: TestTokenEndpoint['mode']) => {
      endpoint.mode = mode;
      try {
        return await client.issue(user, 'reviews').then(() => undefined, (error: unknown) => error as SubgraphTokenError);
      } finally {
        endpoint.mode = 'ok';
      }
    };
    expect(await failure('invalid_grant')).toMatchObject({ code: 'TOKEN_EXCHANGE_FAILED', audience: 'reviews', retryable: false, details: { status: 400, oauthError: 'invalid_grant' } });
    expect(await failure('invalid_target')).toMatchObject({ code: 'TOKEN_EXCHANGE_FAILED', details: { oauthError: 'invalid_target' } });
    expect(await failure('server_error')).toMatchObject({ code: 'TOKEN_EXCHANGE_UNAVAILABLE', retryable: true, details: { status: 500 } });
    expect(await failure('malformed')).toMatchObject({ code: 'TOKEN_EXCHANGE_FAILED', message: 'token endpoint response has no access_token' });
    const hang = await failure('hang');
    expect(hang).toBeInstanceOf(SubgraphTokenError);
    expect(hang).toMatchObject({ code: 'TOKEN_EXCHANGE_UNAVAILABLE', message: 'token endpoint did not answer within 200 ms' });

    const closed = await startTestTokenEndpoint();
    await closed.close();
    await expect(createTokenExchangeClient({ url: closed.url }).issue(user, 'reviews')).rejects.toMatchObject({ code: 'TOKEN_EXCHANGE_UNAVAILABLE', message: 'token endpoint unreachable' });
  });

  it('refuses token types it cannot send, and passes the caller\'s abort through', async () => {
    const user = await principalFor('user-4');
    const dpop = async () => new Response(JSON.stringify({ access_token: 'x', token_type: 'DPoP', expires_in: 60 }), { status: 200 });
    await expect(createTokenExchangeClient({ url: endpoint.url, fetch: dpop }).issue(user, 'reviews')).rejects.toMatchObject({ code: 'TOKEN_EXCHANGE_FAILED' });
    endpoint.mode = 'hang';
    try {
      const controller = new AbortController();
      const pending = createTokenExchangeClient({ url: endpoint.url, timeoutMs: 5_000 }).issue(user, 'reviews', controller.signal);
      controller.abort(new Error('client went away'));
      await expect(pending).rejects.toThrow('client went away');
    } finally {
      endpoint.mode = 'ok';
    }
  });

  it('has no token to exchange for anonymous requests unless given a fallback', async () => {
    await expect(createTokenExchangeClient({ url: endpoint.url }).issue(undefined, 'product')).rejects.toMatchObject({ code: 'TOKEN_EXCHANGE_FAILED' });
    const calls = endpoint.calls;
    const token = await createTokenExchangeClient({ url: endpoint.url, anonymous: createLocalMinter(ring) }).tokenFor(undefined, 'product');
    expect(decodeJwt(token)).toMatchObject({ sub: 'anonymous', aud: 'product', iss: 'switchyard' });
    expect(endpoint.calls).toBe(calls);
  });

  it('behind the cache: one exchange for 10 concurrent calls, failures not cached', async () => {
    const user = await principalFor('user-5');
    const cached = withTokenCache(createTokenExchangeClient({ url: endpoint.url }));
    endpoint.delayMs = 100;
    try {
      const calls = endpoint.calls;
      const tokens = await Promise.all(Array.from({ length: 10 }, () => cached.tokenFor(user, 'reviews')));
      expect(new Set(tokens).size).toBe(1);
      expect(endpoint.calls).toBe(calls + 1);
      expect(cached.stats()).toMatchObject({ misses: 1, shared: 9, hits: 0, size: 1 });
      await cached.tokenFor(user, 'reviews');
      expect(endpoint.calls).toBe(calls + 1);

      endpoint.mode = 'server_error';
      const failures = await Promise.allSettled(Array.from({ length: 5 }, () => cached.tokenFor(user, 'inventory')));
      expect(failures.every((f) => f.status === 'rejected')).toBe(true);
      expect(endpoint.calls).toBe(calls + 2);
      endpoint.mode = 'ok';
      await cached.tokenFor(user, 'inventory');
      expect(endpoint.calls).toBe(calls + 3);
    } finally {
      endpoint.delayMs = 0;
      endpoint.mode = 'ok';
    }
  });
});

/** A source that counts calls and hands out tokens valid for `lifetimeMs` on a fake clock. */
function countingSource(clock: { ms: number }, lifetimeMs = 60_000) {
  const source = {
    calls: 0,
    fail: false,
    gate: undefined as Promise<void> | undefined,
    async issue(principal: Principal | undefined, audience: string): Promise<IssuedToken> {
      source.calls++;
      await source.gate;
      if (source.fail) throw new SubgraphTokenError('TOKEN_EXCHANGE_UNAVAILABLE', audience, 'down');
      return { token: `t${source.calls}:${principal?.subject ?? 'anonymous'}:${audience}`, expiresAt: clock.ms + lifetimeMs };
    },
    async tokenFor(principal: Principal | undefined, audience: string) {
      return (await source.issue(principal, audience)).token;
    },
  };
  return source satisfies SubgraphTokenSource;
}

function fakePrincipal(token: string, expiresAt = Date.now() + 3_600_000): Principal {
  return { subject: token.split('.')[0], scopes: [], claims: {}, token, expiresAt: new Date(expiresAt) };
}

describe('token cache', () => {
  it('reuses a token per (user token, audience)', async () => {
    const clock = { ms: 1_000_000 };
    const source = countingSource(clock);
    const cache = withTokenCache(source, { now: () => clock.ms });
    const alice = fakePrincipal('alice.token');
    for (let i = 0; i < 50; i++) expect(await cache.tokenFor(alice, 'reviews')).toBe('t1:alice:reviews');
    // Another principal object carrying the same token (the next request) shares the entry.
    expect(await cache.tokenFor(fakePrincipal('alice.token'), 'reviews')).toBe('t1:alice:reviews');
    expect(await cache.tokenFor(alice, 'inventory')).toBe('t2:alice:inventory');
    expect(await cache.tokenFor(fakePrincipal('bob.token'), 'reviews')).toBe('t3:bob:reviews');
    expect(await cache.tokenFor(undefined, 'reviews')).toBe('t4:anonymous:reviews');
    expect(await cache.tokenFor(undefined, 'reviews')).toBe('t4:anonymous:reviews');
    expect(source.calls).toBe(4);
    expect(cache.stats()).toEqual({ hits: 51, misses: 4, shared: 0, evictions: 0, size: 4 });
  });

  it("shares a token among one holder's user tokens (subject, scopes, client), never past the caller's own", async () => {
    const clock = { ms: 1_000_000 };
    const source = countingSource(clock, 60_000);
    const cache = withTokenCache(source, { now: () => clock.ms, refreshBeforeExpiryMs: 10_000 });
    const holder = (token: string, expiresAt: number, more: Partial<Principal> = {}): Principal => ({ ...fakePrincipal(token, expiresAt), scopes: ['read', 'write'], ...more });
    const tab = holder('alice.one', clock.ms + 3_600_000);
    expect(await cache.tokenFor(tab, 'reviews')).toBe('t1:alice:reviews');
    // The next login, or another tab: another user token of the same holder, scopes in another order.
    expect(await cache.tokenFor(holder('alice.two', clock.ms + 1_800_000, { scopes: ['write', 'read'] }), 'reviews')).toBe('t1:alice:reviews');
    // Another client of the same user is another holder.
    expect(await cache.tokenFor(holder('alice.one', clock.ms + 3_600_000, { clientId: 'mobile' }), 'reviews')).toBe('t2:alice:reviews');
    // A token of the holder that ends within the refresh margin is not given the shared one.
    expect(await cache.tokenFor(holder('alice.three', clock.ms + 5_000), 'reviews')).toBe('t3:alice:reviews');
    expect(await cache.tokenFor(tab, 'reviews')).toBe('t1:alice:reviews');
    expect(source.calls).toBe(3);
  });

  it("keeps an exchanged token to its own user token: a holder's other tokens get theirs (the exchange may carry any claim of the token it was given)", async () => {
    const clock = { ms: 1_000_000 };
    const source = Object.assign(countingSource(clock, 60_000), { perUserToken: true });
    const cache = withTokenCache(source, { now: () => clock.ms });
    const holder = (token: string): Principal => ({ ...fakePrincipal(token, clock.ms + 3_600_000), scopes: ['read'] });
    expect(await cache.tokenFor(holder('alice.one'), 'reviews')).toBe('t1:alice:reviews');
    // The same user token (a new principal object, the next request) shares it; another token of the same holder does not.
    expect(await cache.tokenFor(holder('alice.one'), 'reviews')).toBe('t1:alice:reviews');
    expect(await cache.tokenFor(holder('alice.two'), 'reviews')).toBe('t2:alice:reviews');
    expect(source.calls).toBe(2);
  });

  it('refreshes shortly before expiry, and never past the user token', async () => {
    const clock = { ms: 1_000_000 };
    const source = countingSource(clock, 60_000);
    const cache = withTokenCache(source, { now: () => clock.ms, refreshBeforeExpiryMs: 10_000 });
    const alice = fakePrincipal('alice.token', clock.ms + 3_600_000);
    await cache.tokenFor(alice, 'reviews');
    clock.ms += 49_999;
    expect(await cache.tokenFor(alice, 'reviews')).toBe('t1:alice:reviews');
    clock.ms += 1;
    expect(await cache.tokenFor(alice, 'reviews')).toBe('t2:alice:reviews');

    // The user's token ends in 30 s: the entry is reused for 20 s only.
    const bob = fakePrincipal('bob.token', clock.ms + 30_000);
    await cache.tokenFor(bob, 'reviews');
    clock.ms += 19_999;
    expect(await cache.tokenFor(bob, 'reviews')).toBe('t3:bob:reviews');
    clock.ms += 1;
    expect(await cache.tokenFor(bob, 'reviews')).toBe('t4:bob:reviews');

    // A token already inside the refresh window is used once, not stored.
    const carol = fakePrincipal('carol.token', clock.ms + 5_000);
    await cache.tokenFor(carol, 'reviews');
    await cache.tokenFor(carol, 'reviews');
    expect(source.calls).toBe(6);
  });

  it('shares one issue among concurrent callers; one caller aborting does not cancel the others', async () => {
    const clock = { ms: 1_000_000 };
    const source = countingSource(clock);
    let open: () => void = () => {};
    source.gate = new Promise<void>((resolve) => (open = resolve));
    const cache = withTokenCache(source, { now: () => clock.ms });
    const alice = fakePrincipal('alice.token');
    const controller = new AbortController();
    const impatient = cache.tokenFor(alice, 'reviews', controller.signal);
    const others = Array.from({ length: 9 }, () => cache.tokenFor(alice, 'reviews'));
    controller.abort(new Error('deadline'));
    await expect(impatient).rejects.toThrow('deadline');
    open();
    expect(new Set(await Promise.all(others))).toEqual(new Set(['t1:alice:reviews']));
    expect(source.calls).toBe(1);
    expect(cache.stats()).toMatchObject({ misses: 1, shared: 9 });
    await expect(cache.tokenFor(alice, 'reviews', AbortSignal.abort(new Error('already gone')))).rejects.toThrow('already gone');
  });

  it('does not cache failures', async () => {
    const clock = { ms: 1_000_000 };
    const source = countingSource(clock);
    const cache = withTokenCache(source, { now: () => clock.ms });
    const alice = fakePrincipal('alice.token');
    source.fail = true;
    await expect(cache.tokenFor(alice, 'reviews')).rejects.toBeInstanceOf(SubgraphTokenError);
    await expect(cache.tokenFor(alice, 'reviews')).rejects.toBeInstanceOf(SubgraphTokenError);
    source.fail = false;
    expect(await cache.tokenFor(alice, 'reviews')).toBe('t3:alice:reviews');
    expect(source.calls).toBe(3);
    expect(cache.stats().size).toBe(1);
  });

  it('stays under maxEntries: expired entries first, then the least recently used', async () => {
    const clock = { ms: 1_000_000 };
    const source = countingSource(clock);
    const cache = withTokenCache(source, { now: () => clock.ms, maxEntries: 2 });
    const [a, b, c] = ['a.t', 'b.t', 'c.t'].map((t) => fakePrincipal(t));
    await cache.tokenFor(a, 'x');
    await cache.tokenFor(b, 'x');
    await cache.tokenFor(a, 'x'); // a is now the most recently used
    await cache.tokenFor(c, 'x'); // evicts b
    expect(cache.stats()).toMatchObject({ size: 2, evictions: 1 });
    await cache.tokenFor(a, 'x');
    expect(source.calls).toBe(3);
    await cache.tokenFor(b, 'x');
    expect(source.calls).toBe(4);
    clock.ms += 55_000; // everything is inside the refresh window now: swept, not evicted
    await cache.tokenFor(fakePrincipal('d.t'), 'x');
    expect(cache.stats()).toMatchObject({ size: 1, evictions: 2 });
    cache.clear();
    expect(cache.stats().size).toBe(0);
  });
});
