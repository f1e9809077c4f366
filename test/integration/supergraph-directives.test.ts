// A supergraph composed elsewhere that renames the security directives through @link: the router enforces them under their new names, over HTTP.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeSupergraph } from '../../src/gateway/compose.js';
import { startRouter, type RunningRouter } from '../../src/cli/start-router.js';
import { createTestStore, databaseKind, type TestStore } from '../helpers/database.js';
import { startFixtureSubgraph, type RunningFixture } from '../helpers/fixture-subgraph.js';
import { postGraphQL } from '../helpers/http.js';
import { startTestIdentityProvider, type TestIdentityProvider } from '../helpers/identity-provider.js';
import { assertProjectionsAgreed, testConfig } from '../helpers/stack.js';

const AUDIENCE = 'switchyard-api';
const ACCOUNTS_SDL = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key", "@authenticated", "@requiresScopes"])
  type Query {
    greeting: String!
    secret: String @authenticated
    vault: String @requiresScopes(scopes: [["vault:read"]])
  }
`;
const RESOLVERS = { Query: { greeting: () => 'hello', secret: () => 'the secret', vault: () => 'the vault' } };

/**
 * The composed supergraph as another federation tool may spell it: `@authenticated` imported as
 * `@mustBeLoggedIn`, and the requiresScopes spec linked under the namespace `scopes` (`@scopes`).
 */
function renamedSupergraph(url: string): string {
  const outcome = composeSupergraph([{ name: 'accounts', url, sdl: ACCOUNTS_SDL }]);
  if (!outcome.ok) throw new Error(outcome.errors.map((e) => e.message).join('\n'));
  const sdl = outcome.supergraphSdl
    .replaceAll('@authenticated', '@mustBeLoggedIn')
    .replace(
      '@link(url: "https://specs.apollo.dev/authenticated/v0.1", for: SECURITY)',
      '@link(url: "https://specs.apollo.dev/authenticated/v0.1", import: [{ name: "@authenticated", as: "@mustBeLoggedIn" }], for: SECURITY)',
    )
    .replace('@link(url: "https://specs.apollo.dev/requiresScopes/v0.1", for: SECURITY)', '@link(url: "https://specs.apollo.dev/requiresScopes/v0.1", as: "scopes", for: SECURITY)')
    .replaceAll('@requiresScopes', '@scopes')
    .replaceAll('requiresScopes__Scope', 'scopes__Scope');
  // The renames must have taken, or the test below would pass on names the router always knew.
  const renamed = [/secret: String @mustBeLoggedIn/, /directive @mustBeLoggedIn /, /as: "@mustBeLoggedIn"/, /vault: String @scopes\(/, /directive @scopes\(/, /as: "scopes"/].every((pattern) => pattern.test(sdl));
  if (!renamed || /directive @authenticated|@requiresScopes/.test(sdl)) {
    throw new Error(`the composed supergraph no longer looks as this test expects:\n${outcome.supergraphSdl}`);
  }
  return sdl;
}

describe(`security directives renamed by the supergraph's @link (${databaseKind} database)`, () => {
  let dir: string;
  let store: TestStore;
  let idp: TestIdentityProvider;
  let accounts: RunningFixture;
  let router: RunningRouter;
  const now = () => Math.floor(Date.now() / 1000);
  const token = (scope?: string) => idp.sign({ iss: idp.issuer, aud: AUDIENCE, sub: 'alice', exp: now() + 300, iat: now(), ...(scope ? { scope } : {}) });

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'switchyard-renames-'));
    store = await createTestStore();
    idp = await startTestIdentityProvider();
    await idp.addKey();
    accounts = await startFixtureSubgraph({ sdl: ACCOUNTS_SDL, resolvers: RESOLVERS });
    const file = path.join(dir, 'supergraph.graphql');
    await writeFile(file, renamedSupergraph(accounts.url));
    router = await startRouter({ config: testConfig(store, { supergraphFile: file, authMode: 'optional', jwksUrl: idp.jwksUrl, jwtIssuer: idp.issuer, jwtAudience: AUDIENCE }) });
  });
  afterAll(async () => {
    const agreed = router ? assertProjectionsAgreed([router]) : Promise.resolve();
    await agreed.catch(() => {});
    await router?.close();
    await accounts?.close();
    await idp?.close();
    await store?.destroy();
    if (dir) await rm(dir, { recursive: true, force: true });
    await agreed;
  });

  it('answers an anonymous caller null and FORBIDDEN for a field under the renamed @authenticated, and the rest of the page', async () => {
    const before = accounts.requests.length;
    const { status, body } = await postGraphQL(router.url, '{ greeting secret }');
    expect(status).toBe(200);
    expect(body.data).toEqual({ greeting: 'hello', secret: null });
    expect(body.errors).toEqual([expect.objectContaining({ path: ['secret'], extensions: expect.objectContaining({ code: 'FORBIDDEN' }) })]);
    // The denied field never reached the subgraph.
    expect(accounts.requests.slice(before).map((r) => r.query).join('\n')).not.toMatch(/secret/);
  });

  it('refuses an anonymous request for that field alone with 401 UNAUTHENTICATED', async () => {
    const { status, body } = await postGraphQL(router.url, '{ secret }');
    expect(status).toBe(401);
    expect(body.data ?? null).toBeNull();
    expect(body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('lets a signed-in caller read it, and holds the renamed @requiresScopes until the token carries the scope', async () => {
    const signedIn = await postGraphQL(router.url, '{ secret vault }', { headers: { authorization: `Bearer ${await token()}` } });
    expect(signedIn.body.data).toEqual({ secret: 'the secret', vault: null });
    expect(signedIn.body.errors).toEqual([expect.objectContaining({ path: ['vault'], extensions: expect.objectContaining({ code: 'FORBIDDEN' }) })]);

    const withScope = await postGraphQL(router.url, '{ secret vault }', { headers: { authorization: `Bearer ${await token('vault:read')}` } });
    expect(withScope.body).toEqual({ data: { secret: 'the secret', vault: 'the vault' } });
  });
});
