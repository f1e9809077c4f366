// Cache policies of plan steps: max age, scope and stale time from `@cacheControl` hints and live rules.
import { readFileSync } from 'node:fs';
import { buildASTSchema, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { composeSupergraph } from '../compose.js';
import { HintBook, type CacheRule } from '../../cache/cache-hints.js';
import { Supergraph } from '../supergraph/supergraph.js';
import { buildPlan } from './build-plan.js';
import { sectionPolicy } from './section-policy.js';

const CACHE_LINK = `@link(url: "https://switchyard.dev/cache/v1.0", import: ["@cacheControl"]) @composeDirective(name: "@cacheControl")
  enum CacheControlScope { PUBLIC PRIVATE }
  directive @cacheControl(maxAge: Int, scope: CacheControlScope, inheritMaxAge: Boolean) on FIELD_DEFINITION | OBJECT | INTERFACE | UNION`;

function supergraphOf(subgraphs: { name: string; sdl: string }[]) {
  const outcome = composeSupergraph(subgraphs.map((s) => ({ ...s, url: `http://${s.name}.test/graphql` })));
  if (!outcome.ok) throw new Error(outcome.errors.map((e) => e.message).join('\n'));
  return parse(outcome.supergraphSdl);
}

/** Each fetch's subgraph and policy for one query. */
function policies(document: ReturnType<typeof parse>, query: string, rules: CacheRule[] = []) {
  const schema = buildASTSchema(document, { assumeValid: true, assumeValidSDL: true });
  const supergraph = Supergraph.fromDocument(document);
  const plan = buildPlan(supergraph.join, schema, parse(query), undefined, new Set(), undefined);
  const hints = new HintBook(supergraph.cacheHints, rules, 1);
  return plan.fetches.flatMap((fetch) => fetch.steps.map((step) => ({ subgraph: fetch.subgraph, ...sectionPolicy(schema, hints, fetch, step, 300_000) })));
}

const demo = () => supergraphOf(['product', 'reviews', 'inventory'].map((name) => ({ name, sdl: readFileSync(new URL(`../../../schema/${name}.graphql`, import.meta.url), 'utf8') })));
const PAGE = '{ product(id: "1") { id name reviews { id rating } inventory { inStock } } }';

describe('section policies', () => {
  it('takes each part of the demo page from the demo hints: catalogue 60 s, reviews 30 s, inventory 5 s, all public', () => {
    const parts = policies(demo(), PAGE);
    expect(parts.map(({ subgraph, maxAgeMs, scope }) => ({ subgraph, maxAgeMs, scope }))).toEqual([
      { subgraph: 'product', maxAgeMs: 60_000, scope: 'public' },
      { subgraph: 'reviews', maxAgeMs: 30_000, scope: 'public' },
      { subgraph: 'inventory', maxAgeMs: 5_000, scope: 'public' },
    ]);
    expect(parts.find((p) => p.subgraph === 'reviews')!.types).toEqual(expect.arrayContaining(['Product', 'Review']));
    expect(parts.every((p) => p.staleMs === 300_000)).toBe(true);
  });

  it('lets a live rule override the SDL at a field or a type, with its own stale time', () => {
    const parts = policies(demo(), PAGE, [
      { coordinate: 'Product.inventory', maxAgeSeconds: 1, staleSeconds: 10 },
      { coordinate: 'Product.reviews', maxAgeSeconds: 2 },
      // A field's own hint wins over its type's max age; the type's PRIVATE still makes the part private.
      { coordinate: 'Review', maxAgeSeconds: 600, scope: 'private' },
    ]);
    expect(parts.find((p) => p.subgraph === 'inventory')).toMatchObject({ maxAgeMs: 1_000, staleMs: 10_000 });
    expect(parts.find((p) => p.subgraph === 'reviews')).toMatchObject({ maxAgeMs: 2_000, scope: 'private' });
  });

  it('caches nothing where a field has no max age, and gives the same selection the same signature', () => {
    const supergraph = supergraphOf([
      {
        name: 'a',
        sdl: `extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key", "@composeDirective"]) ${CACHE_LINK}
          type Query { hinted: Thing @cacheControl(maxAge: 10) plain: Thing inherits: Thing @cacheControl(inheritMaxAge: true) }
          type Thing { id: ID! nested: Thing label: String }`,
      },
    ]);
    // A composite field without a hint of its own or its type's: no max age (Apollo's rule).
    expect(policies(supergraph, '{ hinted { id nested { id } } }')[0].maxAgeMs).toBe(0);
    expect(policies(supergraph, '{ hinted { id label } }')[0].maxAgeMs).toBe(10_000);
    expect(policies(supergraph, '{ plain { id } }')[0].maxAgeMs).toBe(0);
    expect(policies(supergraph, '{ inherits { id } }')[0].maxAgeMs).toBe(0);
    const [one] = policies(supergraph, 'query A($x: Boolean!) { hinted { id label @include(if: $x) } }');
    const [two] = policies(supergraph, 'query B($x: Boolean!) { hinted { id label @include(if: $x) } }');
    expect(one.signature).toBe(two.signature);
    expect(one.variables).toEqual(['x']);
    expect(policies(supergraph, '{ hinted { id } }')[0].signature).not.toBe(one.signature);
  });

  it('follows an @link import that renames the directive', () => {
    const supergraph = supergraphOf([
      {
        name: 'a',
        sdl: `extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key", "@composeDirective"])
          @link(url: "https://switchyard.dev/cache/v1.0", import: [{ name: "@cacheControl", as: "@hint" }]) @composeDirective(name: "@hint")
          enum CacheControlScope { PUBLIC PRIVATE }
          directive @hint(maxAge: Int, scope: CacheControlScope, inheritMaxAge: Boolean) on FIELD_DEFINITION | OBJECT | INTERFACE | UNION
          type Query { thing: Thing @hint(maxAge: 7, scope: PRIVATE) }
          type Thing { id: ID! }`,
      },
    ]);
    expect(policies(supergraph, '{ thing { id } }')[0]).toMatchObject({ maxAgeMs: 7_000, scope: 'private' });
  });

  it('never caches a mutation part', () => {
    const parts = policies(demo(), 'mutation { addReview(productId: "1", rating: 5, body: "x") { id rating } }');
    expect(parts[0].maxAgeMs).toBe(0);
  });
});
