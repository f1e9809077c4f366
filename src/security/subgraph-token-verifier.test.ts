// Unit tests of the subgraph-side verifier: audience binding, expiry, issuer, actor, algorithm and JWKS failures.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base64url, SignJWT } from 'jose';
import { createTestStore, openMigrated, type TestStore } from '../../test/helpers/database.js';
import type { Database } from '../registry/database.js';
import type { Principal } from './authenticate.js';
import { KeyRing } from './signing-keys.js';
import { createSubgraphTokenVerifier, type SubgraphTokenCheck } from './subgraph-token-verifier.js';
import { createLocalMinter, createTokenExchangeClient } from './subgraph-tokens.js';
import { startTestTokenEndpoint } from './testing/token-endpoint.js';

let store: TestStore;
let db: Database;
let ring: KeyRing;
let jwksServer: Server;
let jwksUrl: string;
let jwksMode: 'ok' | 'error' = 'ok';

beforeAll(async () => {
  store = await createTestStore();
  db = await openMigrated(store);
  ring = await KeyRing.open(db);
  // The router's /.well-known/jwks.json, as the integrator will serve it.
  jwksServer = createServer((_request, response) => {
    if (jwksMode === 'error') return response.writeHead(503).end();
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(ring.jwks()));
  });
  await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
  jwksUrl = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/.well-known/jwks.json`;
});
afterAll(async () => {
  jwksServer?.closeAllConnections();
  await new Promise((resolve) => jwksServer?.close(resolve));
  await db?.close();
  await store?.destroy();
});

const user: Principal = { subject: 'user-9', scopes: ['reviews:read'], clientId: 'web', claims: {}, token: 'unused', expiresAt: new Date(Date.now() + 3_600_000) };

function refused(check: SubgraphTokenCheck): { status: number; reason: string } {
  expect(check.ok).toBe(false);
  return check.ok ? { status: 200, reason: '' } : { status: check.status, reason: check.reason };
}

describe('subgraph token verifier', () => {
  it('accepts a token minted for this subgraph and says who it is for', async () => {
    const token = await createLocalMinter(ring).tokenFor(user, 'reviews');
    const verifier = createSubgraphTokenVerifier({ audience: 'reviews', jwksUrl, actor: 'switchyard-router', type: 'at+jwt' });
    const check = await verifier.verify(`Bearer ${token}`);
    expect(check).toMatchObject({ ok: true, subject: 'user-9', scopes: ['reviews:read'], actor: 'switchyard-router', clientId: 'web' });
  });

  it('refuses a token made for another subgraph', async () => {
    const token = await createLocalMinter(ring).tokenFor(user, 'reviews');
    const inventory = createSubgraphTokenVerifier({ audience: 'inventory', keys: ring.jwks() });
    expect(refused(await inventory.verifyToken(token))).toEqual({ status: 401, reason: 'token is not for inventory' });
  });

  it('refuses an expired token', async () => {
    const old = await createLocalMinter(ring, { now: () => Date.now() - 120_000 }).tokenFor(user, 'reviews');
    const verifier = createSubgraphTokenVerifier({ audience: 'reviews', keys: ring.jwks() });
    expect(refused(await verifier.verifyToken(old))).toEqual({ status: 401, reason: 'token expired' });
  });

  it('refuses another issuer, another actor, another type, and forgeries', async () => {
    const keys = ring.jwks();
    const token = await createLocalMinter(ring, { issuer: 'someone-else', actor: 'intruder' }).tokenFor(user, 'reviews');
    expect(refused(await createSubgraphTokenVerifier({ audience: 'reviews', keys }).verifyToken(token)).reason).toBe('token issuer not accepted');
    const strict = createSubgraphTokenVerifier({ audience: 'reviews', issuer: 'someone-else', keys, actor: 'switchyard-router' });
    expect(refused(await strict.verifyToken(token)).reason).toBe('token actor not accepted');

    // A dev-issuer key is published in the same JWKS, but a token without typ fails the type check, and none/HS* never pass.
    const key = ring.activeKey('dev-issuer');
    const claims = { iss: 'switchyard', aud: 'reviews', sub: 'x', exp: Math.floor(Date.now() / 1000) + 60 };
    const untyped = await new SignJWT(claims).setProtectedHeader({ alg: key.alg, kid: key.kid }).sign(key.privateKey);
    expect(refused(await createSubgraphTokenVerifier({ audience: 'reviews', keys, type: 'at+jwt' }).verifyToken(untyped)).reason).toBe('token type not accepted');
    expect(refused(await createSubgraphTokenVerifier({ audience: 'reviews', keys, actor: 'switchyard-router' }).verifyToken(untyped)).reason).toBe('token actor not accepted');
    // Best: trust only the subgraph-token keys.
    const onlySubgraphKeys = createSubgraphTokenVerifier({ audience: 'reviews', keys: ring.jwks('subgraph-token') });
    expect(refused(await onlySubgraphKeys.verifyToken(untyped)).reason).toBe('token signing key not recognised');
    const none = `${base64url.encode('{"alg":"none"}')}.${base64url.encode(JSON.stringify(claims))}.`;
    expect(refused(await createSubgraphTokenVerifier({ audience: 'reviews', keys }).verifyToken(none)).reason).toBe('token algorithm not allowed');
    const hs = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(JSON.stringify(keys)));
    expect(refused(await createSubgraphTokenVerifier({ audience: 'reviews', keys, algorithms: ['HS256', 'ES256'] }).verifyToken(hs)).reason).toBe('token algorithm not allowed');
  });

  it('refuses missing and malformed headers', async () => {
    const verifier = createSubgraphTokenVerifier({ audience: 'reviews', keys: ring.jwks() });
    expect(refused(await verifier.verify(undefined)).reason).toBe('missing bearer token');
    expect(refused(await verifier.verify('Basic abc')).reason).toBe('malformed authorization header');
    expect(refused(await verifier.verify('Bearer not-a-jwt')).reason).toBe('token is malformed');
    expect(refused(await verifier.verify(`Bearer ${'a'.repeat(9_000)}.b.c`)).reason).toBe('token too large');
  });

  it('answers 503 when the router JWKS cannot be fetched, never a pass', async () => {
    const token = await createLocalMinter(ring).tokenFor(user, 'reviews');
    jwksMode = 'error';
    try {
      const verifier = createSubgraphTokenVerifier({ audience: 'reviews', jwksUrl });
      expect(refused(await verifier.verifyToken(token))).toEqual({ status: 503, reason: 'router keys unavailable' });
    } finally {
      jwksMode = 'ok';
    }
  });

  it('verifies tokens obtained by token exchange against the endpoint\'s keys', async () => {
    const endpoint = await startTestTokenEndpoint();
    try {
      const realUser = { ...user, token: await createLocalMinter(ring).tokenFor(user, 'switchyard') } as Principal;
      const token = await createTokenExchangeClient({ url: endpoint.url }).tokenFor(realUser, 'inventory');
      const verifier = createSubgraphTokenVerifier({ audience: 'inventory', issuer: endpoint.issuer, jwksUrl: endpoint.jwksUrl });
      expect(await verifier.verifyToken(token)).toMatchObject({ ok: true, subject: 'user-9', actor: 'switchyard-router' });
      const other = createSubgraphTokenVerifier({ audience: 'reviews', issuer: endpoint.issuer, jwksUrl: endpoint.jwksUrl });
      expect(refused(await other.verifyToken(token)).reason).toBe('token is not for reviews');
    } finally {
      await endpoint.close();
    }
  });

  it('needs an audience and exactly one key source', () => {
    expect(() => createSubgraphTokenVerifier({ audience: '', keys: [] })).toThrow(/audience/);
    expect(() => createSubgraphTokenVerifier({ audience: 'x' })).toThrow(/exactly one/);
    expect(() => createSubgraphTokenVerifier({ audience: 'x', keys: [], jwksUrl })).toThrow(/exactly one/);
  });
});
