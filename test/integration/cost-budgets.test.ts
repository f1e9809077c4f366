// Per-subgraph cost budgets over HTTP: a budget skips a subgraph only for the share of the cost its plan fetches really ask of it.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { compositionCheck } from '../../src/cli/registry-commands.js';
import type { RunningRouter } from '../../src/cli/start-router.js';
import { publishSubgraph } from '../../src/registry/subgraph-store.js';
import { databaseKind } from '../helpers/database.js';
import { startFederationStack, type FederationStack } from '../helpers/federation-stack.js';
import { postGraphQL } from '../helpers/http.js';
import type { FederationFixture } from '../fixtures/federation/index.js';

const users = [
  { id: 'u1', name: 'Ada', karma: 7, rank: 1 },
  { id: 'u2', name: 'Grace', karma: 9, rank: 2 },
];
const reviews = [
  { id: 'rv1', body: 'Sturdy.', authorId: 'u1' },
  { id: 'rv2', body: 'Too heavy.', authorId: 'u2' },
];

// Reviews returns its authors' names itself (@provides); accounts owns users, each field with a cost.
const cbReviews: FederationFixture = {
  name: 'cb-reviews',
  sdl: /* GraphQL */ `
    extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key", "@external", "@provides"])
    type Query { cbReviews: [CbReview!]! }
    type CbReview {
      id: ID!
      body: String
      author: CbUser @provides(fields: "name")
    }
    type CbUser @key(fields: "id") { id: ID! name: String @external }
  `,
  resolvers: {
    Query: { cbReviews: () => reviews },
    CbReview: { author: (review: { authorId: string }) => users.find((u) => u.id === review.authorId) },
  },
};

const cbAccounts: FederationFixture = {
  name: 'cb-accounts',
  sdl: /* GraphQL */ `
    extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key", "@cost"])
    type Query { cbUser(id: ID!): CbUser }
    type CbUser @key(fields: "id") {
      id: ID!
      name: String @cost(weight: 5)
      karma: Int @cost(weight: 1)
      rank: Int @cost(weight: 5)
    }
  `,
  resolvers: {
    Query: { cbUser: (_: unknown, { id }: { id: string }) => users.find((u) => u.id === id) },
    CbUser: { __resolveReference: (ref: { id: string }) => users.find((u) => u.id === ref.id) },
  },
};

describe(`Per-subgraph cost budgets follow the query plan (${databaseKind} database)`, () => {
  let stack: FederationStack;
  let router: RunningRouter;

  beforeAll(async () => {
    stack = await startFederationStack({ fixtures: [cbAccounts, cbReviews] });
    // Accounts may spend 30 per request. With the default list size (10 reviews), its real share of
    // `author { name karma }` is 10 × karma 1 = 10; by owner, name (10 × 5) counted too: 60.
    await publishSubgraph(stack.db, { name: cbAccounts.name, url: stack.fixtures.get(cbAccounts.name)!.url, sdl: cbAccounts.sdl, route: { costBudget: 30 } }, compositionCheck);
    router = await stack.startRouter();
  });

  afterAll(async () => {
    await stack?.close();
  });

  beforeEach(() => {
    for (const fixture of stack.fixtures.values()) fixture.requests.length = 0;
  });

  it('answers a section whose subgraph serves only its own share, though another subgraph provides costly fields on the way', async () => {
    const { status, body } = await postGraphQL(router.url, '{ cbReviews { body author { name karma } } }');
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({
      cbReviews: [
        { body: 'Sturdy.', author: { name: 'Ada', karma: 7 } },
        { body: 'Too heavy.', author: { name: 'Grace', karma: 9 } },
      ],
    });
    // The names came from reviews (provided); accounts was asked for karma alone.
    const calls = stack.fixtures.get(cbAccounts.name)!.requests;
    expect(calls).toHaveLength(1);
    expect(calls[0].query).not.toMatch(/\bname\b/);
  });

  it('answers provided fields alone from the providing subgraph, never calling their owner', async () => {
    const { status, body } = await postGraphQL(router.url, '{ cbReviews { author { name } } }');
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    expect(body.data.cbReviews.map((r: { author: { name: string } }) => r.author.name)).toEqual(['Ada', 'Grace']);
    expect(stack.fixtures.get(cbAccounts.name)!.requests).toHaveLength(0);
  });

  it('still skips a subgraph whose fetches the plan makes when its share is over budget', async () => {
    // rank: 10 × 5 = 50 > 30, fetched from accounts.
    const { status, body } = await postGraphQL(router.url, '{ cbReviews { body author { name rank } } }');
    expect(status).toBe(200);
    expect(body.data.cbReviews).toEqual([
      { body: 'Sturdy.', author: { name: 'Ada', rank: null } },
      { body: 'Too heavy.', author: { name: 'Grace', rank: null } },
    ]);
    expect(body.errors?.[0].extensions).toMatchObject({ code: 'SUBGRAPH_COST_EXCEEDED', subgraph: cbAccounts.name });
    expect(stack.fixtures.get(cbAccounts.name)!.requests).toHaveLength(0);
  });
});
