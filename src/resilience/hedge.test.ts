// Unit tests of hedged queries: when a backup starts, who wins, what is aborted, and that nothing is left behind.
import { getEventListeners } from 'node:events';
import type { ExecutionResult } from 'graphql';
import { parse } from 'graphql';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { withHedging, type HedgingOptions } from './hedge.js';
import { RetryBudget } from './retry-budget.js';
import { withTimeout } from './timeout.js';
import { CallAborted, UpstreamFailure, type CallHandler, type SubgraphCall } from './subgraph-call.js';

const fast: ExecutionResult = { data: { product: { id: '1', by: 'first' } } };
const backup: ExecutionResult = { data: { product: { id: '1', by: 'hedge' } } };
const network = () => new UpstreamFailure('SUBGRAPH_UNAVAILABLE', 'network', 'connection refused');
const cancelled = () => new UpstreamFailure('SUBGRAPH_UNAVAILABLE', 'cancelled', 'aborted');

interface Attempt {
  call: SubgraphCall;
  resolve: (result: ExecutionResult) => void;
  reject: (error: unknown) => void;
}

/** A handler whose attempts stay pending until the test settles them. */
function controllable() {
  const attempts: Attempt[] = [];
  const handler: CallHandler = (call) => new Promise((resolve, reject) => attempts.push({ call, resolve, reject }));
  return { handler, attempts };
}

function makeCall(overrides: Partial<SubgraphCall> = {}): SubgraphCall {
  return {
    subgraph: 'products',
    request: { document: parse('{ product(id: "1") { id } }') },
    isQuery: true,
    signal: new AbortController().signal,
    deadlineAt: Date.now() + 2_000,
    attempt: 'first',
    ...overrides,
  };
}

/**
 * The hedge straight on a controllable handler, so it aborts each attempt through a controller of its
 * own (`abortVia: 'controller'`) that the test can read; the executor's stack is tested at the end.
 */
function setup(options: Partial<HedgingOptions> = {}) {
  const extra = options.extra ?? new RetryBudget({ initialTokens: 5 });
  const hedges = options.hedges ?? new RetryBudget({ ratio: 0.05, initialTokens: 5 });
  const onHedge = vi.fn<(call: SubgraphCall) => void>();
  const { handler, attempts } = controllable();
  const hedged = withHedging({ delayMs: () => 100, extra, hedges, now: () => Date.now(), onHedge, abortVia: 'controller', ...options })(handler);
  return { extra, hedges, onHedge, attempts, hedged };
}

/** Lets pending promise callbacks run without moving the clock. */
const flush = () => vi.advanceTimersByTimeAsync(0);

describe('withHedging', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('starts a backup only once the delay has passed', async () => {
    const { attempts, hedged, onHedge } = setup();
    void hedged(makeCall());
    await vi.advanceTimersByTimeAsync(99);
    expect(attempts).toHaveLength(1);
    expect(onHedge).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(attempts.map((a) => a.call.attempt)).toEqual(['first', 'hedge']);
    expect(onHedge).toHaveBeenCalledWith(attempts[1].call);
    expect(attempts[1].call.signal).not.toBe(attempts[0].call.signal);
  });

  it('starts no backup when its timer fires late: the delay was the event loop\'s, not the subgraph\'s', async () => {
    let clock = 0;
    const onBusy = vi.fn<(call: SubgraphCall) => void>();
    const { attempts, hedged, onHedge, extra, hedges } = setup({ now: () => clock, onBusy });
    void hedged(makeCall({ deadlineAt: 2_000 }));
    // The 100 ms timer runs only after the loop was blocked for 60 ms more (over max(5, 100 / 4)).
    clock = 160;
    await vi.advanceTimersByTimeAsync(100);
    expect(attempts).toHaveLength(1);
    expect(onHedge).not.toHaveBeenCalled();
    expect(onBusy).toHaveBeenCalledTimes(1);
    expect([extra.tokens, hedges.tokens]).toEqual([5, 5 + 0.05]);
    // A timer that fires on time (a little lateness is normal) still hedges.
    clock = 0;
    void hedged(makeCall({ deadlineAt: 2_000 }));
    clock = 104;
    await vi.advanceTimersByTimeAsync(100);
    expect(attempts.map((a) => a.call.attempt)).toEqual(['first', 'first', 'hedge']);
  });

  it('waits at least floorMs', async () => {
    const { attempts, hedged } = setup({ delayMs: () => 2, floorMs: 10 });
    void hedged(makeCall());
    await vi.advanceTimersByTimeAsync(9);
    expect(attempts).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(attempts).toHaveLength(2);
  });

  it('lets the first answer win when it comes before the delay: no backup, no timer, no token spent', async () => {
    const { attempts, hedged, extra, hedges } = setup();
    const result = hedged(makeCall());
    await vi.advanceTimersByTimeAsync(50);
    attempts[0].resolve(fast);
    await expect(result).resolves.toBe(fast);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(attempts).toHaveLength(1);
    expect(extra.tokens).toBe(5);
    expect(hedges.tokens).toBe(5.05);
  });

  it('takes the backup answer when it comes first, and aborts the first attempt', async () => {
    const { attempts, hedged, extra, hedges } = setup();
    const result = hedged(makeCall());
    await vi.advanceTimersByTimeAsync(100);
    attempts[1].resolve(backup);
    await expect(result).resolves.toBe(backup);
    expect(attempts[0].call.signal.aborted).toBe(true);
    expect(attempts[0].call.signal.reason).toBeInstanceOf(CallAborted);
    expect(attempts[0].call.signal.reason).toMatchObject({ why: 'superseded' });
    expect(attempts[1].call.signal.aborted).toBe(false);
    expect(extra.tokens).toBe(4);
    expect(hedges.tokens).toBe(4.05);
    expect(vi.getTimerCount()).toBe(0);
    attempts[0].reject(cancelled()); // the loser's late failure changes nothing
    await flush();
  });

  it('takes the first answer when it comes after the backup started, and aborts the backup', async () => {
    const { attempts, hedged } = setup();
    const result = hedged(makeCall());
    await vi.advanceTimersByTimeAsync(100);
    attempts[0].resolve(fast);
    await expect(result).resolves.toBe(fast);
    expect(attempts[1].call.signal.aborted).toBe(true);
    expect(attempts[0].call.signal.aborted).toBe(false);
  });

  it('waits for the backup when the first attempt fails while it runs', async () => {
    const { attempts, hedged } = setup();
    let settled = false;
    const result = hedged(makeCall()).finally(() => {
      settled = true;
    });
    await vi.advanceTimersByTimeAsync(100);
    attempts[0].reject(network());
    await flush();
    expect(settled).toBe(false);
    attempts[1].resolve(backup);
    await expect(result).resolves.toBe(backup);
  });

  it('waits for the first attempt when the backup fails', async () => {
    const { attempts, hedged } = setup();
    const result = hedged(makeCall());
    await vi.advanceTimersByTimeAsync(100);
    attempts[1].reject(network());
    await flush();
    attempts[0].resolve(fast);
    await expect(result).resolves.toBe(fast);
  });

  it('fails at once when the first attempt fails before a backup started', async () => {
    const { attempts, hedged } = setup();
    const failure = network();
    const result = hedged(makeCall());
    await vi.advanceTimersByTimeAsync(10);
    attempts[0].reject(failure);
    await expect(result).rejects.toBe(failure);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(attempts).toHaveLength(1);
  });

  it("rejects with the first attempt's failure when both fail, unless it is a cancellation", async () => {
    const both = setup();
    const firstFailure = network();
    const result = both.hedged(makeCall());
    await vi.advanceTimersByTimeAsync(100);
    both.attempts[0].reject(firstFailure);
    both.attempts[1].reject(new UpstreamFailure('SUBGRAPH_TIMEOUT', 'timeout', 'timed out'));
    await expect(result).rejects.toBe(firstFailure);

    const firstCancelled = setup();
    const backupFailure = network();
    const second = firstCancelled.hedged(makeCall());
    await vi.advanceTimersByTimeAsync(100);
    firstCancelled.attempts[0].reject(cancelled());
    firstCancelled.attempts[1].reject(backupFailure);
    await expect(second).rejects.toBe(backupFailure);
  });

  it('passes mutations straight through, without touching the budgets', async () => {
    const { attempts, hedged, hedges } = setup();
    const call = makeCall({ isQuery: false });
    const result = hedged(call);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(attempts).toHaveLength(1);
    expect(attempts[0].call).toBe(call);
    expect(vi.getTimerCount()).toBe(0);
    expect(hedges.tokens).toBe(5);
    attempts[0].resolve(fast);
    await expect(result).resolves.toBe(fast);
  });

  it('does not hedge until the latency is known', async () => {
    const { attempts, hedged } = setup({ delayMs: () => undefined });
    const call = makeCall();
    void hedged(call);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(attempts).toHaveLength(1);
    expect(attempts[0].call).toBe(call);
  });

  it('does not hedge without a token in both budgets, and takes none from the other', async () => {
    const extra = new RetryBudget({ initialTokens: 5 });
    const hedges = new RetryBudget({ initialTokens: 0 });
    const { attempts, hedged, onHedge } = setup({ extra, hedges });
    void hedged(makeCall());
    await vi.advanceTimersByTimeAsync(1_000);
    expect(attempts).toHaveLength(1);
    expect(onHedge).not.toHaveBeenCalled();
    expect(extra.tokens).toBe(5);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('does not hedge when no more than the delay would be left for the backup', async () => {
    const tight = setup();
    void tight.hedged(makeCall({ deadlineAt: Date.now() + 200 }));
    await vi.advanceTimersByTimeAsync(150);
    expect(tight.attempts).toHaveLength(1);

    const roomy = setup();
    void roomy.hedged(makeCall({ deadlineAt: Date.now() + 201 }));
    await vi.advanceTimersByTimeAsync(100);
    expect(roomy.attempts).toHaveLength(2);
  });

  it('checks the time left again when the delay has passed', async () => {
    const clock = { ms: Date.now() };
    const { attempts, hedged, extra } = setup({ now: () => clock.ms });
    void hedged(makeCall({ deadlineAt: clock.ms + 500 }));
    clock.ms += 450; // the clock jumped further than the timer
    await vi.advanceTimersByTimeAsync(100);
    expect(attempts).toHaveLength(1);
    expect(extra.tokens).toBe(5);
  });

  it('aborts both attempts when the call aborts, and removes its listener when done', async () => {
    const controller = new AbortController();
    const { attempts, hedged } = setup();
    const result = hedged(makeCall({ signal: controller.signal }));
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(100);
    const reason = new Error('client went away');
    controller.abort(reason);
    expect(attempts.map((a) => a.call.signal.reason)).toEqual([reason, reason]);
    attempts[0].reject(cancelled());
    attempts[1].reject(cancelled());
    await expect(result).rejects.toMatchObject({ kind: 'cancelled' });
    expect(vi.getTimerCount()).toBe(0);
  });

  it('removes its abort listener whichever way the race ends', async () => {
    const controller = new AbortController();
    const { attempts, hedged } = setup();
    const won = hedged(makeCall({ signal: controller.signal }));
    await vi.advanceTimersByTimeAsync(100);
    attempts[1].resolve(backup);
    await won;
    const lost = hedged(makeCall({ signal: controller.signal }));
    attempts[2].reject(network());
    await expect(lost).rejects.toMatchObject({ kind: 'network' });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('does not start a backup when the call aborted before the delay passed', async () => {
    const controller = new AbortController();
    const { attempts, hedged } = setup();
    void hedged(makeCall({ signal: controller.signal })).catch(() => undefined);
    controller.abort();
    await vi.advanceTimersByTimeAsync(100);
    expect(attempts).toHaveLength(1);
    expect(attempts[0].call.signal.aborted).toBe(true);
  });

  it('turns a synchronous throw of the handler into a rejection', async () => {
    const failure = network();
    const hedged = withHedging({ delayMs: () => 100, extra: new RetryBudget(), hedges: new RetryBudget(), now: () => Date.now(), abortVia: 'controller' })(() => {
      throw failure;
    });
    await expect(hedged(makeCall())).rejects.toBe(failure);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('deposits per logical call only, into `extra` too when asked', async () => {
    const extra = new RetryBudget({ initialTokens: 0 });
    const hedges = new RetryBudget({ ratio: 0.05, initialTokens: 0 });
    const { hedged, attempts } = setup({ extra, hedges, recordExtraCall: true, delayMs: () => undefined });
    void hedged(makeCall());
    void hedged(makeCall({ attempt: 'retry' }));
    expect(attempts).toHaveLength(2);
    expect(hedges.tokens).toBe(0.05);
    expect(extra.tokens).toBe(0.1);
  });

  describe("on the executor's stack (withTimeout inside, the default abortVia: 'hook')", () => {
    function stacked() {
      const { handler, attempts } = controllable();
      const hedged = withHedging({ delayMs: () => 100, extra: new RetryBudget({ initialTokens: 5 }), hedges: new RetryBudget({ ratio: 0.05, initialTokens: 5 }), now: () => Date.now() })(withTimeout(10_000)(handler));
      return { attempts, hedged };
    }

    it('aborts the losing attempt alone through the signal withTimeout gave it', async () => {
      const { attempts, hedged } = stacked();
      const call = makeCall();
      const result = hedged(call);
      await vi.advanceTimersByTimeAsync(100);
      expect(attempts.map((a) => a.call.attempt)).toEqual(['first', 'hedge']);
      attempts[1].resolve(backup);
      await expect(result).resolves.toBe(backup);
      expect(attempts[0].call.signal.reason).toMatchObject({ why: 'superseded' });
      expect(attempts[1].call.signal.aborted).toBe(false);
      expect(call.signal.aborted).toBe(false);
      attempts[0].reject(cancelled());
      await flush();
      expect(vi.getTimerCount()).toBe(0);
    });

    it('aborts both attempts when the call aborts, and leaves no listener on its signal', async () => {
      const controller = new AbortController();
      const { attempts, hedged } = stacked();
      const result = hedged(makeCall({ signal: controller.signal }));
      await vi.advanceTimersByTimeAsync(100);
      const reason = new Error('client went away');
      controller.abort(reason);
      expect(attempts.map((a) => a.call.signal.reason)).toEqual([reason, reason]);
      attempts[0].reject(cancelled());
      attempts[1].reject(cancelled());
      await expect(result).rejects.toMatchObject({ kind: 'cancelled' });
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    });
  });
});
