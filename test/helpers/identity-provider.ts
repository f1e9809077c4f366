// A stand-in identity provider for tests: signing keys, a JWKS endpoint that counts fetches and fails on demand, and a token signer.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTHeaderParameters, type JWTPayload } from 'jose';

/** `ok` serves the JWKS; `error` answers 500; `hang` never answers; `garbage` answers 200 with a body that is not JSON. */
export type JwksMode = 'ok' | 'error' | 'hang' | 'garbage';

export interface SignOptions {
  /** Key to sign with. Default the newest key. */
  kid?: string;
  /** Header members to add or override (`alg`, `typ`, `kid`, ...). */
  header?: Partial<JWTHeaderParameters>;
}

export interface TestIdentityProvider {
  readonly issuer: string;
  readonly jwksUrl: string;
  /** JWKS requests received (any outcome). */
  readonly fetches: number;
  mode: JwksMode;
  /** Adds a key pair (ES256 unless `alg`), published unless `publish: false`; returns its kid. Later `sign` calls default to it. */
  addKey(options?: { alg?: string; publish?: boolean }): Promise<string>;
  /** Stops publishing a key (it can still sign, for "unknown kid" tests). */
  unpublish(kid: string): void;
  /** The public JWK of a key. */
  publicJwk(kid: string): JWK;
  /** Signs `claims` as given (no defaults added): the caller sets `iss`, `aud`, `exp`, ... */
  sign(claims: JWTPayload, options?: SignOptions): Promise<string>;
  close(): Promise<void>;
}

interface KeyEntry {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
  published: boolean;
}

/** Starts the JWKS endpoint on 127.0.0.1, port 0, with one ES256 key. */
export async function startTestIdentityProvider(options: { issuer?: string } = {}): Promise<TestIdentityProvider> {
  const keys: KeyEntry[] = [];
  let fetches = 0;
  let counter = 0;
  const server = createServer(function serveJwks(request, response) {
    fetches++;
    const mode = provider.mode;
    if (mode === 'hang') return;
    if (mode === 'error') {
      response.writeHead(500, { 'content-type': 'text/plain' });
      return response.end('internal error');
    }
    const body = mode === 'garbage' ? '<html>' : JSON.stringify({ keys: keys.filter((k) => k.published).map((k) => k.publicJwk) });
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  function entry(kid: string | undefined): KeyEntry {
    const found = kid === undefined ? keys.at(-1) : keys.find((k) => k.kid === kid);
    if (!found) throw new Error(`no test key ${kid}`);
    return found;
  }

  const provider: TestIdentityProvider = {
    issuer: options.issuer ?? 'https://idp.test',
    jwksUrl: `http://127.0.0.1:${port}/jwks.json`,
    get fetches() {
      return fetches;
    },
    mode: 'ok',
    async addKey({ alg = 'ES256', publish = true } = {}) {
      const { privateKey, publicKey } = await generateKeyPair(alg);
      const kid = `test-key-${++counter}`;
      keys.push({ kid, alg, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' }, published: publish });
      return kid;
    },
    unpublish(kid) {
      entry(kid).published = false;
    },
    publicJwk(kid) {
      return { ...entry(kid).publicJwk };
    },
    async sign(claims, signOptions = {}) {
      const key = entry(signOptions.kid);
      return new SignJWT(claims).setProtectedHeader({ alg: key.alg, kid: key.kid, ...signOptions.header } as JWTHeaderParameters).sign(key.privateKey);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  await provider.addKey();
  return provider;
}
