// Federation v2 cases the planner must answer exactly right, run in process against small subgraphs and compared with hand-written data.
import { print, type GraphQLResolveInfo } from 'graphql';
import { describe, expect, it } from 'vitest';
import { inProcessGraph } from '../../../test/helpers/in-process-graph.js';

const fed = (imports: string) => `extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: [${imports}])`;

describe('query plans: Federation v2 cases', () => {
  it('aliases a shareable field whose nullability differs in the subgraph, so the subgraph document stays valid', async () => {
    const media = [
      { __typename: 'Book', id: 'b1', title: 'Dune' },
      { __typename: 'Movie', id: 'm1', title: null },
    ];
    const graph = inProcessGraph([
      {
        name: 'a',
        sdl: /* GraphQL */ `
          ${fed('"@key", "@shareable"')}
          type Query { media: [Media!]! }
          interface Media { id: ID! }
          type Book implements Media @key(fields: "id") { id: ID! title: String! @shareable }
          type Movie implements Media @key(fields: "id") { id: ID! title: String }
        `,
        resolvers: { Query: { media: () => media }, Media: { __resolveType: (m: { __typename: string }) => m.__typename } },
      },
      {
        name: 'b',
        sdl: /* GraphQL */ `
          ${fed('"@key", "@shareable"')}
          type Query { book: Book }
          type Book @key(fields: "id") { id: ID! title: String @shareable }
        `,
        resolvers: { Query: { book: () => ({ id: 'b1', title: 'Dune' }) } },
      },
    ]);
    const result = await graph.run('{ media { id ... on Book { title } ... on Movie { title } } }');
    expect(result).toEqual({ data: { media: [{ id: 'b1', title: 'Dune' }, { id: 'm1', title: null }] } });
    expect(graph.calls.get('a')![0]).toMatch(/title__String_nn: title/);
  });

  it('spreads only the possible types a subgraph has at an abstract position', async () => {
    const graph = inProcessGraph([
      {
        name: 'a',
        sdl: /* GraphQL */ `
          ${fed('"@key"')}
          type Query { shelf: [Item!]! }
          union Item = Book | Movie
          type Book @key(fields: "id") { id: ID! title: String! }
          type Movie @key(fields: "id") { id: ID! minutes: Int! }
        `,
        resolvers: {
          Query: { shelf: () => [{ __typename: 'Book', id: 'b1', title: 'Dune' }, { __typename: 'Movie', id: 'm1', minutes: 155 }] },
          Item: { __resolveType: (i: { __typename: string }) => i.__typename },
          Book: { __resolveReference: (ref: { id: string }) => ({ id: ref.id, title: 'Dune' }) },
        },
      },
      {
        name: 'b',
        sdl: /* GraphQL */ `
          ${fed('"@key"')}
          type Query { playlist: [Item!]! }
          union Item = Book | Song
          type Book @key(fields: "id") { id: ID! }
          type Song @key(fields: "id") { id: ID! artist: String! }
        `,
        resolvers: { Query: { playlist: () => [{ __typename: 'Song', id: 's1', artist: 'Nina' }, { __typename: 'Book', id: 'b1' }] }, Item: { __resolveType: (i: { __typename: string }) => i.__typename } },
      },
    ]);
    const result = await graph.run('{ playlist { __typename ... on Book { id title } ... on Movie { minutes } ... on Song { artist } } }');
    expect(result).toEqual({ data: { playlist: [{ __typename: 'Song', artist: 'Nina' }, { __typename: 'Book', id: 'b1', title: 'Dune' }] } });
    expect(graph.calls.get('b')![0]).not.toContain('Movie');
  });

  it('breaks a @requires cycle between two subgraphs with a second look-up in the first', async () => {
    const products = [{ id: 'p1', price: 100, weight: 3 }];
    const graph = inProcessGraph([
      {
        name: 'a',
        sdl: /* GraphQL */ `
          ${fed('"@key", "@external", "@requires"')}
          type Query { products: [Product!]! }
          type Product @key(fields: "id") { id: ID! price: Int! weight: Int! @external shipping: Int! @requires(fields: "weight") }
        `,
        resolvers: {
          Query: { products: () => products.map(({ id, price }) => ({ id, price })) },
          Product: {
            __resolveReference: (ref: { id: string; weight?: number }) => ({ ...products.find((p) => p.id === ref.id), ...ref }),
            shipping: (p: { weight: number }) => p.weight * 10,
          },
        },
      },
      {
        name: 'b',
        sdl: /* GraphQL */ `
          ${fed('"@key", "@external", "@requires"')}
          type Product @key(fields: "id") { id: ID! weight: Int! price: Int! @external tax: Int! @requires(fields: "price") }
        `,
        resolvers: {
          Product: {
            __resolveReference: (ref: { id: string; price?: number }) => ({ ...ref, weight: products.find((p) => p.id === ref.id)!.weight }),
            tax: (p: { price: number }) => p.price / 10,
          },
        },
      },
    ]);
    expect(await graph.run('{ products { id shipping tax } }')).toEqual({ data: { products: [{ id: 'p1', shipping: 30, tax: 10 }] } });
    // a (root, price) → b (weight, tax from price) → a (shipping from weight): three calls, none invalid.
    expect([graph.calls.get('a')!.length, graph.calls.get('b')!.length]).toEqual([2, 1]);
  });

  it('hops through the subgraph that knows both keys to reach one that knows only the other', async () => {
    const users = [{ id: 'u1', email: 'ada@example.com', name: 'Ada', plan: 'pro' }];
    const graph = inProcessGraph([
      {
        name: 'a',
        sdl: `${fed('"@key"')} type Query { me: User } type User @key(fields: "id") { id: ID! name: String! }`,
        resolvers: { Query: { me: () => ({ id: 'u1', name: 'Ada' }) } },
      },
      {
        name: 'b',
        sdl: `${fed('"@key"')} type User @key(fields: "id") @key(fields: "email") { id: ID! email: String! }`,
        resolvers: { User: { __resolveReference: (ref: { id?: string; email?: string }) => users.find((u) => u.id === ref.id || u.email === ref.email) } },
      },
      {
        name: 'c',
        sdl: `${fed('"@key"')} type User @key(fields: "email") { email: String! plan: String! }`,
        resolvers: { User: { __resolveReference: (ref: { email: string }) => users.find((u) => u.email === ref.email) } },
      },
    ]);
    expect(await graph.run('{ me { name plan } }')).toEqual({ data: { me: { name: 'Ada', plan: 'pro' } } });
    expect(graph.calls.get('c')).toHaveLength(1);
    // The client puts another field under the key's name: the plan reads the key from a private key.
    graph.reset();
    expect(await graph.run('{ me { id: name email: plan } }')).toEqual({ data: { me: { id: 'Ada', email: 'pro' } } });
    expect(graph.calls.get('a')![0]).toMatch(/__sy_id: id/);
  });

  it('makes a hop for a look-up\'s key whenever the look-up is made, a field the plan put in it after the key included', async () => {
    const people = [
      { id: 'u1', email: 'ada@example.com', tickets: 0, karma: 7 },
      { id: 'u2', email: 'alan@example.com', tickets: 5, karma: 2 },
    ];
    const find = (ref: { id?: string; email?: string }) => people.find((p) => p.id === ref.id || p.email === ref.email);
    const graph = inProcessGraph([
      {
        name: 'a',
        sdl: `${fed('"@key"')} type Query { users: [User!]! } type User @key(fields: "email") { email: String! }`,
        resolvers: { Query: { users: () => people.map(({ email }) => ({ email })) } },
      },
      { name: 'b', sdl: `${fed('"@key"')} type User @key(fields: "email") @key(fields: "id") { id: ID! email: String! }`, resolvers: { User: { __resolveReference: find } } },
      { name: 'c', sdl: `${fed('"@key"')} type User @key(fields: "id") { id: ID! tickets: Int! karma: Int! }`, resolvers: { User: { __resolveReference: find } } },
    ]);
    // The look-up of c and its hop through b (for the id) are planned for tickets; karma joins that look-up afterwards.
    const query = 'query ($brief: Boolean!) { users { tickets @skip(if: $brief) karma } }';
    expect(await graph.run(query, { brief: true })).toEqual({ data: { users: [{ karma: 7 }, { karma: 2 }] } });
    expect([...graph.calls].map(([name, calls]) => [name, calls.length])).toEqual([['a', 1], ['b', 1], ['c', 1]]);
    graph.reset();
    expect(await graph.run(query, { brief: false })).toEqual({ data: { users: [{ tickets: 0, karma: 7 }, { tickets: 5, karma: 2 }] } });
  });

  it('sends a field left out by its fragment\'s @include to no look-up, and makes none of those that feed only it', async () => {
    const parcels = [{ id: 'x2', weightGrams: 400, size: { widthCm: 20, heightCm: 15 } }];
    const need = <T>(value: T | undefined, what: string): T => {
      if (value === undefined) throw new Error(`${what} is required`);
      return value;
    };
    const size = 'type Size @shareable { widthCm: Int! heightCm: Int! }';
    const graph = inProcessGraph([
      {
        name: 'dispatch',
        sdl: `${fed('"@key", "@shareable"')} type Query { parcel(id: ID!): Parcel } type Parcel @key(fields: "id") { id: ID! weightGrams: Int! }`,
        resolvers: { Query: { parcel: (_: unknown, { id }: { id: string }) => parcels.find((p) => p.id === id) } },
      },
      {
        name: 'sizes',
        sdl: `${fed('"@key", "@shareable"')} type Parcel @key(fields: "id") { id: ID! size: Size! } ${size}`,
        resolvers: { Parcel: { __resolveReference: (ref: { id: string }) => parcels.find((p) => p.id === ref.id) } },
      },
      {
        name: 'postage',
        sdl: `${fed('"@key", "@shareable", "@external", "@requires"')}
          type Parcel @key(fields: "id") {
            id: ID!
            weightGrams: Int! @external
            size: Size! @external
            postageCents: Int! @requires(fields: "weightGrams")
            boxLabel: String! @requires(fields: "size { widthCm heightCm }")
          }
          ${size}`,
        resolvers: {
          Parcel: {
            postageCents: (p: { weightGrams?: number }) => 300 + 100 * Math.ceil(need(p.weightGrams, 'weightGrams') / 1000),
            boxLabel: (p: { size?: { widthCm: number; heightCm: number } }) => `${need(p.size, 'size').widthCm}x${need(p.size, 'size').heightCm}`,
          },
        },
      },
    ]);
    const query = 'query ($box: Boolean!) { parcel(id: "x2") { id postageCents ... @include(if: $box) { boxLabel } } }';
    expect(await graph.run(query, { box: false })).toEqual({ data: { parcel: { id: 'x2', postageCents: 400 } } });
    expect(graph.calls.get('sizes')).toEqual([]);
    expect(graph.calls.get('postage')![0]).toContain('boxLabel @include(if: $box)');
    graph.reset();
    expect(await graph.run(query, { box: true })).toEqual({ data: { parcel: { id: 'x2', postageCents: 400, boxLabel: '20x15' } } });
    // The required size is asked under the same condition, once: not again on the fields inside it.
    expect(graph.calls.get('sizes')![0]).toMatch(/size @include\(if: \$box\) \{\s+widthCm\s+heightCm\s+\}/);
  });

  it('fetches a field required with two different arguments under two keys, and passes each under its name in one request', async () => {
    const graph = inProcessGraph([
      {
        name: 'a',
        sdl: `${fed('"@key"')} type Query { rooms: [Room!]! } type Room @key(fields: "id") { id: ID! rate(nights: Int!): Int! size: Size! } type Size { m2(rounded: Boolean!): Float! }`,
        resolvers: {
          Query: { rooms: () => [{ id: 'r1', nightly: 80, area: 20.5 }] },
          Room: { rate: (r: { nightly: number }, { nights }: { nights: number }) => r.nightly * nights, size: (r: { area: number }) => ({ area: r.area }) },
          Size: { m2: (s: { area: number }, { rounded }: { rounded: boolean }) => (rounded ? Math.round(s.area) : s.area) },
        },
      },
      {
        name: 'b',
        sdl: `${fed('"@key", "@external", "@requires"')}
          type Room @key(fields: "id") {
            id: ID!
            rate(nights: Int!): Int! @external
            size: Size! @external
            weekend: String! @requires(fields: "rate(nights: 2)")
            week: String! @requires(fields: "rate(nights: 7) size { m2(rounded: true) }")
          }
          type Size @external { m2(rounded: Boolean!): Float! }`,
        resolvers: {
          Room: {
            __resolveReference: (ref: Record<string, unknown>) => ref,
            weekend: (r: { rate: number }) => `weekend ${r.rate}`,
            week: (r: { rate: number; size: { m2: number } }) => `week ${r.rate} for ${r.size.m2} m2`,
          },
        },
      },
    ]);
    const result = await graph.run('{ rooms { rate: id weekend week size { m2(rounded: false) } } }');
    expect(result).toEqual({ data: { rooms: [{ rate: 'r1', weekend: 'weekend 160', week: 'week 560 for 21 m2', size: { m2: 20.5 } }] } });
    // Both look-ups go in one request; the client's own `rate` and `m2` keep their keys.
    expect(graph.calls.get('b')).toHaveLength(1);
    expect(graph.calls.get('b')![0]).toMatch(/_0: _entities[\s\S]*_1: _entities/);
    expect(graph.calls.get('a')![0]).toMatch(/__sy_rate: rate\(nights: 2\)[\s\S]*__sy_rate_2: rate\(nights: 7\)|__sy_rate: rate\(nights: 7\)[\s\S]*__sy_rate_2: rate\(nights: 2\)/);
    expect(graph.calls.get('a')![0]).toMatch(/__sy_m2: m2\(rounded: true\)/);
  });

  it('does not look up an entity whose key is null', async () => {
    const graph = inProcessGraph([
      {
        name: 'a',
        sdl: `${fed('"@key"')} type Query { things: [Thing!]! } type Thing @key(fields: "id") { id: ID name: String! }`,
        resolvers: { Query: { things: () => [{ id: 't1', name: 'one' }, { id: null, name: 'orphan' }] } },
      },
      {
        name: 'b',
        sdl: `${fed('"@key"')} type Thing @key(fields: "id") { id: ID extra: String }`,
        resolvers: { Thing: { __resolveReference: (ref: { id: string }) => ({ id: ref.id, extra: `extra of ${ref.id}` }) } },
      },
    ]);
    expect(await graph.run('{ things { name extra } }')).toEqual({ data: { things: [{ name: 'one', extra: 'extra of t1' }, { name: 'orphan', extra: null }] } });
    expect(graph.calls.get('b')).toHaveLength(1);
    expect(graph.calls.get('b')![0]).toContain('_entities');
  });

  it('plans progressive overrides per request: percent(100) always moves the field, percent(0) never does', async () => {
    const graph = inProcessGraph([
      {
        name: 'old',
        sdl: `${fed('"@key"')} type Query { item: Item } type Item @key(fields: "id") { id: ID! stock: Int! rating: Int! }`,
        resolvers: { Query: { item: () => ({ id: 'i1', stock: 1, rating: 1 }) }, Item: { __resolveReference: () => ({ id: 'i1', stock: 1, rating: 1 }) } },
      },
      {
        name: 'new',
        sdl: `${fed('"@key", "@override"')} type Item @key(fields: "id") { id: ID! stock: Int! @override(from: "old", label: "percent(100)") rating: Int! @override(from: "old", label: "percent(0)") }`,
        resolvers: { Item: { __resolveReference: () => ({ id: 'i1', stock: 2, rating: 2 }) } },
      },
    ]);
    for (let i = 0; i < 3; i++) expect(await graph.run('{ item { stock rating } }')).toEqual({ data: { item: { stock: 2, rating: 1 } } });
  });

  it('leaves denied fields out of every subgraph document and answers them FORBIDDEN, roots and nested fields alike', async () => {
    const graph = inProcessGraph([
      {
        name: 'a',
        sdl: `${fed('"@key"')} type Query { me: User secret: String } type User @key(fields: "id") { id: ID! name: String! salary: Int }`,
        resolvers: { Query: { me: () => ({ id: 'u1', name: 'Ada', salary: 100 }), secret: () => 'hush' } },
      },
      {
        name: 'b',
        sdl: `${fed('"@key"')} type User @key(fields: "id") { id: ID! plan: String }`,
        resolvers: { User: { __resolveReference: (ref: { id: string }) => ({ id: ref.id, plan: 'pro' }) } },
      },
    ]);
    const denied = new Set(['Query.secret', 'User.salary', 'User.plan']);
    const result = await graph.run('{ secret me { id name salary plan } }', undefined, denied);
    expect(result.data).toEqual({ secret: null, me: { id: 'u1', name: 'Ada', salary: null, plan: null } });
    expect(result.errors?.map((e) => [e.path, e.extensions?.code]).sort()).toEqual([
      [['me', 'plan'], 'FORBIDDEN'],
      [['me', 'salary'], 'FORBIDDEN'],
      [['secret'], 'FORBIDDEN'],
    ]);
    expect(graph.calls.get('a')!.join()).not.toMatch(/secret|salary/);
    expect(graph.calls.get('b')).toHaveLength(0);
    // The key a look-up needs is fetched even when the caller may not read it...
    graph.reset();
    const keyed = await graph.run('{ me { name plan } }', undefined, new Set(['User.id']));
    expect(keyed).toEqual({ data: { me: { name: 'Ada', plan: 'pro' } } });
    expect(graph.calls.get('b')).toHaveLength(1);
    // ...and still answered FORBIDDEN when asked for: a non-null field takes its parent with it (spec 6.4.4).
    const asked = await graph.run('{ me { id name } }', undefined, new Set(['User.id']));
    expect(asked.data).toEqual({ me: null });
    expect(asked.errors?.map((e) => [e.path, e.extensions?.code])).toEqual([[['me', 'id'], 'FORBIDDEN']]);
  });

  it('runs mutation fields one after another, each with its own entity look-ups', async () => {
    const log: string[] = [];
    let count = 0;
    const graph = inProcessGraph([
      {
        name: 'orders',
        sdl: `${fed('"@key"')} type Query { noop: Int } type Mutation { place(sku: String!): Order } type Order @key(fields: "id") { id: ID! sku: String! }`,
        resolvers: {
          Mutation: {
            place: (_: unknown, { sku }: { sku: string }) => {
              if (sku === 'bad') throw new Error('no such sku');
              log.push(`place ${sku}`);
              return { id: `o${++count}`, sku };
            },
          },
        },
      },
      {
        name: 'shipping',
        sdl: `${fed('"@key"')} type Order @key(fields: "id") { id: ID! eta: String! }`,
        resolvers: { Order: { __resolveReference: (ref: { id: string }) => (log.push(`eta ${ref.id}`), { id: ref.id, eta: `eta of ${ref.id}` }) } },
      },
    ]);
    const result = await graph.run('mutation { a: place(sku: "x") { id eta } bad: place(sku: "bad") { id } b: place(sku: "y") { id eta } }');
    expect(result.data).toEqual({ a: { id: 'o1', eta: 'eta of o1' }, bad: null, b: { id: 'o2', eta: 'eta of o2' } });
    expect(result.errors?.map((e) => e.path)).toEqual([['bad']]);
    expect(log).toEqual(['place x', 'eta o1', 'place y', 'eta o2']);
  });

  describe('executable directives and the plan\'s own names', () => {
    const directives = 'directive @lowercase on FIELD directive @trace(id: String!) on QUERY';
    /** A subgraph implementing @lowercase on its string fields, as a directive-aware resolver would. */
    const lowered = (value: string, info: GraphQLResolveInfo) => (info.fieldNodes.some((n) => n.directives?.some((d) => d.name.value === 'lowercase')) ? value.toLowerCase() : value);
    const traces: string[] = [];
    const traceOf = (subgraph: string, info: GraphQLResolveInfo) => traces.push(`${subgraph}:${info.operation.directives?.map((d) => print(d)).join(' ') ?? ''}`);
    const users = [{ id: 'u1', name: 'Ada', city: 'Berlin' }];
    const graph = inProcessGraph([
      {
        name: 'a',
        sdl: `${fed('"@key"')} ${directives} type Query { user(name: String!): User } type User @key(fields: "id") { id: ID! name: String! }`,
        resolvers: {
          Query: { user: (_: unknown, args: { name: string }, _c: unknown, info: GraphQLResolveInfo) => (traceOf('a', info), users.find((u) => u.name === args.name) ?? null) },
          User: { name: (u: { name: string }, _: unknown, _c: unknown, info: GraphQLResolveInfo) => lowered(u.name, info) },
        },
      },
      {
        name: 'b',
        sdl: `${fed('"@key"')} ${directives} type User @key(fields: "id") { id: ID! city: String! }`,
        resolvers: {
          User: {
            __resolveReference: (ref: { id: string }, _c: unknown, info: GraphQLResolveInfo) => (traceOf('b', info), users.find((u) => u.id === ref.id)),
            city: (u: { city: string }, _: unknown, _c: unknown, info: GraphQLResolveInfo) => lowered(u.city, info),
          },
        },
      },
    ]);

    it('sends a field its directive, and a fragment\'s directive with each of the fragment\'s fields, to the subgraph that resolves them', async () => {
      graph.reset();
      const result = await graph.run('{ user(name: "Ada") { upper: name name @lowercase ... on User @lowercase { city } } }');
      expect(result).toEqual({ data: { user: { upper: 'Ada', name: 'ada', city: 'berlin' } } });
      expect(graph.calls.get('b')![0]).toMatch(/city @lowercase/);
    });

    it('sends the operation\'s directive, with the variables it reads, to every fetch', async () => {
      graph.reset();
      traces.length = 0;
      const result = await graph.run('query Q($t: String!) @trace(id: $t) { user(name: "Ada") { name city } }', { t: 't1' });
      expect(result).toEqual({ data: { user: { name: 'Ada', city: 'Berlin' } } });
      expect(traces.sort()).toEqual(['a:@trace(id: $t)', 'b:@trace(id: $t)']);
    });

    it('plans a client variable named like the plan\'s representations variable under its own name', async () => {
      graph.reset();
      const result = await graph.run('query ($representations: String!) { user(name: $representations) { name city } }', { representations: 'Ada' });
      expect(result).toEqual({ data: { user: { name: 'Ada', city: 'Berlin' } } });
      expect(graph.calls.get('b')![0]).toMatch(/_entities\(representations: \$_representations\)/);
    });
  });

  it('reaches a value-type field from the entity above it through an abstract list, with a fragment where that subgraph has the union', async () => {
    const items = [
      { __typename: 'Post', title: 'Hello', score: 7 },
      { __typename: 'Ad', title: 'Buy', score: 0 },
      { __typename: 'Post', title: 'Again', score: 3 },
    ];
    const board = { id: 'b1', items };
    const unionSdl = /* GraphQL */ `
      type Board @key(fields: "id") { id: ID! items: [Item!]! @shareable }
      union Item = Post | Ad
    `;
    const graph = inProcessGraph([
      {
        name: 'a',
        sdl: /* GraphQL */ `
          ${fed('"@key", "@shareable"')}
          type Query { board: Board }
          ${unionSdl}
          type Post { title: String! @shareable }
          type Ad { title: String! @shareable }
        `,
        resolvers: { Query: { board: () => board }, Item: { __resolveType: (i: { __typename: string }) => i.__typename } },
      },
      {
        name: 'b',
        sdl: /* GraphQL */ `
          ${fed('"@key", "@shareable"')}
          ${unionSdl}
          type Post { title: String! @shareable score: Int! }
          type Ad { title: String! @shareable }
        `,
        resolvers: { Board: { __resolveReference: () => board }, Item: { __resolveType: (i: { __typename: string }) => i.__typename } },
      },
    ]);
    const result = await graph.run('{ board { items { __typename ... on Post { title points: score } ... on Ad { title } } } }');
    expect(result).toEqual({
      data: { board: { items: [{ __typename: 'Post', title: 'Hello', points: 7 }, { __typename: 'Ad', title: 'Buy' }, { __typename: 'Post', title: 'Again', points: 3 }] } },
    });
    expect(graph.calls.get('b')).toHaveLength(1);
    expect(graph.calls.get('b')![0]).toMatch(/items \{\s+__typename\s+\.\.\. on Post \{\s+points: score/);
  });

  it('reaches a value-type field below a mutation result by looking the entity up, never by running the mutation again (the subgraph that runs it answers the rest)', async () => {
    const log: string[] = [];
    const graph = inProcessGraph([
      {
        name: 'a',
        sdl: /* GraphQL */ `
          ${fed('"@key", "@shareable"')}
          type Query { post(id: ID!): Post }
          type Mutation { publish(id: ID!): Post @shareable }
          type Post @key(fields: "id") { id: ID! title: String! meta: Meta! @shareable }
          type Meta { lang: String! @shareable }
        `,
        resolvers: {
          Query: { post: (_: unknown, { id }: { id: string }) => ({ id, title: 'Hello', meta: { lang: 'en' } }) },
          Mutation: {
            publish: (_: unknown, { id }: { id: string }) => {
              log.push(`publish ${id}`);
              return { id, title: 'Hello', meta: { lang: 'en' } };
            },
          },
        },
      },
      {
        name: 'b',
        sdl: /* GraphQL */ `
          ${fed('"@key", "@shareable"')}
          type Mutation { publish(id: ID!): Post @shareable }
          type Post @key(fields: "id") { id: ID! meta: Meta! @shareable }
          type Meta { lang: String! @shareable words: Int! }
        `,
        resolvers: {
          Mutation: {
            publish: (_: unknown, { id }: { id: string }) => {
              log.push(`publish ${id} in b`);
              return { id, meta: { lang: 'en', words: 0 } };
            },
          },
          Post: { __resolveReference: (ref: { id: string }) => ({ id: ref.id, meta: { lang: 'en', words: 120 } }) },
        },
      },
    ]);
    const result = await graph.run('mutation { publish(id: "p1") { title meta { lang words } } }');
    expect(result).toEqual({ data: { publish: { title: 'Hello', meta: { lang: 'en', words: 120 } } } });
    expect(log).toEqual(['publish p1']);
    expect(graph.calls.get('b')![0]).toContain('_entities');
  });
});
