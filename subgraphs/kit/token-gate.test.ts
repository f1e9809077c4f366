// Router-token verification in front of the demo subgraphs: audience binding, refusals, JWKS outages, switching at run time, env settings.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createProductSubgraph } from '../product/index.js';
import { createReviewsSubgraph } from '../reviews/index.js';
import { createDemoSubgraph } from './create-demo-subgraph.js';
import { runStandalone } from './run-standalone.js';
import { baseUrl, createServerPool, readStats } from './test-client.js';
import { startTestTokenIssuer, type TestTokenIssuer } from './test-token-issuer.js';
import { createTokenGate, tokenRequirementFromEnv, validateTokenRequirement } from './token-gate.js';
import type { CallerContext } from './types.js';

const PRODUCT_QUERY = /* GraphQL */ `query { product(id: "1") { id name } }`;
const REVIEWS_QUERY = /* GraphQL */ `query { _service { sdl } }`;

let router: TestTokenIssuer;
beforeAll(async () => {
  router = await startTestTokenIssuer();
});
afterAll(() => router?.close());
const pool = createServerPool();
afterEach(() => pool.closeAll());

interface Answer {
  status: number;
  challenge: string | null;
  body: { data?: any; errors?: { message: string; extensions?: Record<string, unknown> }[] };
}

/** POSTs a query with `Authorization: Bearer <token>` when a token is given. */
async function post(url: string, query: string, token?: string): Promise<Answer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
    body: JSON.stringify({ query }),
  });
  return { status: response.status, challenge: response.headers.get('www-authenticate'), body: (await response.json()) as Answer['body'] };
}

describe('router tokens: audience binding', () => {
  it('lets a token for product through at product and refuses it at reviews with 401', async () => {
    const product = createProductSubgraph({ env: {} });
    const reviews = createReviewsSubgraph({ env: {} });
    const [atProduct, atReviews] = await Promise.all([pool.start(product), pool.start(reviews)]);
    product.requireTokens({ jwksUrl: router.jwksUrl });
    reviews.requireTokens({ jwksUrl: router.jwksUrl });
    const token = await router.mint('product');

    const passed = await post(atProduct.url, PRODUCT_QUERY, token);
    expect(passed).toMatchObject({ status: 200, body: { data: { product: { id: '1' } } } });
    expect(passed.body.errors).toBeUndefined();

    const stolen = await post(atReviews.url, REVIEWS_QUERY, token);
    expect(stolen).toEqual({
      status: 401,
      challenge: 'Bearer realm="reviews", error="invalid_token", error_description="token is not for reviews"',
      body: { errors: [{ message: 'reviews subgraph: token is not for reviews', extensions: { code: 'UNAUTHENTICATED' } }] },
    });
    expect(await post(atReviews.url, REVIEWS_QUERY, await router.mint('reviews'))).toMatchObject({ status: 200 });
    expect((await readStats(atReviews)).unauthorized).toBe(1);
    expect((await readStats(atProduct)).unauthorized).toBe(0);
  });
});

describe('router tokens: refusals', () => {
  async function guardedProduct() {
    const subgraph = createProductSubgraph({ env: {}, requireTokens: { jwksUrl: router.jwksUrl } });
    return { subgraph, running: await pool.start(subgraph) };
  }

  it('answers 401 without a token, with a challenge carrying no error code (RFC 6750 §3.1)', async () => {
    const { running } = await guardedProduct();
    expect(await post(running.url, PRODUCT_QUERY)).toEqual({
      status: 401,
      challenge: 'Bearer realm="product"',
      body: { errors: [{ message: 'product subgraph: missing bearer token', extensions: { code: 'UNAUTHENTICATED' } }] },
    });
  });

  it.each([
    ['an expired token', { issuedAt: Date.now() - 300_000 }, 'token expired'],
    ['another issuer', { issuer: 'someone-else' }, 'token issuer not accepted'],
    ['another actor', { actor: 'intruder' }, 'token actor not accepted'],
    ['no actor', { actor: null }, 'token actor not accepted'],
    ['no at+jwt type', { type: null }, 'token type not accepted'],
  ] as const)('answers 401 for %s', async (_, options, reason) => {
    const { running } = await guardedProduct();
    const answer = await post(running.url, PRODUCT_QUERY, await router.mint('product', options));
    expect(answer.status).toBe(401);
    expect(answer.challenge).toContain('error="invalid_token"');
    expect(answer.body.errors?.[0]).toEqual({ message: `product subgraph: ${reason}`, extensions: { code: 'UNAUTHENTICATED' } });
  });

  it('answers 401 for forgeries: a key outside the JWKS, alg none, an unsigned token, another scheme', async () => {
    const { running } = await guardedProduct();
    const stranger = await startTestTokenIssuer();
    try {
      expect((await post(running.url, PRODUCT_QUERY, await stranger.mint('product'))).body.errors?.[0].message).toBe('product subgraph: token signing key not recognised');
    } finally {
      await stranger.close();
    }
    const [header, payload] = (await router.mint('product')).split('.');
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url')}.${payload}.`;
    expect((await post(running.url, PRODUCT_QUERY, none)).body.errors?.[0].message).toBe('product subgraph: token algorithm not allowed');
    expect((await post(running.url, PRODUCT_QUERY, `${header}.${payload}.`)).status).toBe(401);
    const basic = await fetch(running.url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Basic dXNlcjpwYXNz' }, body: '{"query":"{ __typename }"}' });
    expect(basic.status).toBe(401);
    expect((await readStats(running)).unauthorized).toBe(4);
  });

  it('answers 503 when the router JWKS cannot be fetched, and recovers when it can', async () => {
    const jwks = await startTestTokenIssuer();
    const subgraph = createProductSubgraph({ env: {}, requireTokens: { jwksUrl: jwks.jwksUrl } });
    const running = await pool.start(subgraph);
    try {
      const token = await jwks.mint('product');
      jwks.mode = 'error';
      const failing = await post(running.url, PRODUCT_QUERY, token);
      expect(failing).toEqual({
        status: 503,
        challenge: null,
        body: { errors: [{ message: 'product subgraph: router keys unavailable', extensions: { code: 'SERVICE_UNAVAILABLE' } }] },
      });
      jwks.mode = 'ok';
      expect((await post(running.url, PRODUCT_QUERY, token)).status).toBe(200);
    } finally {
      await jwks.close();
    }
    // Server gone entirely (connection refused) with a fresh verifier: 503 as well, never a pass.
    subgraph.requireTokens({ jwksUrl: jwks.jwksUrl });
    expect((await post(running.url, PRODUCT_QUERY, await jwks.mint('product'))).status).toBe(503);
    expect((await readStats(running)).unauthorized).toBe(2);
  });

  it('keeps /healthz and /admin/* open', async () => {
    const { running } = await guardedProduct();
    expect((await fetch(`${baseUrl(running)}/healthz`)).status).toBe(200);
    expect((await fetch(`${baseUrl(running)}/admin/faults`)).status).toBe(200);
    expect((await fetch(`${baseUrl(running)}/admin/stats`)).status).toBe(200);
  });

  it('counts refusals in stats.unauthorized, zeroed by reset', async () => {
    const { subgraph, running } = await guardedProduct();
    await post(running.url, PRODUCT_QUERY);
    await post(running.url, PRODUCT_QUERY, await router.mint('reviews'));
    await post(running.url, PRODUCT_QUERY, await router.mint('product'));
    expect(await readStats(running)).toMatchObject({ graphqlRequests: 3, unauthorized: 2, dataSourceCalls: { productsById: 1 } });
    subgraph.stats.reset();
    expect(subgraph.stats.unauthorized).toBe(0);
  });
});

describe('router tokens: switching at run time', () => {
  it('turns on after listen() and off again with requireTokens(undefined)', async () => {
    const subgraph = createProductSubgraph({ env: {} });
    const running = await pool.start(subgraph);
    expect(subgraph.requiredTokens).toBeUndefined();
    expect((await post(running.url, PRODUCT_QUERY)).status).toBe(200);

    subgraph.requireTokens({ jwksUrl: router.jwksUrl });
    expect(subgraph.requiredTokens).toEqual({ jwksUrl: router.jwksUrl, issuer: 'switchyard' });
    expect((await post(running.url, PRODUCT_QUERY)).status).toBe(401);
    expect((await post(running.url, PRODUCT_QUERY, await router.mint('product'))).status).toBe(200);

    subgraph.requireTokens(undefined);
    expect(subgraph.requiredTokens).toBeUndefined();
    expect((await post(running.url, PRODUCT_QUERY)).status).toBe(200);
  });

  it('honours a custom issuer', async () => {
    const subgraph = createProductSubgraph({ env: {}, requireTokens: { jwksUrl: router.jwksUrl, issuer: 'https://sts.example' } });
    const running = await pool.start(subgraph);
    expect((await post(running.url, PRODUCT_QUERY, await router.mint('product', { issuer: 'https://sts.example' }))).status).toBe(200);
    expect((await post(running.url, PRODUCT_QUERY, await router.mint('product'))).status).toBe(401);
  });

  it('refuses a bad requirement and keeps the one in force', () => {
    const subgraph = createProductSubgraph({ env: {}, requireTokens: { jwksUrl: router.jwksUrl } });
    expect(() => subgraph.requireTokens({ jwksUrl: 'not a url' })).toThrow(/jwksUrl must be an http\(s\) URL \(got "not a url"\)/);
    expect(() => subgraph.requireTokens({ jwksUrl: 'file:///etc/passwd' })).toThrow(/http\(s\)/);
    expect(() => subgraph.requireTokens({ jwksUrl: router.jwksUrl, issuer: ' ' })).toThrow(/issuer must be a non-empty string/);
    expect(subgraph.requiredTokens?.jwksUrl).toBe(router.jwksUrl);
    expect(() => createProductSubgraph({ env: {}, requireTokens: { jwksUrl: '' } })).toThrow(/jwksUrl/);
  });

  it('leaves the fault switch first: an injected fault answers before any token check', async () => {
    const subgraph = createProductSubgraph({ env: {}, faults: { mode: 'error', errorStatus: 503 }, requireTokens: { jwksUrl: router.jwksUrl } });
    const running = await pool.start(subgraph);
    const response = await fetch(running.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: PRODUCT_QUERY }) });
    expect(response.status).toBe(503);
    expect(await response.text()).toBe('product subgraph: injected HTTP 503');
    expect(subgraph.stats.unauthorized).toBe(0);
  });

  it('runs the authenticate option after the token check', async () => {
    const seen: string[] = [];
    const subgraph = createProductSubgraph({
      env: {},
      requireTokens: { jwksUrl: router.jwksUrl },
      authenticate: async (req) => {
        seen.push(req.headers.authorization ?? '');
        return { status: 403, message: 'not today' };
      },
    });
    const running = await pool.start(subgraph);
    expect((await post(running.url, PRODUCT_QUERY)).status).toBe(401);
    expect(seen).toEqual([]);
    const token = await router.mint('product');
    expect(await post(running.url, PRODUCT_QUERY, token)).toMatchObject({ status: 403, body: { errors: [{ message: 'not today', extensions: { code: 'FORBIDDEN' } }] } });
    expect(seen).toEqual([`Bearer ${token}`]);
    subgraph.requireTokens(undefined);
    expect((await post(running.url, PRODUCT_QUERY)).status).toBe(403);
  });
});

describe('router tokens: outside HTTP (verifyConnection)', () => {
  it('runs the same verifier and leaves the answer to the transport', async () => {
    const gate = createTokenGate('inventory', validateTokenRequirement({ jwksUrl: router.jwksUrl }), () => undefined);
    const token = await router.mint('inventory', { subject: 'user-7', scopes: ['stock:read'], lifetimeSeconds: 30 });
    const passed = await gate.verifyConnection(`Bearer ${token}`);
    expect(passed).toEqual({ ok: true, caller: { subject: 'user-7', scopes: ['stock:read'] }, expiresAt: expect.any(Date) });
    if (passed.ok) expect(passed.expiresAt.getTime() - Date.now()).toBeGreaterThan(25_000);
    expect(await gate.verifyConnection(undefined)).toEqual({ ok: false, status: 401, message: 'inventory subgraph: missing bearer token' });
    expect(await gate.verifyConnection(`Bearer ${await router.mint('product')}`)).toEqual({ ok: false, status: 401, message: 'inventory subgraph: token is not for inventory' });
    const offline = createTokenGate('inventory', validateTokenRequirement({ jwksUrl: 'http://127.0.0.1:9/jwks.json' }), () => undefined);
    expect(await offline.verifyConnection(`Bearer ${token}`)).toEqual({ ok: false, status: 503, message: 'inventory subgraph: router keys unavailable' });
  });
});

describe('router tokens: resolvers see the caller', () => {
  it('puts { subject, scopes } in context.caller, undefined when verification is off', async () => {
    const subgraph = createDemoSubgraph<object>({
      name: 'product',
      defaultPort: 0,
      setup: () => ({
        createContext: () => ({}),
        resolvers: {
          Query: {
            product: (_: unknown, args: { id: string }, context: CallerContext) => ({
              id: args.id,
              name: context.caller === undefined ? 'nobody' : `${context.caller.subject} [${context.caller.scopes.join(',')}]`,
              price: 0,
            }),
          },
        },
      }),
    }, { env: {} });
    const running = await pool.start(subgraph);
    expect((await post(running.url, PRODUCT_QUERY)).body.data.product.name).toBe('nobody');
    subgraph.requireTokens({ jwksUrl: router.jwksUrl });
    const token = await router.mint('product', { subject: 'user-9', scopes: ['catalog:read', 'reviews:write'] });
    expect((await post(running.url, PRODUCT_QUERY, token)).body.data.product.name).toBe('user-9 [catalog:read,reviews:write]');
  });
});

describe('router tokens: settings from the environment', () => {
  it('reads ROUTER_JWKS_URL and ROUTER_TOKEN_ISSUER at creation', async () => {
    const subgraph = createProductSubgraph({ env: { ROUTER_JWKS_URL: ` ${router.jwksUrl} `, ROUTER_TOKEN_ISSUER: 'https://sts.example' } });
    expect(subgraph.requiredTokens).toEqual({ jwksUrl: router.jwksUrl, issuer: 'https://sts.example' });
    const running = await pool.start(subgraph);
    expect((await post(running.url, PRODUCT_QUERY)).status).toBe(401);
    expect((await post(running.url, PRODUCT_QUERY, await router.mint('product', { issuer: 'https://sts.example' }))).status).toBe(200);
  });

  it('is off when ROUTER_JWKS_URL is unset or blank; the requireTokens option wins over the environment', () => {
    expect(createProductSubgraph({ env: {} }).requiredTokens).toBeUndefined();
    expect(createProductSubgraph({ env: { ROUTER_JWKS_URL: '  ', ROUTER_TOKEN_ISSUER: 'x' } }).requiredTokens).toBeUndefined();
    const subgraph = createProductSubgraph({ env: { ROUTER_JWKS_URL: 'http://elsewhere:4000/.well-known/jwks.json' }, requireTokens: { jwksUrl: router.jwksUrl } });
    expect(subgraph.requiredTokens).toEqual({ jwksUrl: router.jwksUrl, issuer: 'switchyard' });
  });

  it('throws at creation on a bad ROUTER_JWKS_URL, naming the variable', () => {
    expect(() => createProductSubgraph({ env: { ROUTER_JWKS_URL: 'router:4000' } })).toThrow(/ROUTER_JWKS_URL.*must be an http\(s\) URL/);
    expect(() => tokenRequirementFromEnv({ ROUTER_JWKS_URL: 'ftp://router/jwks' })).toThrow(/ROUTER_JWKS_URL/);
    expect(tokenRequirementFromEnv({ ROUTER_JWKS_URL: 'http://router:4000/.well-known/jwks.json', ROUTER_TOKEN_ISSUER: '' })).toEqual({
      jwksUrl: 'http://router:4000/.well-known/jwks.json',
      issuer: 'switchyard',
    });
    expect(validateTokenRequirement({ jwksUrl: 'https://router.example/.well-known/jwks.json', issuer: 'me' })).toEqual({ jwksUrl: 'https://router.example/.well-known/jwks.json', issuer: 'me' });
  });

  it('runStandalone applies the environment it is given', async () => {
    const subgraph = createProductSubgraph({ env: {} });
    const before = { term: process.listeners('SIGTERM'), int: process.listeners('SIGINT') };
    const running = await runStandalone(subgraph, { PORT: '0', ROUTER_JWKS_URL: router.jwksUrl });
    try {
      expect(subgraph.requiredTokens).toEqual({ jwksUrl: router.jwksUrl, issuer: 'switchyard' });
      expect((await post(running.url, PRODUCT_QUERY)).status).toBe(401);
      expect((await post(running.url, PRODUCT_QUERY, await router.mint('product'))).status).toBe(200);
    } finally {
      await running.close();
      // runStandalone's signal handlers belong to a process it owns; this test is not one.
      for (const listener of process.listeners('SIGTERM')) if (!before.term.includes(listener)) process.off('SIGTERM', listener);
      for (const listener of process.listeners('SIGINT')) if (!before.int.includes(listener)) process.off('SIGINT', listener);
    }
  });
});
