// Shrinking: the smallest valid query that still shows the difference, with unused fragments and variables gone.
import { buildSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { shrinkQuery } from './shrink-query.js';

const schema = buildSchema(/* GraphQL */ `
  type Query { user(id: ID!): User, users(first: Int): [User!]! }
  type User { id: ID! name: String friends: [User!]! }
`);

describe('shrinkQuery', () => {
  it('keeps only what the difference needs, unwrapping fragments and dropping unused variables', async () => {
    const start = {
      query: 'query Q($a: Boolean!, $id: ID!) { users(first: 2) { id ...F } x: user(id: $id) { name @include(if: $a) } } fragment F on User { ... on User { friends { id name } } name }',
      variables: { a: true, id: '1' },
    };
    // The "bug": any query that selects User.friends.name.
    const shrunk = await shrinkQuery(schema, start, async ({ query }) => /friends\s*\{[^}]*name/.test(query));
    expect(shrunk.query.replace(/\s+/g, ' ').trim()).toBe('query Q { users { friends { name } } }');
    expect(shrunk.variables).toEqual({});
  });
});
