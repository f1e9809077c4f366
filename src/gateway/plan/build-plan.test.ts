import { readFileSync } from 'node:fs';
import { buildASTSchema, parse, print, type DocumentNode, type ExecutionResult } from 'graphql';
import type { ExecutionRequest, Executor } from '@graphql-tools/utils';
import { describe, expect, it } from 'vitest';
import { composeSupergraph } from '../compose.js';
import { buildGatewaySchema } from '../gateway-schema.js';
import { Supergraph } from '../supergraph/supergraph.js';
import { buildPlan, type QueryPlan } from './build-plan.js';
import { createPlanningExecutor } from '../execute/planning-executor.js';
import { PlanUnsatisfiable, PlanUnsupported } from './supergraph-model.js';

const WORKLOAD = new URL('../../../bench/workloads/federation-benchmark/', import.meta.url);

function workloadPlanner(executors = new Map<string, Executor>()) {
  const names = ['accounts', 'inventory', 'products', 'reviews'];
  const outcome = composeSupergraph(names.map((name) => ({ name, url: `http://${name}.test/graphql`, sdl: readFileSync(new URL(`subgraphs/${name}.graphql`, WORKLOAD), 'utf8') })));
  if (!outcome.ok) throw new Error(JSON.stringify(outcome.errors));
  const { schema } = buildGatewaySchema(outcome.supergraphSdl, { executorFor: () => () => ({ data: null }) });
  return createPlanningExecutor({ supergraph: parse(outcome.supergraphSdl), apiSchema: schema, executors });
}

/** A fetch described by its subgraph and the positions of its steps (`path:Type`, or `root`). */
function describeFetches(text: string) {
  const planner = workloadPlanner();
  const plan = planner.planFor(parse(text), undefined);
  if (!plan) throw new Error(planner.whyUnplanned(parse(text), undefined));
  return plan.fetches.map((f) => ({
    id: f.id,
    subgraph: f.subgraph,
    steps: f.steps.map((s) => (s.entityType ? `${s.path.join('.')}:${s.entityType}` : 'root')),
    dependsOn: f.dependsOn.map((d) => d.id),
    document: print(f.document),
  }));
}

describe('query plans', () => {
  it('keeps fields in their parent subgraph and moves the others to entity look-ups by key', () => {
    const fetches = describeFetches('{ topProducts { upc name reviews { body } } }');
    expect(fetches.map(({ document: _, ...f }) => f)).toEqual([
      { id: 0, subgraph: 'products', steps: ['root'], dependsOn: [] },
      { id: 1, subgraph: 'reviews', steps: ['topProducts:Product'], dependsOn: [0] },
    ]);
    // The key and the type name ride along in the parent fetch for the representations.
    expect(fetches[0].document).toMatch(/topProducts \{\s+upc\s+name\s+__typename\s+\}/);
    expect(fetches[1].document).toContain('_entities(representations: $representations)');
  });

  it('fetches @requires fields first, from the subgraph that owns them, and waits for them', () => {
    const fetches = describeFetches('{ users { reviews { product { shippingEstimate } } } }');
    const products = fetches.find((f) => f.subgraph === 'products')!;
    const inventory = fetches.find((f) => f.subgraph === 'inventory')!;
    expect(products.document).toMatch(/price\s+weight/);
    expect(inventory.dependsOn).toContain(products.id);
    expect(inventory.steps).toEqual(['users.reviews.product:Product']);
  });

  it('reads a field the parent field @provides from the same subgraph', () => {
    const fetches = describeFetches('{ topProducts { reviews { author { username } } } }');
    expect(fetches.map((f) => f.subgraph)).toEqual(['products', 'reviews']);
    expect(fetches[1].document).toMatch(/author \{\s+username/);
  });

  it('sends the look-ups of one subgraph that become ready together in one request', () => {
    const fetches = describeFetches('{ users { reviews { product { name reviews { author { reviews { product { name } } } } } } } }');
    const products = fetches.filter((f) => f.subgraph === 'products');
    expect(products).toHaveLength(1);
    expect(products[0].steps).toHaveLength(2);
    expect(products[0].document).toContain('_0: _entities(representations: $_0_representations)');
    expect(products[0].document).toContain('_1: _entities(representations: $_1_representations)');
  });

  it('declares in each subgraph document only the client variables it uses', () => {
    const fetches = describeFetches('query Q($id: ID!, $first: Int) { user(id: $id) { name } topProducts(first: $first) { name } }');
    expect(fetches.find((f) => f.subgraph === 'accounts')!.document).toMatch(/^query \(\$id: ID!\)/);
    expect(fetches.find((f) => f.subgraph === 'products')!.document).toMatch(/^query \(\$first: Int\)/);
  });

  it('plans @defer as the same fetches as the query without it, and never sends @defer or @stream to a subgraph', () => {
    const deferred = describeFetches('{ topProducts { upc ... @defer(label: "more") { name reviews { body } } } }');
    const plain = describeFetches('{ topProducts { upc ... { name reviews { body } } } }');
    expect(deferred).toEqual(plain);
    expect(deferred.map((f) => f.document).join('\n')).not.toMatch(/@defer|@stream/);
    const streamed = describeFetches('{ topProducts(first: 2) @stream(initialCount: 1) { name } }');
    expect(streamed.map((f) => f.document).join('\n')).not.toMatch(/@stream/);
  });

  it.each([['a subscription in a graph without a Subscription type', 'subscription { __typename }', /no subscription type/]])('leaves %s to stitching, saying why', (_, text, reason) => {
    const planner = workloadPlanner();
    expect(planner.planFor(parse(text), undefined)).toBeUndefined();
    expect(planner.whyUnplanned(parse(text), undefined)).toMatch(reason);
  });

  it('answers introspection from the API schema, with no subgraph call for it', () => {
    expect(describeFetches('{ __schema { queryType { name } } __type(name: "Product") { name } }')).toEqual([]);
    expect(describeFetches('{ __typename topProducts { name } }').map((f) => f.subgraph)).toEqual(['products']);
  });

  it('sends a field under its own @skip/@include and its fragments\', with the variables they read', () => {
    const fetches = describeFetches('query Q($x: Boolean!, $y: Boolean!) { topProducts { name @include(if: $x) ... on Product @skip(if: $y) { price } } }');
    expect(fetches[0].document).toMatch(/^query \(\$x: Boolean!, \$y: Boolean!\)/);
    expect(fetches[0].document).toContain('name @include(if: $x)');
    expect(fetches[0].document).toContain('price @skip(if: $y)');
  });

  it('sends a field under nested fragments\' conditions, an @include each, and its @requires fields under the same', () => {
    const fetches = describeFetches('query ($a: Boolean!, $b: Boolean!) { topProducts { upc ... @include(if: $a) { ... @include(if: $b) { shippingEstimate } } } }');
    const [products, inventory] = [fetches.find((f) => f.subgraph === 'products')!, fetches.find((f) => f.subgraph === 'inventory')!];
    // Only one @include may stand on a node (GraphQL spec 5.7.3): the outer one on a fragment around the field.
    expect(inventory.document).toMatch(/\.\.\. @include\(if: \$a\) \{\s+shippingEstimate @include\(if: \$b\)\s+\}/);
    expect(products.document).toMatch(/\.\.\. @include\(if: \$a\) \{\s+price @include\(if: \$b\)\s+weight @include\(if: \$b\)\s+\}/);
    // The key the client asks for without a condition stays without one.
    expect(products.document).toMatch(/\n\s+upc\n/);
  });

  it('sends the key of a look-up only for the fields that want it, and a field asked under two conditions under either', () => {
    const skipped = describeFetches('query ($brief: Boolean!) { topProducts { name ...Stock @skip(if: $brief) } } fragment Stock on Product { inStock }');
    expect(skipped[0].document).toContain('upc @skip(if: $brief)');
    expect(skipped[1].document).toContain('inStock @skip(if: $brief)');
    // Copies of one field merge in the subgraph: it resolves it when either condition passes; the third asks nothing more.
    const either = describeFetches('query ($a: Boolean!, $b: Boolean!) { topProducts { ... @include(if: $a) { name } ... @include(if: $b) { name } name @include(if: $a) @skip(if: $b) } }');
    expect(either[0].document).toMatch(/topProducts \{\s+name @include\(if: \$a\)\s+name @include\(if: \$b\)\s+\}/);
  });

  it('plans a document once', () => {
    const planner = workloadPlanner();
    const document = parse('{ topProducts { name inStock } }');
    expect(planner.planFor(document, undefined)).toBe(planner.planFor(document, undefined));
  });
});

describe('running a plan', () => {
  /** Subgraphs answering from functions of the request; every request is recorded. */
  function fakeSubgraphs(answers: Record<string, (request: ExecutionRequest) => ExecutionResult>) {
    const calls: { subgraph: string; variables: Record<string, unknown> }[] = [];
    const executors = new Map<string, Executor>();
    for (const [graph, answer] of Object.entries(answers)) {
      executors.set(graph, (async (request: ExecutionRequest) => {
        calls.push({ subgraph: graph, variables: request.variables ?? {} });
        return answer(request);
      }) as Executor);
    }
    return { executors, calls };
  }

  const products = (request: ExecutionRequest): ExecutionResult =>
    print(request.document).includes('topProducts')
      ? { data: { topProducts: [{ upc: '1', name: 'A', __typename: 'Product' }, { upc: '2', name: 'B', __typename: 'Product' }, { upc: '1', name: 'A', __typename: 'Product' }] } }
      : { data: null };

  it('merges entity answers into every object that stands for the entity, asking once per entity', async () => {
    const { executors, calls } = fakeSubgraphs({
      PRODUCTS: products,
      INVENTORY: (request) => ({ data: { _entities: (request.variables!.representations as { upc: string }[]).map((r) => ({ inStock: r.upc === '1' })) } }),
    });
    const planner = workloadPlanner(executors);
    const document = parse('{ topProducts { name inStock } }');
    const result = (await planner.execute(planner.planFor(document, undefined)!, { schema: undefined as never, document, contextValue: {} })) as ExecutionResult;
    expect(result).toEqual({ data: { topProducts: [{ name: 'A', inStock: true }, { name: 'B', inStock: false }, { name: 'A', inStock: true }] } });
    expect(calls[1].variables.representations).toEqual([
      { __typename: 'Product', upc: '1' },
      { __typename: 'Product', upc: '2' },
    ]);
  });

  it('puts an entity error on the fields of that entity, at their client paths', async () => {
    const { executors } = fakeSubgraphs({
      PRODUCTS: products,
      INVENTORY: () => ({
        data: { _entities: [null, { inStock: false }] },
        errors: [{ message: 'stock unknown', path: ['_entities', 0], extensions: { code: 'SUBGRAPH_ERROR', subgraph: 'inventory' } }] as never,
      }),
    });
    const planner = workloadPlanner(executors);
    const document = parse('{ topProducts { name inStock } }');
    const result = (await planner.execute(planner.planFor(document, undefined)!, { schema: undefined as never, document, contextValue: {} })) as ExecutionResult;
    expect(result.data).toEqual({ topProducts: [{ name: 'A', inStock: null }, { name: 'B', inStock: false }, { name: 'A', inStock: null }] });
    expect(result.errors?.map((e) => [e.path, e.message, e.extensions.subgraph])).toEqual([
      [['topProducts', 0, 'inStock'], 'stock unknown', 'inventory'],
      [['topProducts', 2, 'inStock'], 'stock unknown', 'inventory'],
    ]);
  });
});

describe('subscription plans', () => {
  const fed = (imports: string) => `extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: [${imports}])`;
  /** `@trace` may stand on queries and subscriptions, `@events` on subscriptions only (5). */
  const DIRECTIVES = 'directive @trace(id: String!) on QUERY | SUBSCRIPTION directive @events(buffer: Int) on SUBSCRIPTION';
  /** Reviews are announced by `reviews`, anything by `notifications`; the rest of what an event holds comes from the other subgraphs. */
  const SUBGRAPHS = [
    {
      name: 'reviews',
      sdl: /* GraphQL */ `
        ${fed('"@key"')} ${DIRECTIVES}
        type Query { review(id: ID!): Review }
        type Subscription { reviewAdded(minRating: Int): Review! }
        type Review @key(fields: "id") { id: ID! body: String! rating: Int! product: Product! recommended: [Product!]! author: User! }
        type Product @key(fields: "upc", resolvable: false) { upc: ID! }
        type User @key(fields: "id", resolvable: false) { id: ID! }
      `,
    },
    {
      name: 'products',
      sdl: /* GraphQL */ `
        ${fed('"@key"')} ${DIRECTIVES}
        type Query { product(upc: ID!): Product }
        type Product @key(fields: "upc") { upc: ID! name: String! price: Int! weight: Int! }
      `,
    },
    {
      name: 'accounts',
      sdl: /* GraphQL */ `
        ${fed('"@key"')} ${DIRECTIVES}
        type Query { me: User }
        type User @key(fields: "id") { id: ID! name: String! }
      `,
    },
    {
      name: 'inventory',
      sdl: /* GraphQL */ `
        ${fed('"@key", "@external", "@requires"')} ${DIRECTIVES}
        type Product @key(fields: "upc") { upc: ID! price: Int! @external weight: Int! @external shippingEstimate: Int! @requires(fields: "price weight") inStock: Boolean! }
      `,
    },
    {
      name: 'notifications',
      sdl: /* GraphQL */ `
        ${fed('"@key"')} ${DIRECTIVES}
        type Subscription { event: Event! }
        union Event = Review | Product
        type Review @key(fields: "id", resolvable: false) { id: ID! }
        type Product @key(fields: "upc", resolvable: false) { upc: ID! }
      `,
    },
  ];

  function supergraphOf(subgraphs: { name: string; sdl: string }[], edit: (sdl: string) => string = (sdl) => sdl): DocumentNode {
    const outcome = composeSupergraph(subgraphs.map((s) => ({ ...s, url: `http://${s.name}.test/graphql` })));
    if (!outcome.ok) throw new Error(outcome.errors.map((e) => e.message).join('\n'));
    return parse(edit(outcome.supergraphSdl));
  }

  const catalogue = supergraphOf(SUBGRAPHS);

  function planOf(text: string, supergraph: DocumentNode = catalogue, denied?: ReadonlySet<string>): QueryPlan {
    const schema = buildASTSchema(supergraph, { assumeValid: true, assumeValidSDL: true });
    return buildPlan(Supergraph.fromDocument(supergraph).join, schema, parse(text), undefined, new Set(), denied);
  }

  /** Each fetch: its subgraph, operation type, steps (`path:Type`, or `root`), the fetches it waits for, and its document. */
  function fetchesOf(plan: QueryPlan) {
    return plan.fetches.map((f) => ({
      subgraph: f.subgraph,
      operation: f.operation,
      steps: f.steps.map((s) => (s.entityType ? `${s.path.join('.')}:${s.entityType}` : 'root')),
      dependsOn: f.dependsOn.map((d) => d.id),
      document: print(f.document),
    }));
  }

  it('sends the root field to its subgraph as a subscription and completes the event entity from two others, a request per subgraph', () => {
    const plan = planOf('subscription { reviewAdded { id body product { name } recommended { name } author { name } } }');
    expect(plan.subscription).toBe(plan.fetches[0]);
    expect(fetchesOf(plan)).toEqual([
      {
        subgraph: 'reviews',
        operation: 'subscription',
        steps: ['root'],
        dependsOn: [],
        document: 'subscription {\n  reviewAdded {\n    id\n    body\n    product {\n      __typename\n      upc\n    }\n    recommended {\n      __typename\n      upc\n    }\n    author {\n      __typename\n      id\n    }\n  }\n}',
      },
      {
        subgraph: 'products',
        operation: 'query',
        // Two positions of one subgraph, ready with the same event: one request (6).
        steps: ['reviewAdded.product:Product', 'reviewAdded.recommended:Product'],
        dependsOn: [0],
        document:
          'query ($_0_representations: [_Any!]!, $_1_representations: [_Any!]!) {\n  _0: _entities(representations: $_0_representations) {\n    ... on Product {\n      name\n    }\n  }\n  _1: _entities(representations: $_1_representations) {\n    ... on Product {\n      name\n    }\n  }\n}',
      },
      {
        subgraph: 'accounts',
        operation: 'query',
        steps: ['reviewAdded.author:User'],
        dependsOn: [0],
        document: 'query ($representations: [_Any!]!) {\n  _entities(representations: $representations) {\n    ... on User {\n      name\n    }\n  }\n}',
      },
    ]);
  });

  it('fetches the fields an event field @requires from their subgraph first, after the event', () => {
    const plan = planOf('subscription { reviewAdded { product { shippingEstimate } } }');
    expect(fetchesOf(plan)).toEqual([
      {
        subgraph: 'reviews',
        operation: 'subscription',
        steps: ['root'],
        dependsOn: [],
        document: 'subscription {\n  reviewAdded {\n    product {\n      __typename\n      upc\n    }\n  }\n}',
      },
      {
        subgraph: 'products',
        operation: 'query',
        steps: ['reviewAdded.product:Product'],
        dependsOn: [0],
        document: 'query ($representations: [_Any!]!) {\n  _entities(representations: $representations) {\n    ... on Product {\n      price\n      weight\n    }\n  }\n}',
      },
      {
        subgraph: 'inventory',
        operation: 'query',
        steps: ['reviewAdded.product:Product'],
        dependsOn: [0, 1],
        document: 'query ($representations: [_Any!]!) {\n  _entities(representations: $representations) {\n    ... on Product {\n      shippingEstimate\n    }\n  }\n}',
      },
    ]);
    expect(plan.fetches[2].steps[0].representation.has('price')).toBe(true);
  });

  it('completes each member of an abstract event type from the subgraph that owns it', () => {
    const plan = planOf('subscription { event { __typename ... on Review { body } ... on Product { name inStock } } }');
    expect(plan.subscription).toBe(plan.fetches[0]);
    expect(fetchesOf(plan)).toEqual([
      {
        subgraph: 'notifications',
        operation: 'subscription',
        steps: ['root'],
        dependsOn: [],
        document: 'subscription {\n  event {\n    __typename\n    ... on Review {\n      __typename\n      id\n    }\n    ... on Product {\n      __typename\n      upc\n    }\n  }\n}',
      },
      {
        subgraph: 'reviews',
        operation: 'query',
        steps: ['event:Review'],
        dependsOn: [0],
        document: 'query ($representations: [_Any!]!) {\n  _entities(representations: $representations) {\n    ... on Review {\n      body\n    }\n  }\n}',
      },
      {
        subgraph: 'products',
        operation: 'query',
        steps: ['event:Product'],
        dependsOn: [0],
        document: 'query ($representations: [_Any!]!) {\n  _entities(representations: $representations) {\n    ... on Product {\n      name\n    }\n  }\n}',
      },
      {
        subgraph: 'inventory',
        operation: 'query',
        steps: ['event:Product'],
        dependsOn: [0],
        document: 'query ($representations: [_Any!]!) {\n  _entities(representations: $representations) {\n    ... on Product {\n      inStock\n    }\n  }\n}',
      },
    ]);
  });

  it('is one fetch when the root field\'s subgraph serves the whole selection', () => {
    const plan = planOf('subscription { reviewAdded { id body rating } }');
    expect(fetchesOf(plan)).toEqual([
      { subgraph: 'reviews', operation: 'subscription', steps: ['root'], dependsOn: [], document: 'subscription {\n  reviewAdded {\n    id\n    body\n    rating\n  }\n}' },
    ]);
    expect(plan.subscription).toBe(plan.fetches[0]);
  });

  it('keeps the client\'s alias, arguments and conditions below the root, and gives each fetch the operation directives its type allows', () => {
    const plan = planOf(
      'subscription S($min: Int, $withAuthor: Boolean!, $t: String!) @trace(id: $t) @events(buffer: 2) { added: reviewAdded(minRating: $min) { body author @include(if: $withAuthor) { name } } }',
    );
    expect(fetchesOf(plan)).toEqual([
      {
        subgraph: 'reviews',
        operation: 'subscription',
        steps: ['root'],
        dependsOn: [],
        document:
          'subscription ($min: Int, $withAuthor: Boolean!, $t: String!) @trace(id: $t) @events(buffer: 2) {\n  added: reviewAdded(minRating: $min) {\n    body\n    author @include(if: $withAuthor) {\n      __typename\n      id\n    }\n  }\n}',
      },
      {
        subgraph: 'accounts',
        operation: 'query',
        steps: ['added.author:User'],
        dependsOn: [0],
        // `@events` may stand on a subscription only: the entity fetch, a query, goes without it.
        document: 'query ($representations: [_Any!]!, $t: String!) @trace(id: $t) {\n  _entities(representations: $representations) {\n    ... on User {\n      name\n    }\n  }\n}',
      },
    ]);
  });

  it.each([
    ['@skip on the root field', 'subscription ($x: Boolean!) { reviewAdded @skip(if: $x) { id } }', /may not be under @skip or @include/],
    ['@include on a fragment around it', 'subscription ($x: Boolean!) { ... @include(if: $x) { reviewAdded { id } } }', /may not be under @skip or @include/],
    ['a literal condition', 'subscription { reviewAdded @include(if: true) { id } }', /may not be under @skip or @include/],
    ['two root fields', 'subscription { reviewAdded { id } event { __typename } }', /exactly one root field, not 2/],
    ['__typename at the root', 'subscription { __typename }', /meta field __typename/],
  ])('leaves a subscription with %s to stitching, which the GraphQL spec refuses (5.2.3.1, draft 5.2.4.1)', (_, text, reason) => {
    expect(() => planOf(text)).toThrow(PlanUnsupported);
    expect(() => planOf(text)).toThrow(reason);
    expect(() => planOf(text)).not.toThrow(PlanUnsatisfiable);
  });

  it('fetches nothing when the caller may not read the root field', () => {
    const plan = planOf('subscription { reviewAdded { id author { name } } }', catalogue, new Set(['Subscription.reviewAdded']));
    expect(plan.fetches).toEqual([]);
    expect(plan.subscription).toBeUndefined();
    expect(plan.denied.map((d) => d.coordinate)).toEqual(['Subscription.reviewAdded']);
  });

  it('never fetches the root field again from another subgraph: what only that would reach is unsatisfiable', () => {
    // Composition refuses this: a subscription field two subgraphs resolve (INVALID_FIELD_SHARING),
    // and an operation no plan satisfies (its satisfiability check, which knows a subscription's
    // root field is not fetched again either). A supergraph written or composed elsewhere may
    // still have it, so one composed whole is edited: `Subscription.stats` in both subgraphs,
    // each resolving half of Stats, which has no key.
    const halves = supergraphOf(
      [
        { name: 'a', sdl: `${fed('"@shareable"')} type Query { stats: Stats @shareable } type Subscription { stats: Stats! } type Stats @shareable { count: Int! a: Int! b: Int! }` },
        { name: 'b', sdl: `${fed('"@shareable"')} type Query { stats: Stats @shareable } type Subscription { tick: Int! } type Stats @shareable { count: Int! a: Int! b: Int! }` },
      ],
      (sdl) =>
        sdl
          .replace('stats: Stats! @join__field(graph: A)', 'stats: Stats! @join__field(graph: A) @join__field(graph: B)')
          .replace(/^ {2}a: Int!$/m, '  a: Int! @join__field(graph: A)')
          .replace(/^ {2}b: Int!$/m, '  b: Int! @join__field(graph: B)'),
    );
    // A query reaches `b` by fetching its shared root field again from b (12).
    expect(fetchesOf(planOf('{ stats { a b } }', halves)).map((f) => [f.subgraph, f.steps, f.dependsOn])).toEqual([
      ['a', ['root'], []],
      ['b', ['root'], []],
    ]);
    // Either subgraph alone serves a subscription with half of the selection.
    expect(fetchesOf(planOf('subscription { stats { count b } }', halves)).map((f) => [f.subgraph, f.operation])).toEqual([['b', 'subscription']]);
    // Both halves: the event comes from one of them, and no look-up reaches the other half.
    expect(() => planOf('subscription { stats { a b } }', halves)).toThrow(PlanUnsatisfiable);
    expect(() => planOf('subscription { stats { a b } }', halves)).toThrow(
      'no way from A to Stats.b (only fetching the root field again from B would reach it, and a mutation\'s or subscription\'s root field is fetched once)',
    );
  });
});
