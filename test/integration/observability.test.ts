// What ops see of one request: its trace (parallel subgraph spans, traceparent sent on), its metrics, its log lines.
import { PassThrough } from 'node:stream';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_FAULT_SETTINGS } from '../../subgraphs/index.js';
import { queryAudit } from '../../src/registry/audit-store.js';
import { createLogger } from '../../src/telemetry/logger.js';
import { databaseKind } from '../helpers/database.js';
import { eventually } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/stack.js';

const PAGE = 'query ProductPage($id: ID!) { product(id: $id) { id name reviews { rating } inventory { inStock } } }';
const CALLER_TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN_ID = '00f067aa0ba902b7';

const attr = (span: ReadableSpan, name: string) => span.attributes[name];
const startMs = (span: ReadableSpan) => span.startTime[0] * 1e3 + span.startTime[1] / 1e6;
const endMs = (span: ReadableSpan) => span.endTime[0] * 1e3 + span.endTime[1] / 1e6;

describe(`observability (${databaseKind} database)`, () => {
  let stack: Stack;
  const spans = new InMemorySpanExporter();
  const logLines: Record<string, any>[] = [];
  beforeAll(async () => {
    const destination = new PassThrough();
    destination.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) logLines.push(JSON.parse(line));
    });
    stack = await startStack({ routerOptions: { spanExporter: spans, logger: createLogger({ level: 'info', destination }) } });
  });
  afterAll(async () => {
    await stack?.close();
  });
  beforeEach(() => {
    spans.reset();
    for (const { subgraph } of Object.values(stack.subgraphs)) subgraph.stats.reset();
  });
  afterEach(() => {
    for (const { subgraph } of Object.values(stack.subgraphs)) subgraph.faults.set(DEFAULT_FAULT_SETTINGS);
  });

  /** The finished spans of one trace, once the request span has ended. */
  async function traceOf(traceId: string): Promise<ReadableSpan[]> {
    await eventually(() => spans.getFinishedSpans().some((s) => s.spanContext().traceId === traceId && s.name === 'POST /graphql'), { what: 'the request span' });
    return spans.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
  }

  describe('tracing', () => {
    it('continues the caller trace: one request span, the GraphQL phases, and parallel subgraph spans whose context the subgraphs receive', async () => {
      const { status, headers } = await stack.query(PAGE, { variables: { id: '7' }, headers: { traceparent: `00-${CALLER_TRACE_ID}-${CALLER_SPAN_ID}-01` } });
      expect(status).toBe(200);
      const trace = await traceOf(CALLER_TRACE_ID);

      const request = trace.find((s) => s.name === 'POST /graphql')!;
      expect(request.parentSpanContext?.spanId).toBe(CALLER_SPAN_ID);
      expect(attr(request, 'http.response.status_code')).toBe(200);
      expect(attr(request, 'graphql.operation.name')).toBe('ProductPage');
      expect(attr(request, 'switchyard.request_id')).toBe(headers.get('x-request-id'));
      const execute = trace.find((s) => s.name === 'query.ProductPage')!;
      expect(execute.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
      for (const phase of ['graphql.parse', 'graphql.validate']) {
        expect(trace.find((s) => s.name === phase)?.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
      }

      const calls = trace.filter((s) => s.name.startsWith('subgraph '));
      expect(calls.map((s) => attr(s, 'switchyard.subgraph')).sort()).toEqual(['inventory', 'product', 'reviews']);
      for (const call of calls) {
        expect(call.parentSpanContext?.spanId).toBe(execute.spanContext().spanId);
        expect(call.attributes).toMatchObject({ 'switchyard.attempt': 'first', 'switchyard.outcome': 'ok', 'graphql.operation.name': 'ProductPage', 'switchyard.cache.hit': false });
      }
      // The fan-out: reviews and inventory both wait only for product, and run side by side.
      const [product, reviews, inventory] = ['product', 'reviews', 'inventory'].map((name) => calls.find((s) => attr(s, 'switchyard.subgraph') === name)!);
      expect(startMs(reviews!)).toBeGreaterThanOrEqual(endMs(product!));
      expect(startMs(inventory!)).toBeGreaterThanOrEqual(endMs(product!));
      expect(startMs(reviews!)).toBeLessThan(endMs(inventory!));
      expect(startMs(inventory!)).toBeLessThan(endMs(reviews!));

      // Each subgraph was called under its own span: the traceparent it got names the request's trace and that span.
      for (const call of calls) {
        const received = stack.subgraphs[attr(call, 'switchyard.subgraph') as 'product'].subgraph.stats.snapshot().traceparents;
        expect(received).toEqual([`00-${CALLER_TRACE_ID}-${call.spanContext().spanId}-01`]);
      }
    });

    it('starts a new trace when the caller sends none, and the access log line carries its id', async () => {
      const { headers } = await stack.query(PAGE, { variables: { id: '8' }, headers: { 'x-request-id': 'page-8-request' } });
      expect(headers.get('x-request-id')).toBe('page-8-request');
      await eventually(() => logLines.some((l) => l.requestId === 'page-8-request'), { what: 'the access line' });
      const line = logLines.find((l) => l.requestId === 'page-8-request')!;
      expect(line).toMatchObject({ msg: 'request', operation: 'ProductPage', status: 200, complete: true });
      expect(line.subgraphs.sort()).toEqual(['inventory', 'product', 'reviews']);
      const trace = await traceOf(line.traceId);
      expect(trace.find((s) => s.name === 'POST /graphql')?.parentSpanContext).toBeUndefined();
      expect(stack.subgraphs.product.subgraph.stats.snapshot().traceparents[0]).toContain(line.traceId);
    });

    it('shows a retry as its own span after the failed first attempt', async () => {
      stack.subgraphs.reviews.subgraph.faults.set({ errorRate: 1, errorStatus: 503 });
      const { body } = await stack.query('query OneReview { review(id: "r-1") { id } }', { headers: { traceparent: `00-${'a'.repeat(32)}-${CALLER_SPAN_ID}-01` } });
      expect(body.errors?.[0]?.extensions?.code).toBe('SUBGRAPH_UNAVAILABLE');
      const calls = (await traceOf('a'.repeat(32))).filter((s) => s.name === 'subgraph reviews').sort((a, b) => startMs(a) - startMs(b));
      expect(calls.length).toBeGreaterThanOrEqual(2);
      expect(calls.map((s) => attr(s, 'switchyard.attempt'))).toEqual(['first', ...Array(calls.length - 1).fill('retry')]);
      for (const call of calls) {
        expect(call.attributes).toMatchObject({ 'switchyard.outcome': 'http_error', 'switchyard.error.code': 'SUBGRAPH_UNAVAILABLE' });
        expect(call.status.code).toBe(2); // SpanStatusCode.ERROR
      }
      // Every attempt reached the subgraph with its own span id.
      const received = stack.subgraphs.reviews.subgraph.stats.snapshot().traceparents;
      expect(received).toEqual(calls.map((s) => `00-${'a'.repeat(32)}-${s.spanContext().spanId}-01`));
    });

    it('shows a hedge as its own span racing the slow first attempt', async () => {
      await stack.publishRoute('inventory', { hedge: { enabled: true, floorMs: 50 }, retry: { enabled: false } });
      try {
        // Hedging waits for a latency history (its delay is the subgraph's p95): fast pages first.
        for (let i = 0; i < 70; i += 1) await stack.query(PAGE, { variables: { id: String(100 + i) } });
        stack.subgraphs.inventory.subgraph.faults.set({ slowRate: 1, slowMs: 400 });
        const traceId = 'b'.repeat(32);
        const { headers } = await stack.query(PAGE, { variables: { id: '9' }, headers: { traceparent: `00-${traceId}-${CALLER_SPAN_ID}-01` } });
        expect(headers.get('switchyard-completed')).toBe('true');
        const calls = (await traceOf(traceId)).filter((s) => s.name === 'subgraph inventory');
        const first = calls.find((s) => attr(s, 'switchyard.attempt') === 'first')!;
        const hedge = calls.find((s) => attr(s, 'switchyard.attempt') === 'hedge')!;
        expect(first).toBeDefined();
        expect(hedge).toBeDefined();
        // The hedge started while the first attempt was still waiting; one of them won, the other was cancelled.
        expect(startMs(hedge)).toBeGreaterThan(startMs(first));
        expect(startMs(hedge)).toBeLessThan(endMs(first));
        expect([attr(first, 'switchyard.outcome'), attr(hedge, 'switchyard.outcome')].sort()).toEqual(['cancelled', 'ok']);
      } finally {
        await stack.publishRoute('inventory', {});
      }
    });
  });

  describe('metrics and logs', () => {
    it('count a partial response by operation and by missing section, and log it as incomplete', async () => {
      const labels = { operation: 'ProductPage' };
      const before = {
        partial: await stack.metric('switchyard_partial_responses_total', labels),
        missing: await stack.metric('switchyard_missing_sections_total', { subgraph: 'reviews', code: 'SUBGRAPH_UNAVAILABLE' }),
        requests: await stack.metric('switchyard_requests_total', { operation: 'ProductPage', status: '200' }),
        failed: await stack.metric('switchyard_subgraph_requests_total', { subgraph: 'reviews', outcome: 'network_error' }),
      };
      stack.subgraphs.reviews.subgraph.faults.set({ mode: 'down' });
      const { body, headers } = await stack.query(PAGE, { variables: { id: '10' } });
      expect(body.extensions?.completeness.complete).toBe(false);
      expect(await stack.metric('switchyard_partial_responses_total', labels)).toBe(before.partial + 1);
      expect(await stack.metric('switchyard_missing_sections_total', { subgraph: 'reviews', code: 'SUBGRAPH_UNAVAILABLE' })).toBe(before.missing + 1);
      expect(await stack.metric('switchyard_requests_total', { operation: 'ProductPage', status: '200' })).toBe(before.requests + 1);
      expect(await stack.metric('switchyard_subgraph_requests_total', { subgraph: 'reviews', outcome: 'network_error' })).toBeGreaterThan(before.failed);

      const requestId = headers.get('x-request-id');
      await eventually(() => logLines.some((l) => l.requestId === requestId), { what: 'the access line' });
      expect(logLines.find((l) => l.requestId === requestId)).toMatchObject({ status: 200, complete: false, errorCodes: ['SUBGRAPH_UNAVAILABLE'] });
      // The failed attempt's span says why.
      const trace = await traceOf(logLines.find((l) => l.requestId === requestId)!.traceId);
      expect(trace.find((s) => s.name === 'subgraph reviews')?.attributes).toMatchObject({ 'switchyard.outcome': 'network_error', 'switchyard.error.code': 'SUBGRAPH_UNAVAILABLE' });
      expect(trace.find((s) => s.name === 'POST /graphql')?.attributes['switchyard.complete']).toBe(false);
    });

    it('count cache look-ups: per-subgraph tokens are reused, not minted per call', async () => {
      const look = async () => ({
        hits: await stack.metric('switchyard_token_cache_requests_total', { cache: 'subgraph_token', result: 'hit' }),
        misses: await stack.metric('switchyard_token_cache_requests_total', { cache: 'subgraph_token', result: 'miss' }),
      });
      const before = await look();
      await stack.query(PAGE, { variables: { id: '12' } });
      await stack.query(PAGE, { variables: { id: '13' } });
      const after = await look();
      // Six subgraph calls, each needing a token: the anonymous caller's three tokens are minted at most once.
      expect(after.hits - before.hits + (after.misses - before.misses)).toBe(6);
      expect(after.hits - before.hits).toBeGreaterThanOrEqual(3);
    });

    it('logs a refused request with its status, and never the token it carried', async () => {
      const token = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJtYWxsb3J5In0.c2VjcmV0LXNpZ25hdHVyZQ';
      const { status, headers } = await stack.query(PAGE, { variables: { id: '11' }, headers: { authorization: `Bearer ${token}` } });
      expect(status).toBe(401);
      const requestId = headers.get('x-request-id');
      await eventually(() => logLines.some((l) => l.requestId === requestId), { what: 'the access line' });
      expect(logLines.find((l) => l.requestId === requestId)).toMatchObject({ status: 401, complete: false, errorCodes: ['UNAUTHENTICATED'] });
      expect(JSON.stringify(logLines)).not.toContain('c2VjcmV0LXNpZ25hdHVyZQ');
    });

    it('folds unknown operation names into one label value past the cardinality cap', async () => {
      // The cap is 200 names (unnamed operations have their own value); send 210 distinct ones.
      for (let i = 0; i < 210; i += 1) await stack.query(`query Screen${i} { __typename }`);
      const text = await (await fetch(stack.router.url.replace(/\/graphql$/, '/metrics'))).text();
      const operations = new Set([...text.matchAll(/^switchyard_requests_total\{operation="([^"]+)"/gm)].map((m) => m[1]));
      expect([...operations].filter((name) => !name!.startsWith('('))).toHaveLength(200);
      expect(operations.has('(other)')).toBe(true);
      expect(operations.has('Screen209')).toBe(false);
    });
  });

  describe('with trace export off (no collector)', () => {
    let quiet: Stack;
    const lines: Record<string, any>[] = [];
    /** Resolves with the access line of a request id once the logger has written it. */
    const accessLine = (requestId: string) => eventually(() => lines.some((l) => l.requestId === requestId), { what: 'the access line' }).then(() => lines.find((l) => l.requestId === requestId)!);
    beforeAll(async () => {
      const destination = new PassThrough();
      destination.on('data', (chunk: Buffer) => {
        for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(JSON.parse(line));
      });
      quiet = await startStack({ routerOptions: { logger: createLogger({ level: 'info', destination }) } });
    });
    afterAll(async () => {
      await quiet?.close();
    });
    beforeEach(() => {
      for (const { subgraph } of Object.values(quiet.subgraphs)) subgraph.stats.reset();
    });

    it('still sends every subgraph a traceparent: a new trace, not sampled, whose id the access line and the audit row carry', async () => {
      const since = new Date();
      const { status } = await quiet.query(PAGE, { variables: { id: '4' }, headers: { 'x-request-id': 'untraced-page' } });
      expect(status).toBe(200);
      const { traceId } = await accessLine('untraced-page');
      expect(traceId).toMatch(/^[0-9a-f]{32}$/);
      for (const name of ['product', 'reviews', 'inventory'] as const) {
        expect(quiet.subgraphs[name].subgraph.stats.snapshot().traceparents).toEqual([expect.stringMatching(new RegExp(`^00-${traceId}-[0-9a-f]{16}-00$`))]);
      }
      await eventually(async () => (await queryAudit(quiet.db, { since })).some((row) => row.requestId === 'untraced-page'), { what: 'the audit row' });
      expect((await queryAudit(quiet.db, { since })).find((row) => row.requestId === 'untraced-page')?.traceId).toBe(traceId);
    });

    it("forwards a caller's traceparent unchanged, and makes a new trace for an invalid one", async () => {
      const caller = `00-${CALLER_TRACE_ID}-${CALLER_SPAN_ID}-01`;
      await quiet.query(PAGE, { variables: { id: '5' }, headers: { traceparent: caller, 'x-request-id': 'caller-traced' } });
      expect((await accessLine('caller-traced')).traceId).toBe(CALLER_TRACE_ID);
      expect(quiet.subgraphs.product.subgraph.stats.snapshot().traceparents).toEqual([caller]);
      quiet.subgraphs.product.subgraph.stats.reset();
      await quiet.query(PAGE, { variables: { id: '5' }, headers: { traceparent: `00-${'0'.repeat(32)}-${CALLER_SPAN_ID}-01`, 'x-request-id': 'zero-trace' } });
      const { traceId } = await accessLine('zero-trace');
      expect(traceId).toMatch(/^(?!0{32})[0-9a-f]{32}$/);
      expect(quiet.subgraphs.product.subgraph.stats.snapshot().traceparents[0]).toMatch(new RegExp(`^00-${traceId}-`));
    });
  });

  describe('with a collector that cannot be reached', () => {
    let unreachable: Stack;
    beforeAll(async () => {
      // Nothing listens on port 9: every export fails.
      unreachable = await startStack({ config: { otlpEndpoint: 'http://127.0.0.1:9' } });
    });
    afterAll(async () => {
      await unreachable?.close();
    });

    it('answers every request as usual and still shuts down', async () => {
      const pages = await Promise.all(Array.from({ length: 20 }, (_, i) => unreachable.query(PAGE, { variables: { id: String(i + 1) } })));
      for (const { status, headers } of pages) {
        expect(status).toBe(200);
        expect(headers.get('switchyard-completed')).toBe('true');
      }
    });
  });
});
