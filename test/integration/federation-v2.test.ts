// Federation v2 beyond @key: every directive and abstract type, executed across fixture subgraphs through one router.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningRouter } from '../../src/cli/start-router.js';
import { databaseKind } from '../helpers/database.js';
import { postGraphQL } from '../helpers/http.js';
import { readMetric } from '../helpers/stack.js';
import { startFederationStack, type FederationStack } from '../helpers/federation-stack.js';
import type { RunningFixture } from '../helpers/fixture-subgraph.js';
import * as federation from '../fixtures/federation/index.js';

describe(`Federation v2 (${databaseKind} database)`, () => {
  let stack: FederationStack;
  let router: RunningRouter;
  let running: Map<string, RunningFixture>;

  async function query<T = any>(text: string, variables?: Record<string, unknown>) {
    return postGraphQL<T>(router.url, text, { variables });
  }

  /** Queries and expects a clean 200 answer; returns its data. */
  async function data<T = any>(text: string, variables?: Record<string, unknown>): Promise<T> {
    const { status, body } = await query<T>(text, variables);
    expect(body.errors).toBeUndefined();
    expect(status).toBe(200);
    return body.data as T;
  }

  function requestsTo(name: string) {
    const fixture = running.get(name);
    if (!fixture) throw new Error(`no fixture subgraph named ${name}`);
    return fixture.requests;
  }

  /** The entity representations the router sent to one subgraph since the last reset (batched calls alias the variable). */
  function representationsSentTo(name: string): Record<string, unknown>[] {
    return requestsTo(name).flatMap((r) =>
      Object.entries(r.variables ?? {}).flatMap(([variable, value]) => (variable.endsWith('representations') ? (value as Record<string, unknown>[]) : [])),
    );
  }

  /** The entity look-ups (`_entities` calls) one subgraph received since the last reset. */
  function entityCallsTo(name: string) {
    return requestsTo(name).filter((r) => r.query.includes('_entities'));
  }

  beforeAll(async () => {
    stack = await startFederationStack();
    running = stack.fixtures;
    router = await stack.startRouter();
  });

  afterAll(async () => {
    await stack?.close();
  });

  beforeEach(() => {
    for (const fixture of running.values()) fixture.requests.length = 0;
  });

  // One engine: every query and mutation of these scenarios runs from its plan, never by stitching.
  afterEach(async () => {
    expect(await readMetric(router, 'switchyard_executions_total', { path: 'stitching' })).toBe(0);
    expect(await readMetric(router, 'switchyard_executions_total', { path: 'plan_error' })).toBe(0);
    expect(await readMetric(router, 'switchyard_plans_total', { outcome: 'invalid' })).toBe(0);
  });

  describe('multiple keys: an entity joined by whichever key each subgraph knows', () => {
    it('reaches a subgraph that only knows users by email from a user found by id', async () => {
      const result = await data('{ keyUser(id: "u1") { id name email plan } }');
      expect(result.keyUser).toEqual({ id: 'u1', name: 'Ada', email: 'ada@example.com', plan: 'pro' });
      expect(representationsSentTo('key-billing')).toEqual([{ __typename: 'KeyUser', email: 'ada@example.com' }]);
    });

    it('resolves users by email for a subgraph that holds no id, in one batched call', async () => {
      const result = await data('{ keyInvoices { id customer { email id name plan } } }');
      expect(result.keyInvoices).toEqual([
        { id: 'inv-1', customer: { email: 'grace@example.com', id: 'u2', name: 'Grace', plan: 'free' } },
        { id: 'inv-2', customer: { email: 'ada@example.com', id: 'u1', name: 'Ada', plan: 'pro' } },
        { id: 'inv-3', customer: { email: 'grace@example.com', id: 'u2', name: 'Grace', plan: 'free' } },
      ]);
      expect(requestsTo('key-accounts')).toHaveLength(1);
      expect(representationsSentTo('key-accounts')).toEqual([
        { __typename: 'KeyUser', email: 'grace@example.com' },
        { __typename: 'KeyUser', email: 'ada@example.com' },
      ]);
    });

    it('hops through the subgraph that knows both keys to reach one that knows only the other', async () => {
      const result = await data('{ keyInvoices { id customer { openTickets } } }');
      expect(result.keyInvoices).toEqual([
        { id: 'inv-1', customer: { openTickets: 2 } },
        { id: 'inv-2', customer: { openTickets: 0 } },
        { id: 'inv-3', customer: { openTickets: 2 } },
      ]);
      expect(representationsSentTo('key-accounts')).toEqual([
        { __typename: 'KeyUser', email: 'grace@example.com' },
        { __typename: 'KeyUser', email: 'ada@example.com' },
      ]);
      expect(representationsSentTo('key-support')).toEqual([
        { __typename: 'KeyUser', id: 'u2' },
        { __typename: 'KeyUser', id: 'u1' },
      ]);
    });

    it('never asks a subgraph to resolve a key it declared resolvable: false', async () => {
      const result = await data('{ keyInvoices { id team { id name } } }');
      expect(result.keyInvoices).toEqual([
        { id: 'inv-1', team: { id: 't2', name: 'Operations' } },
        { id: 'inv-2', team: { id: 't1', name: 'Research' } },
        { id: 'inv-3', team: { id: 't2', name: 'Operations' } },
      ]);
      expect(entityCallsTo('key-billing')).toHaveLength(0);
      expect(representationsSentTo('key-accounts')).toEqual([
        { __typename: 'KeyTeam', id: 't2' },
        { __typename: 'KeyTeam', id: 't1' },
      ]);
    });
  });

  describe('compound keys: entities identified by several fields together', () => {
    it('joins on "sku package", telling apart two packages of the same sku', async () => {
      const result = await data('{ cmpProducts { sku package name priceCents } }');
      expect(result.cmpProducts).toEqual([
        { sku: 'tee', package: 'single', name: 'T-shirt', priceCents: 1500 },
        { sku: 'tee', package: 'pack-of-3', name: 'T-shirt (3 pack)', priceCents: 3900 },
      ]);
      expect(representationsSentTo('cmp-pricing')).toEqual([
        { __typename: 'CmpProduct', sku: 'tee', package: 'single' },
        { __typename: 'CmpProduct', sku: 'tee', package: 'pack-of-3' },
      ]);
    });

    it('joins on the nested key "id organization { id }", even when the client selects no key field', async () => {
      const result = await data('{ cmpAccounts { email creditCents } }');
      expect(result.cmpAccounts).toEqual([
        { email: 'one@acme.test', creditCents: 100 },
        { email: 'one@globex.test', creditCents: 250 },
      ]);
      expect(representationsSentTo('cmp-pricing')).toEqual([
        { __typename: 'CmpAccount', id: '1', organization: { id: 'acme' } },
        { __typename: 'CmpAccount', id: '1', organization: { id: 'globex' } },
      ]);
    });
  });

  describe('@requires and @external: a field computed from fields another subgraph owns', () => {
    it('fetches the required scalar fields first and passes them in the representation', async () => {
      const result = await data('{ reqProducts { upc shippingCents } }');
      expect(result.reqProducts).toEqual(federation.reqProductsData.map((p) => ({ upc: p.upc, shippingCents: federation.shippingCents(p) })));
      expect(representationsSentTo('req-shipping')).toEqual(
        federation.reqProductsData.map((p) => ({ __typename: 'ReqProduct', upc: p.upc, weightGrams: p.weightGrams, priceCents: p.priceCents })),
      );
      expect(requestsTo('req-shipping')).toHaveLength(1);
    });

    it('passes a required nested selection (dimensions { lengthCm widthCm heightCm })', async () => {
      const result = await data('{ reqProducts { name packageSize } }');
      expect(result.reqProducts).toEqual(federation.reqProductsData.map((p) => ({ name: p.name, packageSize: federation.packageSize(p.dimensions) })));
      expect(representationsSentTo('req-shipping')).toEqual(
        federation.reqProductsData.map((p) => ({ __typename: 'ReqProduct', upc: p.upc, dimensions: p.dimensions })),
      );
    });

    it('serves @requires fields on an entity reached by key, and returns what the client asked for alongside', async () => {
      const result = await data('{ reqProducts { upc weightGrams shippingCents packageSize } }');
      expect(result.reqProducts[0]).toEqual({ upc: 'p1', weightGrams: 12_000, shippingCents: 6_000, packageSize: 'PARCEL' });
      expect(result.reqProducts[2]).toEqual({ upc: 'p3', weightGrams: 200_000, shippingCents: 0, packageSize: 'FREIGHT' });
    });

    it('passes field arguments and aliases through to a @requires field', async () => {
      const result = await data('query ($zone: String!) { reqProducts { upc eu: shippingQuote(zone: "EU") there: shippingQuote(zone: $zone) } }', { zone: 'US' });
      expect(result.reqProducts).toEqual(
        federation.reqProductsData.map((p) => ({ upc: p.upc, eu: federation.shippingQuote(p, 'EU'), there: federation.shippingQuote(p, 'US') })),
      );
    });

    it('chains three subgraphs: a reference from orders, the required fields from products, the result from shipping', async () => {
      const result = await data('{ reqOrders { id product { name shippingCents } } }');
      const [piano, feather] = [federation.reqProductsData[2], federation.reqProductsData[1]];
      expect(result.reqOrders).toEqual([
        { id: 'o1', product: { name: piano.name, shippingCents: federation.shippingCents(piano) } },
        { id: 'o2', product: { name: feather.name, shippingCents: federation.shippingCents(feather) } },
      ]);
      expect(entityCallsTo('req-orders')).toHaveLength(0);
      expect(representationsSentTo('req-shipping')).toEqual(
        [piano, feather].map((p) => ({ __typename: 'ReqProduct', upc: p.upc, weightGrams: p.weightGrams, priceCents: p.priceCents })),
      );
    });

    it('skips the requiring subgraph when @skip removes the field', async () => {
      const result = await data('query ($lean: Boolean!) { reqProducts { upc shippingCents @skip(if: $lean) } }', { lean: true });
      expect(result.reqProducts).toEqual(federation.reqProductsData.map((p) => ({ upc: p.upc })));
      expect(requestsTo('req-shipping')).toHaveLength(0);
    });
  });

  describe('@provides: fields a subgraph can return on one path without a second hop', () => {
    it('answers provided fields from the providing subgraph alone', async () => {
      const result = await data('{ provReviews { body author { id username } } }');
      expect(result.provReviews).toEqual([
        { body: 'Sturdy.', author: { id: 'r1', username: 'ada' } },
        { body: 'Too heavy.', author: { id: 'r2', username: 'grace' } },
      ]);
      expect(requestsTo('prov-accounts')).toHaveLength(0);
      expect(requestsTo('prov-reviews')).toHaveLength(1);
    });

    it('fetches the fields that are not provided from their owner', async () => {
      const result = await data('{ provReviews { author { username birthYear } } }');
      expect(result.provReviews).toEqual([{ author: { username: 'ada', birthYear: 1815 } }, { author: { username: 'grace', birthYear: 1906 } }]);
      expect(requestsTo('prov-accounts')).toHaveLength(1);
    });

    it('does not trust the providing subgraph on a path without @provides', async () => {
      const result = await data('{ provReviews { editor { username } } }');
      expect(result.provReviews).toEqual([{ editor: { username: 'grace' } }, { editor: { username: 'grace' } }]);
      expect(requestsTo('prov-accounts')).toHaveLength(1);
    });
  });

  describe('@shareable: fields and types that more than one subgraph resolves', () => {
    it('resolves a shareable field locally in whichever subgraph the query is already in', async () => {
      const featured = await data('{ shrFeatured { id name } }');
      expect(featured.shrFeatured).toEqual([
        { id: 's2', name: 'Toaster' },
        { id: 's1', name: 'Kettle' },
      ]);
      expect(requestsTo('shr-inventory')).toHaveLength(0);

      const product = await data('{ shrProduct(id: "s1") { name inStock } }');
      expect(product.shrProduct).toEqual({ name: 'Kettle', inStock: true });
      expect(requestsTo('shr-marketing')).toHaveLength(1); // only the featured list above
    });

    it('merges a shareable value type returned by both subgraphs', async () => {
      const result = await data('{ shrFeatured { name inStock listPrice { amountCents currency } salePrice { amountCents currency } } }');
      expect(result.shrFeatured).toEqual([
        { name: 'Toaster', inStock: false, listPrice: { amountCents: 4_000, currency: 'EUR' }, salePrice: { amountCents: 3_500, currency: 'EUR' } },
        { name: 'Kettle', inStock: true, listPrice: { amountCents: 2_500, currency: 'EUR' }, salePrice: { amountCents: 2_000, currency: 'EUR' } },
      ]);
    });

    it('answers a shareable root field from one of its subgraphs', async () => {
      const result = await data('{ shrStatus { version } }');
      expect(result.shrStatus).toEqual({ version: 'v7' });
      expect(requestsTo('shr-inventory').length + requestsTo('shr-marketing').length).toBe(1);
    });
  });

  describe('@override: a field that moved to a new owning subgraph', () => {
    it('is resolved by the new owner, and the old owner is never asked for it', async () => {
      const result = await data('{ ovrProduct(id: "7") { id name priceCents } }');
      expect(result.ovrProduct).toEqual({ id: '7', name: 'Product 7', priceCents: 700 });
      expect(requestsTo('ovr-legacy').map((r) => r.query).join('\n')).not.toMatch(/priceCents/);
      expect(representationsSentTo('ovr-pricing')).toEqual([{ __typename: 'OvrProduct', id: '7' }]);
    });

    it('honours progressive override percentages wherever the query starts: percent(100) moves a field, percent(0) leaves it', async () => {
      for (let i = 0; i < 5; i++) {
        const fromLegacy = await data('{ ovrProduct(id: "3") { stockCount rating } }');
        expect(fromLegacy.ovrProduct).toEqual({ stockCount: 4, rating: 4 });
        const fromPricing = await data('{ ovrDeals { id name priceCents stockCount rating } }');
        expect(fromPricing.ovrDeals).toEqual([{ id: '5', name: 'Product 5', priceCents: 500, stockCount: 6, rating: 4 }]);
      }
      expect(requestsTo('ovr-legacy').map((r) => r.query).join('\n')).not.toMatch(/stockCount|priceCents/);
      expect(requestsTo('ovr-pricing').map((r) => r.query).join('\n')).not.toMatch(/rating/);
    });

    // A label that is not percent(x) is switched on by SWITCHYARD_OVERRIDE_LABELS; until then the field stays
    // with the subgraph it is overridden from, wherever the query starts.
    it('leaves a field with its old owner while its override label ("beta-grades") is not enabled', async () => {
      const fromLegacy = await data('{ ovrProduct(id: "3") { grade } }');
      expect(fromLegacy.ovrProduct).toEqual({ grade: 2 });
      const fromPricing = await data('{ ovrDeals { grade } }');
      expect(fromPricing.ovrDeals).toEqual([{ grade: 2 }]);
    });

    it('moves the field to its new owner on a router where the label is switched on', async () => {
      const labelled = await stack.startRouter({ overrideLabels: 'beta-grades' });
      try {
        for (const text of ['{ ovrProduct(id: "3") { grade } }', '{ ovrDeals { grade } }']) {
          const { body } = await postGraphQL(labelled.url, text);
          expect(body.errors).toBeUndefined();
          expect(JSON.stringify(body.data)).toContain('"grade":-1');
        }
      } finally {
        await labelled.close();
      }
    });
  });

  describe('@inaccessible: internal fields and types hidden from clients but used for joins', () => {
    it('rejects a query for an inaccessible field or root field with 400, calling no subgraph', async () => {
      for (const text of ['{ hidProduct(id: "h1") { sku } }', '{ hidProduct(id: "h1") { costCents } }', '{ hidAudit { note } }']) {
        const { status, body } = await query(text);
        expect({ text, status }).toEqual({ text, status: 400 });
        expect(body.errors?.[0].extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
      }
      expect(requestsTo('hid-catalog')).toHaveLength(0);
    });

    it('rejects an inaccessible argument or enum value with 400, and serves the accessible ones', async () => {
      for (const text of ['{ hidProducts(includeDrafts: true) { name } }', '{ hidProducts(state: ARCHIVED) { name } }']) {
        const { status, body } = await query(text);
        expect({ text, status }).toEqual({ text, status: 400 });
        expect(body.errors?.[0].extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
      }
      const result = await data('{ hidProducts(state: ACTIVE) { name } }');
      expect(result.hidProducts).toEqual([{ name: 'Lamp' }, { name: 'Chair' }]);
    });

    it('leaves inaccessible fields, arguments, enum values and types out of introspection', async () => {
      const result = await data(/* GraphQL */ `
        {
          product: __type(name: "HidProduct") { fields { name } }
          audit: __type(name: "HidAudit") { name }
          state: __type(name: "HidState") { enumValues { name } }
          query: __type(name: "Query") { fields { name args { name } } }
        }
      `);
      expect(result.product.fields.map((f: { name: string }) => f.name).sort()).toEqual(['id', 'name', 'stock', 'stockValueCents']);
      expect(result.audit).toBeNull();
      expect(result.state.enumValues).toEqual([{ name: 'ACTIVE' }]);
      const rootFields = new Map<string, string[]>(result.query.fields.map((f: { name: string; args: { name: string }[] }) => [f.name, f.args.map((a) => a.name)]));
      expect(rootFields.has('hidAudit')).toBe(false);
      expect(rootFields.get('hidProducts')).toEqual(['state']);
    });

    it('still joins on an inaccessible key and feeds an inaccessible field to @requires', async () => {
      const result = await data('{ hidProduct(id: "h2") { name stock stockValueCents } }');
      expect(result.hidProduct).toEqual({ name: 'Chair', stock: 10, stockValueCents: 21_000 });
      expect(representationsSentTo('hid-warehouse')).toEqual([{ __typename: 'HidProduct', sku: 'SKU-002', costCents: 2_100 }]);
    });
  });

  describe('entity interfaces and @interfaceObject: fields added to every implementation by a subgraph that sees only the interface', () => {
    it('adds the interface object field to each implementation, next to type-specific fields', async () => {
      const result = await data('{ media { __typename id title rating ... on Book { author } ... on Movie { director } } }');
      expect(result.media).toEqual([
        { __typename: 'Book', id: 'm1', title: 'Dune', rating: 4.5, author: 'Frank Herbert' },
        { __typename: 'Movie', id: 'm2', title: 'Alien', rating: 4.8, director: 'Ridley Scott' },
        { __typename: 'Book', id: 'm3', title: 'Emma', rating: 3.9, author: 'Jane Austen' },
      ]);
      // The interface object's subgraph knows no Book or Movie: it is sent the interface's name.
      const sent = representationsSentTo('media-ratings').sort((a, b) => String(a.id).localeCompare(String(b.id)));
      expect(sent).toEqual(['m1', 'm2', 'm3'].map((id) => ({ __typename: 'Media', id })));
      expect(requestsTo('media-ratings')).toHaveLength(1);
    });

    // Stitching (@graphql-tools/federation 4.5.2) never fetches an @interfaceObject field selected on a position
    // typed as a concrete implementation (Book, not Media); the plan looks it up as the interface.
    it('adds the field to an implementation returned under its concrete type', async () => {
      const result = await data('{ book(id: "m3") { title author rating } }');
      expect(result.book).toEqual({ title: 'Emma', author: 'Jane Austen', rating: 3.9 });
      expect(representationsSentTo('media-ratings')).toEqual([{ __typename: 'Media', id: 'm3' }]);
    });

    // The same case for an implementation referenced from a third subgraph (media-loans), which stitching misses too.
    it('adds the field to an implementation referenced by another subgraph', async () => {
      const result = await data('{ loans { id book { title rating } } }');
      expect(result.loans).toEqual([{ id: 'l1', book: { title: 'Dune', rating: 4.5 } }]);
    });

    it('completes an implementation referenced by another subgraph with its own fields', async () => {
      const result = await data('{ loans { id book { title author } } }');
      expect(result.loans).toEqual([{ id: 'l1', book: { title: 'Dune', author: 'Frank Herbert' } }]);
      expect(representationsSentTo('media-catalog')).toEqual([{ __typename: 'Book', id: 'm1' }]);
    });

    it('serves the added field inside a type condition on one implementation', async () => {
      const result = await data('{ mediaItem(id: "m2") { ... on Movie { director rating } } }');
      expect(result.mediaItem).toEqual({ director: 'Ridley Scott', rating: 4.8 });
    });

    it('finds the concrete type of an interface object returned by the subgraph that does not know it', async () => {
      const result = await data('{ topRatedMedia { __typename id title rating ... on Book { author } ... on Movie { director } } }');
      expect(result.topRatedMedia).toEqual([
        { __typename: 'Movie', id: 'm2', title: 'Alien', rating: 4.8, director: 'Ridley Scott' },
        { __typename: 'Book', id: 'm1', title: 'Dune', rating: 4.5, author: 'Frank Herbert' },
      ]);
    });

    it('resolves the concrete types of interface objects nested under an interface object field', async () => {
      const result = await data('{ mediaItem(id: "m1") { title similar { __typename title rating ... on Movie { director } } } }');
      expect(result.mediaItem).toEqual({
        title: 'Dune',
        similar: [
          { __typename: 'Movie', title: 'Alien', rating: 4.8, director: 'Ridley Scott' },
          { __typename: 'Book', title: 'Emma', rating: 3.9 },
        ],
      });
    });
  });

  describe('unions and interfaces across subgraphs: abstract results completed by other subgraphs', () => {
    it('completes each union member with fields from the subgraph that extends it', async () => {
      const result = await data(/* GraphQL */ `
        {
          search(term: "space") {
            __typename
            ... on SrchArticle { id headline wordCount }
            ... on SrchVideo { id title durationSec }
          }
        }
      `);
      expect(result.search).toEqual([
        { __typename: 'SrchArticle', id: 'a1', headline: 'Rust in space', wordCount: 1200 },
        { __typename: 'SrchVideo', id: 'v1', title: 'Launch day', durationSec: 95 },
        { __typename: 'SrchArticle', id: 'a2', headline: 'GraphQL at scale', wordCount: 800 },
      ]);
      // One request: the look-ups of both member types are batched together.
      expect(requestsTo('srch-media')).toHaveLength(1);
      expect(representationsSentTo('srch-media')).toEqual([
        { __typename: 'SrchArticle', id: 'a1' },
        { __typename: 'SrchArticle', id: 'a2' },
        { __typename: 'SrchVideo', id: 'v1' },
      ]);
    });

    it('serves a union whose members differ between the subgraphs that define it', async () => {
      const result = await data('{ srchTrending { __typename ... on SrchPodcast { id host } ... on SrchVideo { id title durationSec } ... on SrchArticle { headline } } }');
      expect(result.srchTrending).toEqual([
        { __typename: 'SrchPodcast', id: 'pod1', host: 'Sam' },
        { __typename: 'SrchVideo', id: 'v2', title: 'Behind the scenes', durationSec: 300 },
      ]);
    });

    it('completes the implementations of a plain interface with fields from another subgraph', async () => {
      const result = await data('{ srchHits { id score ... on SrchVideo { title } ... on SrchArticle { wordCount } } }');
      expect(result.srchHits).toEqual([
        { id: 'a1', score: 0.9, wordCount: 1200 },
        { id: 'v1', score: 0.7, title: 'Launch day' },
        { id: 'a2', score: 0.4, wordCount: 800 },
      ]);
    });
  });
});
