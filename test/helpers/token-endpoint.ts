// A tiny RFC 8693 token endpoint for tests: exchanges tokens, counts calls, records the form fields, fails on demand.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JSONWebKeySet } from 'jose';

/**
 * `ok` exchanges; `invalid_grant` / `invalid_target` answer 400 with that RFC 6749 §5.2 error;
 * `server_error` answers 500; `hang` never answers; `malformed` answers 200 without an access token.
 */
export type TokenEndpointMode = 'ok' | 'invalid_grant' | 'invalid_target' | 'server_error' | 'hang' | 'malformed';

export interface TokenEndpointRequest {
  readonly method: string;
  readonly authorization: string | undefined;
  readonly contentType: string | undefined;
  readonly form: Readonly<Record<string, string>>;
}

export interface TestTokenEndpointOptions {
  /** `expires_in` of issued tokens, in seconds. Default 300. */
  expiresInSeconds?: number;
  /** Wait before each answer, in ms (to hold exchanges in flight). Default 0. */
  delayMs?: number;
  /** `iss` of issued tokens. Default `test-token-endpoint`. */
  issuer?: string;
}

export interface TestTokenEndpoint {
  /** The token endpoint: `http://127.0.0.1:<port>/token`. */
  readonly url: string;
  /** The JWKS of the issued tokens: `http://127.0.0.1:<port>/jwks.json`. */
  readonly jwksUrl: string;
  readonly issuer: string;
  /** Exchange requests received (any outcome). */
  readonly calls: number;
  readonly requests: readonly TokenEndpointRequest[];
  /** How the next requests are answered. */
  mode: TokenEndpointMode;
  expiresInSeconds: number;
  delayMs: number;
  close(): Promise<void>;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function send(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

/**
 * Starts the endpoint on 127.0.0.1, port 0. Issued tokens are ES256 JWTs signed with a key of its own
 * (published at `jwksUrl`): `sub` and `scope` copied from the subject token (read, not verified: it is
 * a test double), `aud` = the requested audience, `act.sub` = the authenticated client id.
 */
export async function startTestTokenEndpoint(options: TestTokenEndpointOptions = {}): Promise<TestTokenEndpoint> {
  const issuer = options.issuer ?? 'test-token-endpoint';
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const kid = 'test-token-endpoint-1';
  const jwks: JSONWebKeySet = { keys: [{ ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' }] };
  const requests: TokenEndpointRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let calls = 0;

  async function exchange(form: Record<string, string>, client: string | undefined, key: CryptoKey): Promise<Record<string, unknown>> {
    let subject = 'unknown';
    let scope: unknown;
    try {
      const claims = decodeJwt(form.subject_token);
      if (typeof claims.sub === 'string') subject = claims.sub;
      scope = claims.scope;
    } catch {
      // An opaque subject token: the test decides what it means.
    }
    const iat = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({ act: { sub: client ?? 'switchyard-router' }, ...(typeof scope === 'string' ? { scope } : {}) })
      .setProtectedHeader({ alg: 'ES256', kid, typ: 'at+jwt' })
      .setIssuer(issuer)
      .setSubject(subject)
      .setAudience(form.audience)
      .setIssuedAt(iat)
      .setExpirationTime(iat + endpoint.expiresInSeconds)
      .sign(key);
    return {
      access_token: token,
      issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      token_type: 'Bearer',
      expires_in: endpoint.expiresInSeconds,
    };
  }

  const server = createServer(function handleTokenRequest(request, response) {
    void (async () => {
      const url = new URL(request.url ?? '/', 'http://localhost');
      if (request.method === 'GET' && url.pathname === '/jwks.json') return send(response, 200, jwks);
      if (url.pathname !== '/token') return send(response, 404, { error: 'not_found' });
      const body = await readBody(request);
      const form = Object.fromEntries(new URLSearchParams(body));
      const authorization = request.headers.authorization;
      requests.push({ method: request.method ?? '', authorization, contentType: request.headers['content-type'], form });
      calls++;
      const mode = endpoint.mode;
      if (mode === 'hang') return;
      if (endpoint.delayMs > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            timers.delete(timer);
            resolve();
          }, endpoint.delayMs);
          timers.add(timer);
        });
      }
      if (request.method !== 'POST' || !request.headers['content-type']?.startsWith('application/x-www-form-urlencoded')) {
        return send(response, 400, { error: 'invalid_request', error_description: 'POST a form' });
      }
      if (form.grant_type !== 'urn:ietf:params:oauth:grant-type:token-exchange' || !form.subject_token || !form.subject_token_type) {
        return send(response, 400, { error: 'invalid_request', error_description: 'not a token exchange' });
      }
      if (mode === 'invalid_grant' || mode === 'invalid_target') return send(response, 400, { error: mode });
      if (mode === 'server_error') return send(response, 500, { error: 'server_error' });
      if (mode === 'malformed') return send(response, 200, { token_type: 'Bearer' });
      let client = form.client_id;
      // RFC 6749 §2.3.1: the id was form-encoded before Basic ('+' is a space).
      if (authorization?.startsWith('Basic ')) client = decodeURIComponent(Buffer.from(authorization.slice(6), 'base64').toString('utf8').split(':')[0].replace(/\+/g, ' '));
      send(response, 200, await exchange(form, client, privateKey));
    })().catch((error: Error) => {
      if (!response.headersSent) send(response, 500, { error: 'server_error', error_description: error.message });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const endpoint: TestTokenEndpoint = {
    url: `http://127.0.0.1:${port}/token`,
    jwksUrl: `http://127.0.0.1:${port}/jwks.json`,
    issuer,
    get calls() {
      return calls;
    },
    requests,
    mode: 'ok',
    expiresInSeconds: options.expiresInSeconds ?? 300,
    delayMs: options.delayMs ?? 0,
    async close() {
      for (const timer of timers) clearTimeout(timer);
      // Hanging requests hold their sockets open; close() alone would wait for them forever.
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return endpoint;
}
