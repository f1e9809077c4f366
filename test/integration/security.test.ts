// The secure gate: authentication at the edge, live permissions, per-subgraph tokens, and an audit row per request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt, SignJWT, UnsecuredJWT } from 'jose';
import { grantPermission, revokePermission } from '../../src/registry/permission-store.js';
import { publishSubgraph, removeSubgraph } from '../../src/registry/subgraph-store.js';
import { compositionCheck } from '../../src/cli/registry-commands.js';
import { startFixtureSubgraph } from '../helpers/fixture-subgraph.js';
import { queryAudit } from '../../src/registry/audit-store.js';
import { startTestIdentityProvider, type TestIdentityProvider } from '../helpers/identity-provider.js';
import { startTestTokenEndpoint, type TestTokenEndpoint } from '../helpers/token-endpoint.js';
import { databaseKind, TEST_DATABASE_URL } from '../helpers/database.js';
import pg from 'pg';
import { eventually, postGraphQL } from '../helpers/http.js';
import { readMetric, startStack, type Stack } from '../helpers/stack.js';

const PAGE = 'query ProductPage { product(id: "2") { name reviews { rating } inventory { inStock } } }';
const AUDIENCE = 'switchyard-api';

describe(`security (${databaseKind} database)`, () => {
  let idp: TestIdentityProvider;
  let stack: Stack;
  let mainKid: string;
  const now = () => Math.floor(Date.now() / 1000);
  const token = (claims: Record<string, unknown> = {}, options: { kid?: string } = {}) =>
    idp.sign({ iss: idp.issuer, aud: AUDIENCE, sub: 'alice', exp: now() + 300, iat: now(), ...claims }, { kid: mainKid, ...options });

  beforeAll(async () => {
    idp = await startTestIdentityProvider();
    mainKid = await idp.addKey();
    stack = await startStack({ config: { authMode: 'required', jwksUrl: idp.jwksUrl, jwtIssuer: idp.issuer, jwtAudience: AUDIENCE } });
  });
  afterAll(async () => {
    await stack?.close();
    await idp?.close();
  });

  const callsSoFar = () => Object.values(stack.subgraphs).reduce((sum, { subgraph }) => sum + subgraph.stats.snapshot().graphqlRequests, 0);

  describe('authentication', () => {
    it('lets a valid token through, and every subgraph receives a token made for it alone', async () => {
      const { status, headers } = await stack.query(PAGE, { headers: { authorization: `Bearer ${await token()}` } });
      expect(status).toBe(200);
      expect(headers.get('switchyard-completed')).toBe('true');
      // The subgraphs require the router's per-subgraph tokens (audience = their own name): none refused one.
      for (const { subgraph } of Object.values(stack.subgraphs)) expect(subgraph.stats.snapshot().unauthorized).toBe(0);
    });

    it('sends each subgraph a token made for it, never the user token, and one subgraph refuses another\'s', async () => {
      const userToken = await token({ scope: 'catalog:read' });
      const fixture = await startFixtureSubgraph({
        sdl: 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"]) type Product @key(fields: "id") { id: ID! badge: String! }',
        resolvers: { Product: { __resolveReference: (ref: { id: string }) => ({ id: ref.id, badge: 'new' }) } },
      });
      try {
        const swapped = stack.nextSwap();
        await publishSubgraph(stack.db, { name: 'badges', url: fixture.url, sdl: fixture.sdl }, compositionCheck);
        await swapped;
        const { body } = await stack.query('{ product(id: "1") { name badge } }', { headers: { authorization: `Bearer ${userToken}` } });
        expect(body.data.product.badge).toBe('new');
        const received = fixture.requests.at(-1)!.headers.authorization!;
        expect(received).toMatch(/^Bearer /);
        expect(received).not.toContain(userToken);
        const claims = decodeJwt(received.slice(7));
        expect(claims).toMatchObject({ aud: 'badges', sub: 'alice', scope: 'catalog:read', iss: 'switchyard', act: { sub: 'switchyard-router' } });
        expect(claims.exp! - claims.iat!).toBeLessThanOrEqual(300); // the default lifetime (decision 004)
        // The same token is useless at another subgraph.
        const stolen = await fetch(stack.subgraphs.reviews.running.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: received },
          body: JSON.stringify({ query: '{ review(id: "r-1") { id } }' }),
        });
        expect(stolen.status).toBe(401);
      } finally {
        await removeSubgraph(stack.db, 'badges', compositionCheck);
        await fixture.close();
      }
    });

    it('refuses every kind of bad token with 401 UNAUTHENTICATED and calls no subgraph', async () => {
      const publicJwk = idp.publicJwk((await idp.addKey()) as string);
      const hsWithPublicKey = await new SignJWT({ iss: idp.issuer, aud: AUDIENCE, sub: 'mallory', exp: now() + 300 })
        .setProtectedHeader({ alg: 'HS256' })
        .sign(new TextEncoder().encode(JSON.stringify(publicJwk)));
      const unknownKid = await idp.addKey({ publish: false });
      const cases: [string, string | undefined][] = [
        ['no token', undefined],
        ['expired', await token({ exp: now() - 3600 })],
        ['not yet valid', await token({ nbf: now() + 3600 })],
        ['wrong issuer', await token({ iss: 'https://evil.example' })],
        ['wrong audience', await token({ aud: 'another-api' })],
        ['alg none', new UnsecuredJWT({ iss: idp.issuer, aud: AUDIENCE, sub: 'mallory', exp: now() + 300 }).encode()],
        ['HS256 signed with the public key', hsWithPublicKey],
        ['unknown kid', await token({}, { kid: unknownKid })],
        ['malformed', 'not.a.jwt'],
        ['oversized', `${await token()}${'A'.repeat(9000)}`],
      ];
      const before = callsSoFar();
      for (const [label, value] of cases) {
        const { status, headers, body } = await stack.query(PAGE, { headers: value === undefined ? {} : { authorization: `Bearer ${value}` } });
        expect({ label, status, code: body.errors?.[0].extensions?.code }).toEqual({ label, status: 401, code: 'UNAUTHENTICATED' });
        expect(headers.get('www-authenticate')).toMatch(/^Bearer/);
      }
      expect(callsSoFar()).toBe(before);
    });

    it('answers 503, never 500 and never a pass, when the identity provider cannot be reached', async () => {
      idp.mode = 'error';
      // A router that has never fetched the keys: it cannot check any token.
      const second = await stack.startRouter();
      try {
        const before = callsSoFar();
        const { status, body } = await postGraphQL(second.url, PAGE, { headers: { authorization: `Bearer ${await token()}` } });
        expect(status).toBe(503);
        expect(body.errors?.[0].extensions?.code).toBe('AUTH_UNAVAILABLE');
        expect(callsSoFar()).toBe(before);
      } finally {
        idp.mode = 'ok';
        await second.close();
      }
    });
  });

  describe('permissions from the database, live', () => {
    it('protects a field once granted to a scope, and opens it again when revoked', async () => {
      const reader = { authorization: `Bearer ${await token({ scope: 'reviews:read' })}` };
      const other = { authorization: `Bearer ${await token({ sub: 'bob', scope: 'catalog:read' })}` };
      await grantPermission(stack.db, 'scope:reviews:read', 'Product.reviews');
      try {
        await eventually(() => stack.router.permissions.principalsFor('Product.reviews') !== undefined, { what: 'the rule to reach the router' });
        const denied = await stack.query(PAGE, { headers: other });
        expect(denied.status).toBe(200);
        expect(denied.body.data.product).toMatchObject({ name: expect.any(String), reviews: null, inventory: { inStock: expect.any(Number) } });
        expect(denied.body.errors).toEqual([expect.objectContaining({ path: ['product', 'reviews'], extensions: expect.objectContaining({ code: 'FORBIDDEN' }) })]);
        expect(denied.body.extensions?.completeness.missing).toEqual([{ path: ['product', 'reviews'], code: 'FORBIDDEN' }]);
        const allowed = await stack.query(PAGE, { headers: reader });
        expect(allowed.body.errors).toBeUndefined();
        expect(Array.isArray(allowed.body.data.product.reviews)).toBe(true);
      } finally {
        await revokePermission(stack.db, 'scope:reviews:read', 'Product.reviews');
      }
      await eventually(() => stack.router.permissions.principalsFor('Product.reviews') === undefined, { what: 'the revocation to reach the router' });
      expect((await stack.query(PAGE, { headers: other })).body.errors).toBeUndefined();
    });

    it('refuses a request whose every root field is denied with 403, and the operation rule too', async () => {
      const bob = { authorization: `Bearer ${await token({ sub: 'bob' })}` };
      await grantPermission(stack.db, 'sub:alice', 'Query.products');
      await grantPermission(stack.db, 'role:admin', 'operation:AdminReport');
      try {
        await eventually(() => stack.router.permissions.principalsFor('operation:AdminReport') !== undefined, { what: 'the rules' });
        const before = callsSoFar();
        const refused = await stack.query('{ products(first: 2) { id } }', { headers: bob });
        expect(refused.status).toBe(403);
        expect(refused.body.errors?.[0].extensions?.code).toBe('FORBIDDEN');
        const report = await stack.query('query AdminReport { product(id: "1") { id } }', { headers: bob });
        expect(report.status).toBe(403);
        expect(callsSoFar()).toBe(before);
        const admin = await stack.query('query AdminReport { product(id: "1") { id } }', { headers: { authorization: `Bearer ${await token({ sub: 'carol', roles: ['admin'] })}` } });
        expect(admin.status).toBe(200);
      } finally {
        await revokePermission(stack.db, 'sub:alice', 'Query.products');
        await revokePermission(stack.db, 'role:admin', 'operation:AdminReport');
      }
    });
  });

  describe('denied fields never reach a subgraph', () => {
    const callsTo = (name: 'product' | 'reviews' | 'inventory') => stack.subgraphs[name].subgraph.stats.snapshot().graphqlRequests;

    it('a product page without Product.reviews: the reviews subgraph is not called, the rest of the page is complete', async () => {
      const other = { authorization: `Bearer ${await token({ sub: 'bob', scope: 'catalog:read' })}` };
      await grantPermission(stack.db, 'scope:reviews:read', 'Product.reviews');
      try {
        await eventually(() => stack.router.permissions.principalsFor('Product.reviews') !== undefined, { what: 'the rule to reach the router' });
        const before = { product: callsTo('product'), reviews: callsTo('reviews'), inventory: callsTo('inventory') };
        const engines = () => Promise.all(['plan', 'stitching'].map((path) => readMetric(stack.router, 'switchyard_executions_total', { path })));
        const enginesBefore = await engines();
        const page = await stack.query(PAGE, { headers: other });
        expect(page.status).toBe(200);
        expect(page.body.data).toEqual({ product: { name: expect.any(String), reviews: null, inventory: { inStock: expect.any(Number) } } });
        expect(page.body.errors).toEqual([expect.objectContaining({ path: ['product', 'reviews'], extensions: expect.objectContaining({ code: 'FORBIDDEN' }) })]);
        expect(page.body.extensions?.completeness.missing).toEqual([{ path: ['product', 'reviews'], code: 'FORBIDDEN' }]);
        expect(callsTo('reviews')).toBe(before.reviews);
        expect(callsTo('product')).toBeGreaterThan(before.product);
        expect(callsTo('inventory')).toBeGreaterThan(before.inventory);
        // The decision is planned: the page ran from its plan, not by stitching.
        expect(await engines()).toEqual([enginesBefore[0] + 1, enginesBefore[1]]);

        // A page of products: FORBIDDEN at every index, as before, and still no call.
        const list = await stack.query('{ products(first: 3) { id name reviews { rating } } }', { headers: other });
        expect(list.body.data.products).toHaveLength(3);
        expect(list.body.errors?.map((e) => [e.path, e.extensions?.code])).toEqual([0, 1, 2].map((i) => [['products', i, 'reviews'], 'FORBIDDEN']));
        expect(callsTo('reviews')).toBe(before.reviews);

        // A caller granted the field still gets it from the subgraph.
        const reader = await stack.query(PAGE, { headers: { authorization: `Bearer ${await token({ scope: 'reviews:read' })}` } });
        expect(Array.isArray(reader.body.data.product.reviews)).toBe(true);
        expect(callsTo('reviews')).toBeGreaterThan(before.reviews);
      } finally {
        await revokePermission(stack.db, 'scope:reviews:read', 'Product.reviews');
      }
      await eventually(() => stack.router.permissions.principalsFor('Product.reviews') === undefined, { what: 'the revocation to reach the router' });
    });

    it('fragments, aliases, a variable used only there, an emptied selection: the subgraph receives none of the denied part', async () => {
      const fixture = await startFixtureSubgraph({
        sdl: 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"]) type Product @key(fields: "id") { id: ID! badge: String! note(lang: String): String }',
        resolvers: { Product: { __resolveReference: (ref: { id: string }) => ({ id: ref.id, badge: 'new' }), note: (_: unknown, { lang }: { lang?: string }) => `note (${lang ?? 'en'})` } },
      });
      const bob = { authorization: `Bearer ${await token({ sub: 'bob' })}` };
      try {
        const swapped = stack.nextSwap();
        await publishSubgraph(stack.db, { name: 'badges', url: fixture.url, sdl: fixture.sdl }, compositionCheck);
        await swapped;
        await grantPermission(stack.db, 'role:editor', 'Product.note');
        await eventually(() => stack.router.permissions.principalsFor('Product.note') !== undefined, { what: 'the rule to reach the router' });
        const query = /* GraphQL */ `
          query Badged($lang: String) { product(id: "1") { name badge ...Notes ... on Product { again: note(lang: $lang) } } }
          fragment Notes on Product { n: note(lang: $lang) }`;
        const seen = fixture.requests.length;
        const { status, body } = await stack.query(query, { headers: bob, variables: { lang: 'fr' } });
        expect(status).toBe(200);
        expect(body.data).toEqual({ product: { name: expect.any(String), badge: 'new', n: null, again: null } });
        expect(body.errors?.map((e) => [e.path, e.extensions?.code]).sort()).toEqual([[['product', 'again'], 'FORBIDDEN'], [['product', 'n'], 'FORBIDDEN']]);
        const sent = fixture.requests.slice(seen);
        expect(sent).toHaveLength(1);
        expect(sent[0].query).toMatch(/\bbadge\b/);
        expect(sent[0].query).not.toMatch(/\bnote\b|\$lang/);
        expect(sent[0].variables ?? {}).not.toHaveProperty('lang');

        // Nothing left for the subgraph: it is not called at all; __typename is unaffected.
        const emptied = await stack.query('{ product(id: "1") { __typename note } }', { headers: bob });
        expect(emptied.body.data).toEqual({ product: { __typename: 'Product', note: null } });
        expect(emptied.body.errors?.map((e) => e.extensions?.code)).toEqual(['FORBIDDEN']);
        expect(fixture.requests.length).toBe(seen + 1);

        // An editor reads the note, fetched with its variable.
        const editor = await stack.query(query, { headers: { authorization: `Bearer ${await token({ sub: 'ed', roles: ['editor'] })}` }, variables: { lang: 'fr' } });
        expect(editor.body.errors).toBeUndefined();
        expect(editor.body.data.product).toMatchObject({ n: 'note (fr)', again: 'note (fr)' });
        expect(fixture.requests.at(-1)!.query).toMatch(/\bnote\b/);
      } finally {
        await revokePermission(stack.db, 'role:editor', 'Product.note');
        const swapped = stack.nextSwap();
        await removeSubgraph(stack.db, 'badges', compositionCheck);
        await swapped;
        await fixture.close();
      }
    });
  });

  describe('audit log', () => {
    it('has one row per request, refused ones included, written off the request path', async () => {
      const since = new Date();
      const good = await token({ sub: 'dana', client_id: 'mobile-app' });
      await stack.query('query AuditedPage { product(id: "3") { name } }', { headers: { authorization: `Bearer ${good}`, 'x-request-id': 'audit-test-1' } });
      await stack.query('query AuditedPage { product(id: "3") { name } }', { headers: { authorization: 'Bearer nope' } });
      await eventually(async () => (await queryAudit(stack.db, { since })).length === 2, { what: 'two audit rows' });
      const [refused, served] = await queryAudit(stack.db, { since });
      expect(served).toMatchObject({ requestId: 'audit-test-1', subject: 'dana', client: 'mobile-app', operationName: 'AuditedPage', status: 200, complete: true, subgraphs: ['product'] });
      expect(served.operationHash).toMatch(/^[0-9a-f]{64}$/);
      expect(refused).toMatchObject({ status: 401, subject: null, complete: false });
    });

    it.runIf(TEST_DATABASE_URL)('loses no row when the database drops the router\'s connections in the middle of a run', async () => {
      const url = new URL(stack.store.databaseUrl!);
      url.searchParams.set('application_name', 'switchyard-audit-outage');
      const router = await stack.startRouter({ databaseUrl: url.toString() });
      const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await admin.connect();
      try {
        const since = new Date();
        const auth = { authorization: `Bearer ${await token({ sub: 'gina' })}` };
        let terminated = 0;
        const answers = [];
        for (let i = 0; i < 60; i++) {
          // Every eighth request, the database drops the router's connections (counted by requests, not by a timer).
          if (i % 8 === 4) terminated += (await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'switchyard-audit-outage'`)).rowCount ?? 0;
          answers.push(await postGraphQL(router.url, 'query OutageProbe { product(id: "1") { name } }', { headers: auth }));
        }
        expect(answers.every((a) => a.status === 200)).toBe(true);
        expect(terminated).toBeGreaterThan(0);
        await eventually(async () => (await queryAudit(stack.db, { since, operation: 'OutageProbe', limit: 1000 })).length === 60, { what: '60 audit rows', timeoutMs: 30_000 });
      } finally {
        await admin.end();
        await router.close();
      }
    });
  });
});

describe(`per-subgraph tokens from an RFC 8693 token endpoint (${databaseKind} database)`, () => {
  let endpoint: TestTokenEndpoint;
  let stack: Stack;
  beforeAll(async () => {
    endpoint = await startTestTokenEndpoint({ expiresInSeconds: 300 });
    stack = await startStack({ config: { tokenExchangeUrl: endpoint.url, tokenExchangeClientId: 'switchyard' }, requireTokens: false });
  });
  afterAll(async () => {
    await stack?.close();
    await endpoint?.close();
  });

  it('exchanges the user token once per subgraph and reuses it for many requests', async () => {
    const ring = stack.router.keyRing;
    const { mintDevToken } = await import('../../src/security/authentication/dev-token.js');
    const user = await mintDevToken(ring, { sub: 'erin', scopes: ['reviews:read'] });
    for (let i = 0; i < 10; i++) {
      const { body } = await stack.query(PAGE, { headers: { authorization: `Bearer ${user}` } });
      expect(body.errors).toBeUndefined();
    }
    // One exchange per audience (product, reviews, inventory), not per request.
    expect(endpoint.calls).toBe(3);
    expect(new Set(endpoint.requests.map((r) => r.form.audience))).toEqual(new Set(['product', 'reviews', 'inventory']));
    expect(endpoint.requests.every((r) => r.form.grant_type === 'urn:ietf:params:oauth:grant-type:token-exchange' && r.form.subject_token === user)).toBe(true);
  });

  it('fails only the sections of a subgraph whose token cannot be had', async () => {
    const { mintDevToken } = await import('../../src/security/authentication/dev-token.js');
    const user = await mintDevToken(stack.router.keyRing, { sub: 'frank' });
    endpoint.mode = 'invalid_target';
    try {
      const { status, body } = await stack.query(PAGE, { headers: { authorization: `Bearer ${user}` } });
      expect(status).toBe(200);
      expect(body.data).toEqual({ product: null });
      expect(body.errors?.[0].extensions).toMatchObject({ code: 'TOKEN_EXCHANGE_FAILED', subgraph: 'product' });
    } finally {
      endpoint.mode = 'ok';
    }
  });
});
