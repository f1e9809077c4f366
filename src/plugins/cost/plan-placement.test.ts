// Per-subgraph cost from the plan's fetches: a field is charged to the subgraph the plan fetches it from.
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { composeSupergraph } from '../../gateway/compose.js';
import { buildGatewaySchema } from '../../gateway/gateway-schema.js';
import { createPlanningExecutor } from '../../gateway/execute/planning-executor.js';
import { Supergraph } from '../../gateway/supergraph/supergraph.js';
import { estimateCost } from './estimate-cost.js';
import { PlanPlacement } from './plan-placement.js';

// "reviews" returns its authors' names itself (@provides); "accounts" owns users and their karma.
const REVIEWS = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key", "@external", "@provides", "@listSize"])
  type Query { reviews: [Review!]! @listSize(assumedSize: 4) }
  type Review {
    id: ID!
    author: User @provides(fields: "name")
    editor: User
  }
  type User @key(fields: "id") { id: ID! name: String @external }
`;

const ACCOUNTS = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key", "@cost"])
  type Query { user(id: ID!): User }
  type User @key(fields: "id") {
    id: ID!
    name: String @cost(weight: 5)
    karma: Int @cost(weight: 2)
  }
`;

function graph() {
  const outcome = composeSupergraph([
    { name: 'reviews', url: 'http://reviews/graphql', sdl: REVIEWS },
    { name: 'accounts', url: 'http://accounts/graphql', sdl: ACCOUNTS },
  ]);
  if (!outcome.ok) throw new Error(outcome.errors.map((e) => e.message).join('\n'));
  const { schema } = buildGatewaySchema(outcome.supergraphSdl, { executorFor: () => () => ({ data: null }) });
  const planner = createPlanningExecutor({ supergraph: parse(outcome.supergraphSdl), apiSchema: schema, executors: new Map() });
  const metadata = Supergraph.fromSdl(outcome.supergraphSdl).cost;
  return {
    estimate(text: string, denied?: ReadonlySet<string>) {
      const document = parse(text);
      const plan = planner.planFor(document, undefined, denied);
      if (!plan) throw new Error(planner.whyUnplanned(document, undefined));
      return {
        planned: estimateCost(schema, metadata, document, { placement: new PlanPlacement(plan) }),
        byOwners: estimateCost(schema, metadata, document),
        subgraphsCalled: [...new Set(plan.fetches.map((f) => f.subgraph))],
      };
    },
  };
}

const shop = graph();

describe('estimateCost with a query plan: each field charged to the subgraph whose fetch selects it', () => {
  it('charges a field served through @provides to the providing subgraph, not to its owner', () => {
    const { planned, byOwners, subgraphsCalled } = shop.estimate('{ reviews { id author { name } } }');
    expect(subgraphsCalled).toEqual(['reviews']);
    // reviews 4 × (Review 1 + author 1 + name 5) = 28, all fetched from reviews.
    expect(planned).toEqual({ total: 28, bySubgraph: { reviews: 28 }, notes: [] });
    // The owner rule charged name to accounts, which the plan never calls.
    expect(byOwners.bySubgraph).toEqual({ reviews: 8, accounts: 20 });
    expect(planned.total).toBe(byOwners.total);
  });

  it('charges fields an entity look-up fetches to the subgraph it looks them up in', () => {
    // editor is not provided: name comes from accounts by an _entities call; karma always does.
    const { planned, subgraphsCalled } = shop.estimate('{ reviews { author { name karma } editor { name } } }');
    expect(subgraphsCalled.sort()).toEqual(['accounts', 'reviews']);
    // reviews: 4 × (Review 1 + author 1 + name 5 + editor 1) = 32; accounts: 4 × (karma 2 + editor's name 5) = 28.
    expect(planned).toEqual({ total: 60, bySubgraph: { accounts: 28, reviews: 32 }, notes: [] });
  });

  it('charges a field the authorization decision denies to no subgraph: no fetch selects it', () => {
    const { planned } = shop.estimate('{ reviews { author { karma } } }', new Set(['User.karma']));
    // karma still counts in the total (4 × 2), but accounts is never called for it.
    expect(planned).toEqual({ total: 16, bySubgraph: { reviews: 8 }, notes: [] });
  });
});
