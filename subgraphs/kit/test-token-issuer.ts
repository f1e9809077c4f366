// Test helpers standing in for the router's token side: an ES256 key pair, a JWKS server on port 0, and tokens minted like the router's.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JSONWebKeySet } from 'jose';

export interface MintOptions {
  /** `sub`. Default `user-1`. */
  subject?: string;
  /** Space-joined into `scope`; left out when empty. Default none. */
  scopes?: string[];
  /** `client_id` (RFC 8693 §4.3). Default none. */
  clientId?: string;
  /** `iss`. Default `switchyard`. */
  issuer?: string;
  /** `act.sub`; `null` leaves `act` out. Default `switchyard-router`. */
  actor?: string | null;
  /** Header `typ`; `null` leaves it out. Default `at+jwt`. */
  type?: string | null;
  /** Lifetime in seconds from `issuedAt`. Default 60. */
  lifetimeSeconds?: number;
  /** `iat`, in ms since the epoch. Default now. */
  issuedAt?: number;
}

/** A key pair that signs tokens the way the router does. */
export interface TestSigner {
  readonly kid: string;
  /** The public key set a JWKS endpoint would publish for this signer. */
  jwks(): JSONWebKeySet;
  /** A token for subgraph `audience`, shaped like the router's (`iss`, `sub`, `aud`, `act`, `scope`, `client_id`, `iat`, `exp`, `jti`; header `kid`, `typ`). */
  mint(audience: string, options?: MintOptions): Promise<string>;
}

export async function createTestSigner(kid = `test-${randomUUID()}`): Promise<TestSigner> {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' };
  return {
    kid,
    jwks: () => ({ keys: [publicJwk] }),
    mint: (audience, options = {}) => mintWith(privateKey, kid, audience, options),
  };
}

async function mintWith(privateKey: CryptoKey, kid: string, audience: string, options: MintOptions): Promise<string> {
  const iat = Math.floor((options.issuedAt ?? Date.now()) / 1000);
  const claims: Record<string, unknown> = {};
  if (options.actor !== null) claims.act = { sub: options.actor ?? 'switchyard-router' };
  if (options.scopes?.length) claims.scope = options.scopes.join(' ');
  if (options.clientId !== undefined) claims.client_id = options.clientId;
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'ES256', kid, ...(options.type === null ? {} : { typ: options.type ?? 'at+jwt' }) })
    .setIssuer(options.issuer ?? 'switchyard')
    .setSubject(options.subject ?? 'user-1')
    .setAudience(audience)
    .setIssuedAt(iat)
    .setExpirationTime(iat + (options.lifetimeSeconds ?? 60))
    .setJti(randomUUID())
    .sign(privateKey);
}

/** A signer whose keys are served at `jwksUrl`, like the router's `GET /.well-known/jwks.json`. */
export interface TestTokenIssuer extends TestSigner {
  readonly jwksUrl: string;
  /** `ok` serves the keys; `error` answers 503. Changeable at any time. */
  mode: 'ok' | 'error';
  /** JWKS requests served so far. */
  readonly fetches: number;
  /** Stops the JWKS server (later fetches are refused). Idempotent. */
  close(): Promise<void>;
}

export async function startTestTokenIssuer(): Promise<TestTokenIssuer> {
  const signer = await createTestSigner();
  const state = { mode: 'ok' as TestTokenIssuer['mode'], fetches: 0 };
  const server = createServer(function serveTestJwks(_request, response) {
    state.fetches += 1;
    if (state.mode === 'error') return void response.writeHead(503).end();
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(signer.jwks()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  let closed: Promise<void> | undefined;
  return {
    ...signer,
    jwksUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`,
    get mode() {
      return state.mode;
    },
    set mode(mode) {
      state.mode = mode;
    },
    get fetches() {
      return state.fetches;
    },
    close: function closeTestJwks() {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
