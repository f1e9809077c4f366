// @defer at the router: the required part at once, each deferred section when its subgraphs answer, within its own budget, audited and measured as one request.
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { meros } from 'meros/browser';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_FAULT_SETTINGS } from '../../subgraphs/index.js';
import { queryAudit } from '../../src/registry/audit-store.js';
import { removeCacheRule, setCacheRule } from '../../src/registry/cache-store.js';
import { grantPermission, revokePermission } from '../../src/registry/permission-store.js';
import { publishTrustedDocuments } from '../../src/registry/trusted-documents.js';
import { removePolicy, setPolicy } from '../../src/registry/policy-store.js';
import type { RunningRouter } from '../../src/cli/start-router.js';
import { databaseKind } from '../helpers/database.js';
import { eventually, postGraphQL } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/stack.js';

type Payload = Record<string, any>;

const DEFERRED_PAGE = /* GraphQL */ `
  query DeferredPage($id: ID!) {
    product(id: $id) {
      id
      name
      ... @defer(label: "reviews") { reviews { id rating } }
      inventory { inStock }
    }
  }
`;

const APOLLO_ACCEPT = 'multipart/mixed;deferSpec=20220824, application/json';

/** Posts a query and opens its multipart answer: each part's JSON as it arrives (meros splits the parts). */
async function openStream(url: string, query: string, options: { variables?: Record<string, unknown>; accept?: string; signal?: AbortSignal; operationName?: string; headers?: Record<string, string> } = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: options.accept ?? APOLLO_ACCEPT, ...options.headers },
    body: JSON.stringify({ query, variables: options.variables, operationName: options.operationName }),
    signal: options.signal,
  });
  const parts = await meros<Payload>(response);
  if (!(Symbol.asyncIterator in Object(parts))) throw new Error(`not a multipart answer: ${response.headers.get('content-type')}`);
  const iterator = (parts as AsyncGenerator<{ json: boolean; body: Payload }>)[Symbol.asyncIterator]();
  return {
    response,
    async next(): Promise<Payload | undefined> {
      const { done, value } = await iterator.next();
      return done ? undefined : value.body;
    },
    async rest(): Promise<Payload[]> {
      const payloads: Payload[] = [];
      for (let payload = await this.next(); payload; payload = await this.next()) payloads.push(payload);
      return payloads;
    },
  };
}

describe(`@defer at the router (${databaseKind} database)`, () => {
  let stack: Stack;
  const spans = new InMemorySpanExporter();
  beforeAll(async () => {
    stack = await startStack({ routerOptions: { spanExporter: spans } });
  });
  afterAll(async () => {
    await stack?.close();
  });
  afterEach(() => {
    for (const { subgraph } of Object.values(stack.subgraphs)) subgraph.faults.set(DEFAULT_FAULT_SETTINGS);
  });

  it('sends the required part at once, and a deferred section that misses its budget as null with DEADLINE_EXCEEDED, then ends', async () => {
    const router = await stack.startRouter({ deferDeadlineMs: 300 });
    // Reviews never answer: the first payload cannot have waited for them.
    stack.subgraphs.reviews.subgraph.faults.set({ mode: 'hang' });
    const stream = await openStream(router.url, DEFERRED_PAGE, { variables: { id: '2' } });
    expect(stream.response.headers.get('content-type')).toBe('multipart/mixed; boundary="-"; deferSpec=20220824');
    const first = await stream.next();
    expect(first).toMatchObject({ data: { product: { id: '2', name: expect.any(String), inventory: { inStock: expect.any(Number) } } }, hasNext: true });
    expect(first!.data.product).not.toHaveProperty('reviews');
    expect(first!.extensions.completeness).toEqual({ complete: true, missing: [] });
    const rest = await stream.rest();
    expect(rest).toHaveLength(1);
    expect(rest[0]).toMatchObject({
      incremental: [{ data: { reviews: null }, path: ['product'], label: 'reviews', errors: [{ path: ['product', 'reviews'], extensions: { code: 'DEADLINE_EXCEEDED', subgraph: 'reviews' } }] }],
      hasNext: false,
    });
    // The last payload's completeness is the whole answer's.
    expect(rest[0].extensions.completeness).toEqual({ complete: false, missing: [{ path: ['product', 'reviews'], subgraph: 'reviews', code: 'DEADLINE_EXCEEDED' }] });
  });

  it("lets a deferred section outlive the request's deadline, within its own budget", async () => {
    const router = await stack.startRouter({ defaultDeadlineMs: 300, deferDeadlineMs: 20_000 });
    stack.subgraphs.reviews.subgraph.faults.set({ latencyMs: 900 });
    const stream = await openStream(router.url, DEFERRED_PAGE, { variables: { id: '2' } });
    const payloads = [await stream.next(), ...(await stream.rest())];
    expect(payloads).toHaveLength(2);
    const [reviews] = payloads[1]!.incremental;
    expect(reviews.errors).toBeUndefined();
    expect(reviews.data.reviews.length).toBeGreaterThan(0);
    // The same section without @defer is cut by the request's deadline.
    const plain = await postGraphQL(router.url, DEFERRED_PAGE.replace('... @defer(label: "reviews")', '...'), { variables: { id: '2' } });
    expect(plain.body.data.product.reviews).toBeNull();
    expect(plain.body.errors?.[0].extensions?.code).toBe('DEADLINE_EXCEEDED');
  });

  it('answers a client that reads no incremental format in one response, as if @defer were absent', async () => {
    const deferred = DEFERRED_PAGE;
    const plain = DEFERRED_PAGE.replace('... @defer(label: "reviews")', '...');
    for (const accept of ['application/json', 'application/graphql-response+json', '*/*']) {
      const [a, b] = await Promise.all([postGraphQL(stack.router.url, deferred, { variables: { id: '3' }, accept }), postGraphQL(stack.router.url, plain, { variables: { id: '3' }, accept })]);
      expect(a.headers.get('content-type')).toMatch(/^application\/(graphql-response\+)?json/);
      expect(a.body).toEqual(b.body);
      expect(a.headers.get('switchyard-completed')).toBe('true');
    }
  });

  it('writes the audit row when the stream ends, naming every subgraph called, and counts payloads', async () => {
    const since = new Date();
    const stream = await openStream(stack.router.url, DEFERRED_PAGE, { variables: { id: '4' } });
    const payloads = [await stream.next(), ...(await stream.rest())];
    expect(payloads.at(-1)!.hasNext).toBe(false);
    await eventually(async () => (await queryAudit(stack.db, { since, operation: 'DeferredPage' })).length === 1, { what: 'the audit row' });
    const [row] = await queryAudit(stack.db, { since, operation: 'DeferredPage' });
    expect(row).toMatchObject({ operationName: 'DeferredPage', status: 200, complete: true });
    expect([...row.subgraphs].sort()).toEqual(['inventory', 'product', 'reviews']);
    await eventually(async () => (await stack.metric('switchyard_stream_payloads_count', { operation: 'DeferredPage' })) >= 1, { what: 'the payload histogram' });
    expect(await stack.metric('switchyard_stream_payloads_sum', { operation: 'DeferredPage' })).toBeGreaterThanOrEqual(2);
    expect(await stack.metric('switchyard_first_payload_seconds_count', { operation: 'DeferredPage' })).toBeGreaterThanOrEqual(1);
    expect(await stack.metric('switchyard_last_payload_seconds_count', { operation: 'DeferredPage' })).toBeGreaterThanOrEqual(1);
  });

  it('cancels the outstanding fetches of a client that leaves mid-stream, and frees its queue place at once', async () => {
    await setPolicy(stack.db, 'Leaver', { maxConcurrency: 1, queueLength: 0 });
    try {
      const leaver = DEFERRED_PAGE.replace('DeferredPage', 'Leaver');
      await eventually(async () => {
        // The policy is in force once a second request at once is refused.
        const hold = new AbortController();
        stack.subgraphs.reviews.subgraph.faults.set({ mode: 'hang' });
        const held = await openStream(stack.router.url, leaver, { variables: { id: '5' }, signal: hold.signal });
        await held.next();
        const second = await postGraphQL(stack.router.url, leaver, { variables: { id: '5' } });
        hold.abort();
        return second.body.errors?.[0]?.extensions?.code === 'QUEUE_FULL';
      }, { what: 'the Leaver policy in force' });
      const cancelledBefore = await stack.metric('switchyard_subgraph_requests_total', { subgraph: 'reviews', outcome: 'cancelled' });
      const leave = new AbortController();
      const stream = await openStream(stack.router.url, leaver, { variables: { id: '5' }, signal: leave.signal });
      expect((await stream.next())!.hasNext).toBe(true);
      leave.abort();
      await eventually(async () => (await stack.metric('switchyard_subgraph_requests_total', { subgraph: 'reviews', outcome: 'cancelled' })) > cancelledBefore, { what: 'the reviews call cancelled' });
      // Its place is free: the next client is admitted (reviews answer again) rather than refused as QUEUE_FULL.
      stack.subgraphs.reviews.subgraph.faults.set(DEFAULT_FAULT_SETTINGS);
      const next = await postGraphQL(stack.router.url, leaver, { variables: { id: '5' } });
      expect(next.body.errors).toBeUndefined();
      expect(next.body.data.product.reviews).not.toBeNull();
    } finally {
      await removePolicy(stack.db, 'Leaver');
    }
  });

  it('keeps the deferred fetches under the request span, which ends with the last payload', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    stack.subgraphs.reviews.subgraph.faults.set({ latencyMs: 200 });
    const stream = await openStream(stack.router.url, DEFERRED_PAGE, { variables: { id: '7' }, headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } });
    await stream.next();
    await stream.rest();
    await eventually(() => spans.getFinishedSpans().some((s) => s.spanContext().traceId === traceId && s.name === 'POST /graphql'), { what: 'the request span' });
    const trace = spans.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
    const request = trace.find((s) => s.name === 'POST /graphql')!;
    // Every reviews attempt (a hedge of the slow call among them, when the router sent one) is in the request's trace, below its span.
    const attempts = trace.filter((s) => s.name.startsWith('subgraph ') && s.attributes['switchyard.subgraph'] === 'reviews');
    expect(attempts.length).toBeGreaterThan(0);
    const byId = new Map(trace.map((s) => [s.spanContext().spanId, s]));
    for (const attempt of attempts) {
      let ancestor = byId.get(attempt.parentSpanContext!.spanId);
      while (ancestor && ancestor !== request) ancestor = ancestor.parentSpanContext ? byId.get(ancestor.parentSpanContext.spanId) : undefined;
      expect(ancestor).toBe(request);
    }
    // The attempt that answered ended before the request span, which waited for the last payload (an
    // abandoned hedge is cancelled as the answer goes out, and may end a moment after it).
    const answered = attempts.filter((s) => s.attributes['switchyard.outcome'] === 'ok');
    expect(answered).toHaveLength(1);
    const end = (s: typeof request) => BigInt(s.endTime[0]) * 1_000_000_000n + BigInt(s.endTime[1]);
    expect(end(request) >= end(answered[0])).toBe(true);
  });

  it('prunes a denied field inside a deferred part: FORBIDDEN in the payload that brings it', async () => {
    await grantPermission(stack.db, 'scope:reviews:read', 'Product.reviews');
    try {
      await eventually(() => stack.router.permissions.principalsFor('Product.reviews') !== undefined, { what: 'the rule to reach the router' });
      const stream = await openStream(stack.router.url, DEFERRED_PAGE, { variables: { id: '8' } });
      const first = await stream.next();
      expect(first!.errors).toBeUndefined();
      const [later] = await stream.rest();
      expect(later.incremental).toEqual([{ data: { reviews: null }, path: ['product'], label: 'reviews', errors: [expect.objectContaining({ path: ['product', 'reviews'], extensions: expect.objectContaining({ code: 'FORBIDDEN' }) })] }]);
      expect(later.extensions.completeness).toEqual({ complete: false, missing: [{ path: ['product', 'reviews'], code: 'FORBIDDEN' }] });
    } finally {
      await revokePermission(stack.db, 'scope:reviews:read', 'Product.reviews');
    }
  });

  it('runs a trusted @defer document by its id, streamed like any other', async () => {
    const enforce = await stack.startRouter({ trustedDocuments: 'enforce' });
    await publishTrustedDocuments(stack.db, { clientName: 'web', clientVersion: '3.0.0', documents: [{ id: 'deferred-page', body: DEFERRED_PAGE }] });
    const byId = async () => {
      const response = await fetch(enforce.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: APOLLO_ACCEPT }, body: JSON.stringify({ documentId: 'deferred-page', variables: { id: '9' } }) });
      return response;
    };
    await eventually(async () => (await byId()).status === 200, { what: 'the router to know the document' });
    const parts = (await meros<Payload>(await byId())) as AsyncGenerator<{ body: Payload }>;
    const payloads: Payload[] = [];
    for await (const part of parts) payloads.push(part.body);
    expect(payloads.map((p) => p.hasNext)).toEqual([true, false]);
    expect(payloads[1].incremental[0].data.reviews).toEqual(expect.any(Array));
  });

  it('refuses @defer where the incremental delivery RFC forbids it, with a typed error', async () => {
    const accept = 'multipart/mixed;deferSpec=20220824, application/graphql-response+json';
    const onMutationRoot = await postGraphQL(stack.router.url, 'mutation { ... @defer { __typename } }', { accept });
    expect(onMutationRoot.status).toBe(400);
    expect(onMutationRoot.body.errors?.[0].extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    const sameLabel = await postGraphQL(stack.router.url, '{ product(id: "1") { ... @defer(label: "a") { name } ... @defer(label: "a") { price } } }', { accept });
    expect(sameLabel.status).toBe(400);
    expect(sameLabel.body.errors?.[0].extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });

  describe('with the section cache on', () => {
    let cached: RunningRouter;
    beforeAll(async () => {
      cached = await stack.startRouter({ sectionCache: true });
    });
    afterEach(async () => {
      await removeCacheRule(stack.db, 'Product.reviews');
    });

    it('serves a stale copy inside a deferred part while reviews are down, labelled STALE in the last payload', async () => {
      await setCacheRule(stack.db, { coordinate: 'Product.reviews', maxAgeSeconds: 1 });
      const fresh = await postGraphQL(cached.url, DEFERRED_PAGE.replace('... @defer(label: "reviews")', '...'), { variables: { id: '6' } });
      stack.subgraphs.reviews.subgraph.faults.set({ mode: 'down' });
      let payloads: Payload[] = [];
      await eventually(
        async () => {
          const stream = await openStream(cached.url, DEFERRED_PAGE, { variables: { id: '6' } });
          payloads = [(await stream.next())!, ...(await stream.rest())];
          return payloads.at(-1)!.extensions.completeness.complete === false;
        },
        { what: 'the reviews part expiring while reviews are down', timeoutMs: 20_000 },
      );
      const [part] = payloads[1].incremental;
      expect(part.errors).toBeUndefined();
      expect(part.data.reviews).toEqual(fresh.body.data.product.reviews);
      expect(payloads.at(-1)!.extensions.completeness).toEqual({ complete: false, missing: [{ subgraph: 'reviews', code: 'STALE', ageMs: expect.any(Number) }] });
    });
  });

});
