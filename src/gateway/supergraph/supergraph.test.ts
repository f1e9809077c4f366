// The served graph's supergraph: one parse, one @link name resolver, and every reader (authorization, cost, cache hints, join facts) following its renames.
import { describe, expect, it } from 'vitest';
import { composeSupergraph } from '../compose.js';
import { Supergraph } from './supergraph.js';

/** A hand-written supergraph (as another federation tool may compose one) with `links` on its schema and `body` below. */
function supergraph(links: string, body: string): Supergraph {
  return Supergraph.fromSdl(/* GraphQL */ `
    schema
      @link(url: "https://specs.apollo.dev/link/v1.0")
      @link(url: "https://specs.apollo.dev/join/v0.5", for: EXECUTION)
      ${links} {
      query: Query
    }
    enum join__Graph {
      A @join__graph(name: "accounts", url: "http://a")
    }
    ${body}
  `);
}

describe('authorization requirements under @link renames', () => {
  it('enforces @authenticated imported under another name, and not a look-alike of the old name', () => {
    const graph = supergraph(
      '@link(url: "https://specs.apollo.dev/authenticated/v0.1", import: [{ name: "@authenticated", as: "@mustBeLoggedIn" }], for: SECURITY)',
      /* GraphQL */ `
        directive @mustBeLoggedIn on FIELD_DEFINITION | OBJECT | INTERFACE | SCALAR | ENUM
        directive @authenticated on FIELD_DEFINITION
        type Query @join__type(graph: A) {
          secret: String @mustBeLoggedIn
          lookAlike: String @authenticated
          open: String
        }
        type Account @join__type(graph: A) @mustBeLoggedIn { id: ID! }
        enum Tier @join__type(graph: A) @mustBeLoggedIn { FREE PAID }
      `,
    );
    expect(graph.requirements.get('Query.secret')).toEqual({ authenticated: true });
    expect(graph.requirements.get('Account')).toEqual({ authenticated: true });
    // On an enum too: a field returning it needs a signed-in caller (the decision checks the return type).
    expect(graph.requirements.get('Tier')).toEqual({ authenticated: true });
    // Under this supergraph's links, `@authenticated` is some other directive: the spec's is `@mustBeLoggedIn`.
    expect(graph.requirements.has('Query.lookAlike')).toBe(false);
    expect(graph.requirements.has('Query.open')).toBe(false);
  });

  it('enforces @requiresScopes under a renamed namespace (`as:`) and through the federation link\'s import', () => {
    const namespaced = supergraph(
      '@link(url: "https://specs.apollo.dev/requiresScopes/v0.1", as: "scopes", for: SECURITY)',
      /* GraphQL */ `
        scalar scopes__Scope
        directive @scopes(scopes: [[scopes__Scope!]!]!) on FIELD_DEFINITION | OBJECT
        type Query @join__type(graph: A) { vault: String @scopes(scopes: [["vault:read"], ["admin", "audit"]]) }
      `,
    );
    expect(namespaced.requirements.get('Query.vault')).toEqual({ authenticated: true, scopes: [['vault:read'], ['admin', 'audit']] });

    const viaFederation = supergraph(
      '@link(url: "https://specs.apollo.dev/federation/v2.9", import: [{ name: "@requiresScopes", as: "@needs" }, { name: "@authenticated", as: "@signedIn" }])',
      /* GraphQL */ `
        directive @needs(scopes: [[String!]!]!) on FIELD_DEFINITION
        directive @signedIn on FIELD_DEFINITION
        type Query @join__type(graph: A) { vault: String @needs(scopes: [["vault:read"]]) me: String @signedIn }
      `,
    );
    expect(viaFederation.requirements.get('Query.vault')).toEqual({ authenticated: true, scopes: [['vault:read']] });
    expect(viaFederation.requirements.get('Query.me')).toEqual({ authenticated: true });
  });

  it('reads a composed supergraph, whose links import nothing: the spec directives keep their own names', () => {
    const outcome = composeSupergraph([
      {
        name: 'accounts',
        url: 'http://accounts/graphql',
        sdl: /* GraphQL */ `
          extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key", "@authenticated", "@requiresScopes"])
          type Query { me: String @authenticated vault: String @requiresScopes(scopes: [["vault:read"]]) open: String }
        `,
      },
    ]);
    if (!outcome.ok) throw new Error(outcome.errors.map((e) => e.message).join('\n'));
    const graph = Supergraph.fromSdl(outcome.supergraphSdl);
    expect(graph.requirements.get('Query.me')).toEqual({ authenticated: true });
    expect(graph.requirements.get('Query.vault')).toEqual({ authenticated: true, scopes: [['vault:read']] });
    expect(graph.requirements.has('Query.open')).toBe(false);
  });
});

describe('one @link resolver for every reader', () => {
  const renamed = supergraph(
    [
      '@link(url: "https://specs.apollo.dev/cost/v0.1", import: [{ name: "@cost", as: "@weight" }, { name: "@listSize", as: "@size" }])',
      '@link(url: "https://switchyard.dev/cache/v1.0", import: [{ name: "@cacheControl", as: "@hint" }])',
      '@link(url: "https://specs.apollo.dev/authenticated/v0.1", import: [{ name: "@authenticated", as: "@signedIn" }], for: SECURITY)',
    ].join('\n'),
    /* GraphQL */ `
      directive @weight(weight: Int!) on FIELD_DEFINITION | OBJECT
      directive @size(assumedSize: Int, slicingArguments: [String!]) on FIELD_DEFINITION
      directive @hint(maxAge: Int, scope: CacheControlScope) on FIELD_DEFINITION | OBJECT
      directive @signedIn on FIELD_DEFINITION
      enum CacheControlScope { PUBLIC PRIVATE }
      type Query @join__type(graph: A) {
        items(first: Int): [Item] @weight(weight: 4) @size(slicingArguments: ["first"]) @hint(maxAge: 30, scope: PUBLIC)
        me: String @signedIn @hint(maxAge: 5, scope: PRIVATE)
      }
      type Item @join__type(graph: A) @weight(weight: 2) @hint(maxAge: 60) { id: ID! }
    `,
  );

  it('resolves each spec directive to the name this supergraph gives it', () => {
    expect(renamed.names).toMatchObject({ cost: 'weight', listSize: 'size', cacheControl: 'hint', authenticated: 'signedIn', requiresScopes: 'requiresScopes', joinField: 'join__field' });
  });

  it('reads @cost and @listSize through the renames: weights, slicing arguments and owners', () => {
    expect(renamed.cost.weights.get('Query.items')).toBe(4);
    expect(renamed.cost.weights.get('Item')).toBe(2);
    expect(renamed.cost.listSizes.get('Query.items')?.slicingArguments).toEqual(['first']);
    expect(renamed.cost.owners.get('Query.items')).toEqual(['accounts']);
    expect(renamed.cost.subgraphs).toEqual(['accounts']);
  });

  it('reads @cacheControl through the rename: max age and scope per coordinate', () => {
    expect(renamed.cacheHints.get('Query.items')).toEqual({ maxAgeSeconds: 30, scope: 'public', inheritMaxAge: undefined });
    expect(renamed.cacheHints.get('Query.me')).toMatchObject({ maxAgeSeconds: 5, scope: 'private' });
    expect(renamed.cacheHints.get('Item')).toMatchObject({ maxAgeSeconds: 60 });
  });

  it('falls back to the plain names when the supergraph links none of the specs', () => {
    const plain = Supergraph.fromSdl('type Query { a: [Int] @cost(weight: 2) @listSize(assumedSize: 3) @cacheControl(maxAge: 9) b: String @authenticated }');
    expect(plain.cost.weights.get('Query.a')).toBe(2);
    expect(plain.cost.listSizes.get('Query.a')?.assumedSize).toBe(3);
    expect(plain.cacheHints.get('Query.a')?.maxAgeSeconds).toBe(9);
    expect(plain.requirements.get('Query.b')).toEqual({ authenticated: true });
  });
});
