// Unit tests of composition: success, federation errors and unreadable SDL, reported not thrown.
import { describe, expect, it } from 'vitest';
import { composeSupergraph } from './compose.js';

const LINK = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key", "@shareable"])';

describe('composeSupergraph', () => {
  it('composes Federation v2 subgraphs into a supergraph naming each one and its URL', () => {
    const outcome = composeSupergraph([
      { name: 'b', url: 'http://b/graphql', sdl: `${LINK} type Product @key(fields: "id") { id: ID! stock: Int }` },
      { name: 'a', url: 'http://a/graphql', sdl: `${LINK} type Query { product(id: ID!): Product } type Product @key(fields: "id") { id: ID! name: String }` },
    ]);
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(outcome.supergraphSdl).toMatch(/join__graph\(name: "a", url: "http:\/\/a\/graphql"\)/);
    expect(outcome.supergraphSdl).toMatch(/stock: Int/);
  });

  it('is deterministic whatever the order of the subgraphs', () => {
    const a = { name: 'a', url: 'http://a', sdl: `${LINK} type Query { x: Int }` };
    const b = { name: 'b', url: 'http://b', sdl: `${LINK} type Query { y: Int }` };
    expect(composeSupergraph([a, b])).toEqual(composeSupergraph([b, a]));
  });

  it('returns the composition errors of conflicting subgraphs', () => {
    const outcome = composeSupergraph([
      { name: 'a', url: 'http://a', sdl: `${LINK} type Query { price: Int }` },
      { name: 'b', url: 'http://b', sdl: `${LINK} type Query { price: String }` },
    ]);
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.errors.length).toBeGreaterThan(0);
    expect(outcome.errors.map((e) => e.message).join('\n')).toMatch(/Query\.price/);
  });

  it('names the subgraph whose SDL cannot be parsed', () => {
    const outcome = composeSupergraph([{ name: 'broken', url: 'http://x', sdl: 'type Query {' }]);
    expect(outcome).toMatchObject({ ok: false, errors: [{ code: 'PARSE_ERROR', message: expect.stringMatching(/^\[broken\]/) }] });
  });

  it('refuses an empty set', () => {
    expect(composeSupergraph([])).toMatchObject({ ok: false, errors: [{ code: 'NO_SUBGRAPHS' }] });
  });
});
