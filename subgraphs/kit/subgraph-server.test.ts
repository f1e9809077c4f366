// HTTP behaviour shared by every demo subgraph: health, admin endpoints, each fault mode, env knobs, close().
import { afterEach, describe, expect, it } from 'vitest';
import { createProductSubgraph } from '../product/index.js';
import { DEFAULT_FAULT_SETTINGS } from './fault-switch.js';
import { baseUrl, createServerPool, postGraphql, readStats, waitForStats } from './test-client.js';

const PRODUCT_QUERY = /* GraphQL */ `query { product(id: "1") { id name } }`;

const pool = createServerPool();
afterEach(() => pool.closeAll());

async function postFaults(url: string, body: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${url}/admin/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}

describe('subgraph server routes', () => {
  it('answers /healthz with ok and unknown paths with 404', async () => {
    const running = await pool.start(createProductSubgraph({ env: {} }));
    const health = await fetch(`${baseUrl(running)}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.text()).toBe('ok');
    expect((await fetch(`${baseUrl(running)}/nowhere`)).status).toBe(404);
    expect((await fetch(`${baseUrl(running)}/admin/nowhere`)).status).toBe(404);
    expect((await fetch(`${baseUrl(running)}/admin/faults`, { method: 'DELETE' })).status).toBe(405);
  });

  it('serves again after close() and listen() on the same port, even to a poll sent right after', async () => {
    const subgraph = createProductSubgraph({ env: {} });
    let running = await subgraph.listen(0);
    try {
      for (let round = 0; round < 5; round++) {
        expect((await fetch(`${baseUrl(running)}/healthz`)).status).toBe(200);
        expect((await fetch(`${baseUrl(running)}/admin/faults`)).status).toBe(200);
        await running.close();
        running = await subgraph.listen(running.port);
        // Admin and health answers close their connection, so no pooled socket of the old server is reused here.
        expect((await readStats(running)).requests).toBeGreaterThan(0);
      }
    } finally {
      await running.close();
    }
  });

  it('reports a URL on loopback with the ephemeral port', async () => {
    const running = await pool.start(createProductSubgraph({ env: {} }));
    expect(running.port).toBeGreaterThan(0);
    expect(running.url).toBe(`http://127.0.0.1:${running.port}/graphql`);
    expect(running.name).toBe('product');
  });
});

describe('admin: fault switch', () => {
  it('reads and changes the settings partially, answering the full state', async () => {
    const subgraph = createProductSubgraph({ env: {} });
    const running = await pool.start(subgraph);
    const base = baseUrl(running);
    expect(await (await fetch(`${base}/admin/faults`)).json()).toEqual({ ...DEFAULT_FAULT_SETTINGS, latencyMs: 0, jitterMs: 0, errorRate: 0, mode: 'ok' });
    const changed = await postFaults(base, { latencyMs: 5, errorRate: 0.5 });
    expect(changed).toEqual({ status: 200, body: { ...DEFAULT_FAULT_SETTINGS, latencyMs: 5, errorRate: 0.5 } });
    expect(subgraph.faults.get()).toEqual(changed.body);
  });

  it.each([
    ['a negative latency', { latencyMs: -5 }],
    ['a rate above 1', { errorRate: 1.5 }],
    ['an unknown mode', { mode: 'sleep' }],
    ['an unknown key', { latency: 5 }],
    ['a string number', { latencyMs: '5' }],
    ['a list', [1]],
    ['valid and invalid knobs together', { mode: 'error', errorRate: -1 }],
  ])('answers 400 and changes nothing for %s', async (_, body) => {
    const subgraph = createProductSubgraph({ env: {}, faults: { latencyMs: 1 } });
    const running = await pool.start(subgraph);
    const before = subgraph.faults.get();
    const answer = await postFaults(baseUrl(running), body);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toEqual(expect.any(String));
    expect(subgraph.faults.get()).toBe(before);
  });

  it('answers 400 for a body that is not JSON', async () => {
    const running = await pool.start(createProductSubgraph({ env: {} }));
    const response = await fetch(`${baseUrl(running)}/admin/faults`, { method: 'POST', body: '{mode: error' });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: 'body is not valid JSON' });
  });
});

describe('admin: stats', () => {
  it('counts requests, GraphQL requests and data-source calls, keeps the traceparent it got, and resets them', async () => {
    const running = await pool.start(createProductSubgraph({ env: {} }));
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    await postGraphql(running.url, PRODUCT_QUERY, undefined, {
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', traceparent },
    });
    await fetch(`${baseUrl(running)}/healthz`);
    expect(await readStats(running)).toEqual({
      requests: 3, // the query, the health check and this read
      graphqlRequests: 1,
      entityRequests: 0,
      dataSourceCalls: { productsById: 1 },
      aborted: 0,
      unauthorized: 0,
      inFlight: 0,
      traceparents: [traceparent],
      subscriptions: { open: 0, connections: 0, started: 0, events: 0 },
    });
    const reset = await fetch(`${baseUrl(running)}/admin/stats/reset`, { method: 'POST' });
    expect(await reset.json()).toEqual({
      requests: 0,
      graphqlRequests: 0,
      entityRequests: 0,
      dataSourceCalls: { productsById: 0 },
      aborted: 0,
      unauthorized: 0,
      inFlight: 0,
      traceparents: [],
      subscriptions: { open: 0, connections: 0, started: 0, events: 0 },
    });
  });
});

describe('fault modes', () => {
  it('ok: answers normally', async () => {
    const running = await pool.start(createProductSubgraph({ env: {} }));
    const answer = await postGraphql(running.url, PRODUCT_QUERY);
    expect(answer.status).toBe(200);
    expect(answer.body.data?.product.id).toBe('1');
  });

  it('error: every request answers 200 with an INJECTED_FAULT GraphQL error', async () => {
    const subgraph = createProductSubgraph({ env: {}, faults: { mode: 'error' } });
    const running = await pool.start(subgraph);
    for (let i = 0; i < 3; i++) {
      const answer = await postGraphql(running.url, PRODUCT_QUERY);
      expect(answer).toEqual({
        status: 200,
        body: { data: null, errors: [{ message: 'product subgraph failed (injected fault)', extensions: { code: 'INJECTED_FAULT' } }] },
      });
    }
    expect(subgraph.stats.dataSourceCalls.productsById).toBe(0);
  });

  it('errorRate: fails that fraction of requests (all at 1, none at 0)', async () => {
    const subgraph = createProductSubgraph({ env: {}, faults: { errorRate: 1 } });
    const running = await pool.start(subgraph);
    expect((await postGraphql(running.url, PRODUCT_QUERY)).body.errors?.[0].extensions?.code).toBe('INJECTED_FAULT');
    subgraph.faults.set({ errorRate: 0 });
    expect((await postGraphql(running.url, PRODUCT_QUERY)).body.errors).toBeUndefined();
  });

  it('errorStatus: an injected failure answers a bare 5xx without a GraphQL body', async () => {
    const subgraph = createProductSubgraph({ env: {}, faults: { errorRate: 1, errorStatus: 503 } });
    const running = await pool.start(subgraph);
    const response = await fetch(running.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: PRODUCT_QUERY }) });
    expect(response.status).toBe(503);
    expect(await response.text()).toBe('product subgraph: injected HTTP 503');
    expect(subgraph.stats.dataSourceCalls.productsById).toBe(0);
  });

  it('slowRate: delays that fraction of requests by slowMs, the others not at all', async () => {
    const running = await pool.start(createProductSubgraph({ env: {}, faults: { slowRate: 1, slowMs: 150 } }));
    const started = performance.now();
    await postGraphql(running.url, PRODUCT_QUERY);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('errorRate: a fraction in between fails some requests but not all', async () => {
    const subgraph = createProductSubgraph({ env: {}, faults: { errorRate: 0.5 } });
    const running = await pool.start(subgraph);
    const answers = await Promise.all(Array.from({ length: 60 }, () => postGraphql(running.url, PRODUCT_QUERY)));
    const failed = answers.filter((answer) => answer.body.errors !== undefined).length;
    // Binomial(60, 0.5): outside 10..50 with probability below 1e-6.
    expect(failed).toBeGreaterThan(10);
    expect(failed).toBeLessThan(50);
  });

  it('latency: delays the answer by latencyMs (plus jitter)', async () => {
    const running = await pool.start(createProductSubgraph({ env: {}, faults: { latencyMs: 120, jitterMs: 30 } }));
    const started = performance.now();
    const answer = await postGraphql(running.url, PRODUCT_QUERY);
    const elapsed = performance.now() - started;
    expect(answer.body.data?.product.id).toBe('1');
    expect(elapsed).toBeGreaterThanOrEqual(115);
  });

  it('latency: never applies to /admin or /healthz', async () => {
    const running = await pool.start(createProductSubgraph({ env: {}, faults: { latencyMs: 60_000, mode: 'hang' } }));
    const started = performance.now();
    expect((await fetch(`${baseUrl(running)}/healthz`)).status).toBe(200);
    expect((await fetch(`${baseUrl(running)}/admin/faults`)).status).toBe(200);
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('latency: a client that gives up while waiting counts as aborted and frees the slot', async () => {
    const running = await pool.start(createProductSubgraph({ env: {}, faults: { latencyMs: 60_000 } }));
    const controller = new AbortController();
    const call = postGraphql(running.url, PRODUCT_QUERY, undefined, { signal: controller.signal });
    await waitForStats(running, (stats) => stats.inFlight === 1);
    controller.abort();
    await expect(call).rejects.toThrow();
    expect(await waitForStats(running, (stats) => stats.aborted === 1)).toMatchObject({ aborted: 1, inFlight: 0 });
  });

  it('down: destroys the connection without any HTTP response', async () => {
    const subgraph = createProductSubgraph({ env: {}, faults: { mode: 'down' } });
    const running = await pool.start(subgraph);
    await expect(postGraphql(running.url, PRODUCT_QUERY)).rejects.toThrow(/fetch failed/);
    expect(await readStats(running)).toMatchObject({ graphqlRequests: 1, aborted: 0, inFlight: 0 });
    subgraph.faults.set({ mode: 'ok' });
    expect((await postGraphql(running.url, PRODUCT_QUERY)).status).toBe(200);
  });

  it('hang: never answers; the client aborting counts in stats.aborted', async () => {
    const running = await pool.start(createProductSubgraph({ env: {}, faults: { mode: 'hang' } }));
    const controller = new AbortController();
    const call = postGraphql(running.url, PRODUCT_QUERY, undefined, { signal: controller.signal });
    await waitForStats(running, (stats) => stats.inFlight === 1);
    controller.abort();
    await expect(call).rejects.toThrow(/abort/i);
    expect(await waitForStats(running, (stats) => stats.aborted === 1)).toMatchObject({ aborted: 1, inFlight: 0 });
  });

  it('hang: close() releases hanging requests and pending latency timers', async () => {
    const subgraph = createProductSubgraph({ env: {}, faults: { mode: 'hang' } });
    const running = await subgraph.listen(0);
    const hanging = postGraphql(running.url, PRODUCT_QUERY);
    await waitForStats(running, (stats) => stats.inFlight === 1);
    subgraph.faults.set({ mode: 'ok', latencyMs: 60_000 });
    const waiting = postGraphql(running.url, PRODUCT_QUERY);
    await waitForStats(running, (stats) => stats.inFlight === 2);
    // Handled before close(): the calls may fail while close() is still settling.
    const failed = [expect(hanging).rejects.toThrow(), expect(waiting).rejects.toThrow()];
    await running.close();
    await Promise.all(failed);
    // Closed by us, not given up by the client: not counted as aborted.
    expect(subgraph.stats).toMatchObject({ inFlight: 0, aborted: 0 });
    await running.close();
  });

  it('switches mode at run time through POST /admin/faults', async () => {
    const running = await pool.start(createProductSubgraph({ env: {} }));
    await postFaults(baseUrl(running), { mode: 'error' });
    expect((await postGraphql(running.url, PRODUCT_QUERY)).body.errors?.[0].message).toBe('product subgraph failed (injected fault)');
    await postFaults(baseUrl(running), { mode: 'ok' });
    expect((await postGraphql(running.url, PRODUCT_QUERY)).body.data?.product.id).toBe('1');
  });
});

describe('fault settings at start', () => {
  it('reads the FAULT_* environment variables', () => {
    const subgraph = createProductSubgraph({ env: { FAULT_LATENCY_MS: '80', FAULT_JITTER_MS: '5', FAULT_ERROR_RATE: '0.1', FAULT_MODE: 'hang' } });
    expect(subgraph.faults.get()).toEqual({ ...DEFAULT_FAULT_SETTINGS, latencyMs: 80, jitterMs: 5, errorRate: 0.1, mode: 'hang' });
  });

  it('lets the faults option win over the environment', () => {
    const subgraph = createProductSubgraph({ env: { FAULT_LATENCY_MS: '80', FAULT_MODE: 'error' }, faults: { mode: 'ok' } });
    expect(subgraph.faults.get()).toEqual({ ...DEFAULT_FAULT_SETTINGS, latencyMs: 80, jitterMs: 0, errorRate: 0, mode: 'ok' });
  });

  it('throws at start on a bad environment value, naming the variable', () => {
    expect(() => createProductSubgraph({ env: { FAULT_MODE: 'flaky' } })).toThrow(/FAULT_MODE must be one of ok, error, down, hang \(got "flaky"\)/);
    expect(() => createProductSubgraph({ env: { FAULT_LATENCY_MS: '-3' } })).toThrow(/FAULT_LATENCY_MS/);
  });

  it('throws at start on a bad faults option', () => {
    expect(() => createProductSubgraph({ env: {}, faults: { errorRate: 3 } })).toThrow(/errorRate must be a number from 0 to 1/);
  });
});

describe('authentication hook', () => {
  it('lets a request through on true and answers the given status otherwise', async () => {
    let verdict: boolean | { status: number; message: string } = true;
    const running = await pool.start(createProductSubgraph({ env: {}, authenticate: async () => verdict }));
    expect((await postGraphql(running.url, PRODUCT_QUERY)).body.data?.product.id).toBe('1');
    verdict = false;
    expect(await postGraphql(running.url, PRODUCT_QUERY)).toMatchObject({ status: 401, body: { errors: [{ extensions: { code: 'UNAUTHENTICATED' } }] } });
    verdict = { status: 403, message: 'token is for another subgraph' };
    expect(await postGraphql(running.url, PRODUCT_QUERY)).toMatchObject({
      status: 403,
      body: { errors: [{ message: 'token is for another subgraph', extensions: { code: 'FORBIDDEN' } }] },
    });
  });
});
