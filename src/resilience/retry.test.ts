// Unit tests of query retries: what is retried, backoff, and the limits (count, budget, time left, abort).
import type { ExecutionResult } from 'graphql';
import { parse } from 'graphql';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RetryBudget } from './retry-budget.js';
import { withRetry, type RetryOptions } from './retry.js';
import { UpstreamFailure, type AttemptKind, type CallHandler, type SubgraphCall } from './subgraph-call.js';

const ok: ExecutionResult = { data: { product: { id: '1' } } };
const network = () => new UpstreamFailure('SUBGRAPH_UNAVAILABLE', 'network', 'connection refused');
const http = (status: number) => new UpstreamFailure(status >= 500 ? 'SUBGRAPH_UNAVAILABLE' : 'SUBGRAPH_ERROR', 'http', `HTTP ${status}`, status);
const timeout = () => new UpstreamFailure('SUBGRAPH_TIMEOUT', 'timeout', 'subgraph timed out');

function makeCall(overrides: Partial<SubgraphCall> = {}): SubgraphCall {
  return {
    subgraph: 'products',
    request: { document: parse('{ product(id: "1") { id } }') },
    isQuery: true,
    signal: new AbortController().signal,
    deadlineAt: 2_000,
    attempt: 'first',
    ...overrides,
  };
}

/** A handler that plays the given outcomes in order (the last one repeats) and records the attempts. */
function scripted(...outcomes: Array<ExecutionResult | Error>) {
  const attempts: AttemptKind[] = [];
  const handler: CallHandler = async (call) => {
    const outcome = outcomes[Math.min(attempts.length, outcomes.length - 1)];
    attempts.push(call.attempt);
    if (outcome instanceof Error) throw outcome;
    return outcome;
  };
  return { handler, attempts };
}

function setup(options: Partial<RetryOptions> = {}) {
  const clock = { ms: 0 };
  const budget = options.budget ?? new RetryBudget({ initialTokens: 10 });
  const sleeps: number[] = [];
  const onRetry = vi.fn<NonNullable<RetryOptions['onRetry']>>();
  const retry = withRetry({
    budget,
    typicalLatencyMs: () => 50,
    random: () => 0.5,
    now: () => clock.ms,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    onRetry,
    ...options,
  });
  return { clock, budget, sleeps, onRetry, retry };
}

describe('withRetry', () => {
  it('retries a query after a network failure, marking the attempt as a retry', async () => {
    const { retry, onRetry, sleeps } = setup();
    const failure = network();
    const { handler, attempts } = scripted(failure, ok);
    await expect(retry(handler)(makeCall())).resolves.toBe(ok);
    expect(attempts).toEqual(['first', 'retry']);
    expect(sleeps).toEqual([12.5]);
    expect(onRetry).toHaveBeenCalledOnce();
    expect(onRetry).toHaveBeenCalledWith(expect.objectContaining({ subgraph: 'products', attempt: 'retry' }), failure, 1);
  });

  it.each([
    ['502', http(502)],
    ['503', http(503)],
    ['504', http(504)],
    ['the subgraph timeout', timeout()],
  ])('retries %s', async (_, failure) => {
    const { handler, attempts } = scripted(failure, ok);
    await expect(setup().retry(handler)(makeCall())).resolves.toBe(ok);
    expect(attempts).toEqual(['first', 'retry']);
  });

  it.each([
    ['a 500', http(500)],
    ['a 400', http(400)],
    ['a passed deadline', new UpstreamFailure('DEADLINE_EXCEEDED', 'deadline', 'deadline passed')],
    ['a cancelled call', new UpstreamFailure('SUBGRAPH_UNAVAILABLE', 'cancelled', 'client went away')],
    ['an open circuit', new UpstreamFailure('CIRCUIT_OPEN', 'circuit_open', 'paused')],
    ['an error that is not an UpstreamFailure', new TypeError('bug')],
  ])('never retries %s', async (_, failure) => {
    const { retry, budget } = setup();
    const { handler, attempts } = scripted(failure, ok);
    await expect(retry(handler)(makeCall())).rejects.toBe(failure);
    expect(attempts).toEqual(['first']);
    expect(budget.tokens).toBe(10);
  });

  it('never retries a mutation, but counts it in the budget', async () => {
    const budget = new RetryBudget({ initialTokens: 0 });
    const { retry } = setup({ budget });
    const failure = network();
    const { handler, attempts } = scripted(failure, ok);
    await expect(retry(handler)(makeCall({ isQuery: false }))).rejects.toBe(failure);
    expect(attempts).toEqual(['first']);
    expect(budget.tokens).toBeCloseTo(0.1);
  });

  it('does not retry a result with GraphQL errors: it is an answer, not a failure', async () => {
    const withErrors: ExecutionResult = { data: null, errors: [] };
    const { handler, attempts } = scripted(withErrors, ok);
    await expect(setup().retry(handler)(makeCall())).resolves.toBe(withErrors);
    expect(attempts).toEqual(['first']);
  });

  it('gives up after maxRetries, with the last failure', async () => {
    const { retry, onRetry } = setup();
    const last = http(503);
    const { handler, attempts } = scripted(network(), timeout(), last);
    await expect(retry(handler)(makeCall())).rejects.toBe(last);
    expect(attempts).toEqual(['first', 'retry', 'retry']);
    expect(onRetry.mock.calls.map((call) => call[2])).toEqual([1, 2]);
  });

  it('backs off with full jitter under a doubling ceiling capped at maxDelayMs', async () => {
    const randoms = [0.5, 0.9, 0.1, 1, 0.5];
    const { retry, sleeps } = setup({ maxRetries: 5, random: () => randoms.shift()! });
    await expect(retry(scripted(network()).handler)(makeCall())).rejects.toMatchObject({ kind: 'network' });
    expect(sleeps).toEqual([0.5 * 25, 0.9 * 50, 0.1 * 100, 1 * 200, 0.5 * 250]);
  });

  it('takes a budget token per retry, and stops when the budget is empty', async () => {
    const budget = new RetryBudget({ initialTokens: 1 });
    const { retry } = setup({ budget });
    const { handler, attempts } = scripted(network());
    await expect(retry(handler)(makeCall())).rejects.toMatchObject({ kind: 'network' });
    expect(attempts).toEqual(['first', 'retry']);
    expect(budget.tokens).toBeCloseTo(0.1); // 1 + 0.1 deposited - 1 taken
  });

  it('retries only while the time left after the backoff exceeds the typical latency', async () => {
    // backoff 12.5 ms (random 0.5 of 25), typical latency 50 ms
    const tooLate = setup();
    tooLate.clock.ms = 2_000 - 62.5;
    const late = scripted(network(), ok);
    await expect(tooLate.retry(late.handler)(makeCall())).rejects.toMatchObject({ kind: 'network' });
    expect(late.attempts).toEqual(['first']);
    expect(tooLate.budget.tokens).toBe(10); // no token spent on a retry not made

    const inTime = setup();
    inTime.clock.ms = 2_000 - 63;
    const early = scripted(network(), ok);
    await expect(inTime.retry(early.handler)(makeCall())).resolves.toBe(ok);
  });

  it('needs more than baseDelayMs left after the backoff while the latency is unknown', async () => {
    const unknown = setup({ typicalLatencyMs: () => undefined });
    unknown.clock.ms = 2_000 - 37.5;
    const late = scripted(network(), ok);
    await expect(unknown.retry(late.handler)(makeCall())).rejects.toMatchObject({ kind: 'network' });
    unknown.clock.ms = 2_000 - 38;
    await expect(unknown.retry(scripted(network(), ok).handler)(makeCall())).resolves.toBe(ok);
  });

  it('measures the time left at each failure', async () => {
    const { retry, clock } = setup();
    let attempts = 0;
    const handler: CallHandler = async () => {
      attempts++;
      clock.ms += 1_000; // each attempt takes a second of the 2 s deadline
      throw timeout();
    };
    await expect(retry(handler)(makeCall())).rejects.toMatchObject({ kind: 'timeout' });
    expect(attempts).toBe(2);
  });

  it('does not retry once the call is aborted', async () => {
    const controller = new AbortController();
    const { retry } = setup();
    const failure = network();
    const handler: CallHandler = async () => {
      controller.abort();
      throw failure;
    };
    await expect(retry(handler)(makeCall({ signal: controller.signal }))).rejects.toBe(failure);
  });

  describe('backoff sleep', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('sleeps the backoff on a timer, then retries', async () => {
      vi.useFakeTimers();
      const { retry } = setup({ sleep: undefined, random: () => 1 });
      const { handler, attempts } = scripted(network(), ok);
      const result = retry(handler)(makeCall());
      await vi.advanceTimersByTimeAsync(24);
      expect(attempts).toEqual(['first']);
      await vi.advanceTimersByTimeAsync(1);
      await expect(result).resolves.toBe(ok);
      expect(attempts).toEqual(['first', 'retry']);
      expect(vi.getTimerCount()).toBe(0);
    });

    it('stops when the call aborts during the sleep, with the last failure and no timer left', async () => {
      vi.useFakeTimers();
      const controller = new AbortController();
      const { retry, onRetry } = setup({ sleep: undefined, random: () => 1 });
      const failure = network();
      const { handler, attempts } = scripted(failure, ok);
      const result = retry(handler)(makeCall({ signal: controller.signal }));
      const settled = result.catch((error: unknown) => error);
      await vi.advanceTimersByTimeAsync(10);
      expect(vi.getTimerCount()).toBe(1);
      controller.abort(new Error('client went away'));
      expect(await settled).toBe(failure);
      expect(vi.getTimerCount()).toBe(0);
      expect(attempts).toEqual(['first']);
      expect(onRetry).not.toHaveBeenCalled();
    });
  });

  it('rejects impossible options', () => {
    const budget = new RetryBudget();
    expect(() => withRetry({ budget, typicalLatencyMs: () => undefined, maxRetries: -1 })).toThrow(RangeError);
    expect(() => withRetry({ budget, typicalLatencyMs: () => undefined, baseDelayMs: -1 })).toThrow(RangeError);
  });
});
