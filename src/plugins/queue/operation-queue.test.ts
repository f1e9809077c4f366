// Unit tests of the operation queue: FIFO admission, ticket priority, refusals, aborts, timeouts, live limits.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { OperationQueue, QueueRefused, type QueueLimits } from './operation-queue.js';

function queueWith(limits: QueueLimits) {
  const current = { ...limits };
  const queue = new OperationQueue({ limits: () => current });
  return { queue, limits: current };
}

async function refusalOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'admitted';
  } catch (error) {
    return (error as QueueRefused).reason;
  }
}

describe('operation queue', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('admits up to the capacity, queues up to the length, refuses the rest', async () => {
    const { queue } = queueWith({ maxConcurrency: 2, queueLength: 4, maxWaitMs: 10_000 });
    const attempts = Array.from({ length: 12 }, () => queue.acquire());
    const outcomes = await Promise.all(attempts.slice(6).map(refusalOf));
    expect(outcomes).toEqual(Array(6).fill('full'));
    expect([queue.inFlight, queue.waiting]).toEqual([2, 4]);
    // Releasing admits the waiters in arrival order.
    const first = await attempts[0];
    first.release();
    first.release(); // idempotent: frees one slot only
    await attempts[2];
    expect([queue.inFlight, queue.waiting]).toEqual([2, 3]);
  });

  it('serves waiters in FIFO order and ticket holders before them, even when full', async () => {
    const { queue } = queueWith({ maxConcurrency: 1, queueLength: 2, maxWaitMs: 10_000 });
    const running = await queue.acquire();
    const order: string[] = [];
    const a = queue.acquire().then((p) => (order.push('a'), p));
    const b = queue.acquire().then((p) => (order.push('b'), p));
    expect(await refusalOf(queue.acquire())).toBe('full');
    const ticket = queue.acquire({ priority: true }).then((p) => (order.push('ticket'), p));
    running.release();
    (await ticket).release();
    (await a).release();
    (await b).release();
    expect(order).toEqual(['ticket', 'a', 'b']);
    expect([queue.inFlight, queue.waiting]).toEqual([0, 0]);
  });

  it('removes a waiter whose client leaves, and it never takes a slot', async () => {
    const { queue } = queueWith({ maxConcurrency: 1, queueLength: 1000, maxWaitMs: 10_000 });
    const running = await queue.acquire();
    const controllers = Array.from({ length: 500 }, () => new AbortController());
    const waiting = controllers.map((c) => refusalOf(queue.acquire({ signal: c.signal })));
    expect(queue.waiting).toBe(500);
    for (const c of controllers) c.abort();
    expect(await Promise.all(waiting)).toEqual(Array(500).fill('aborted'));
    expect(queue.waiting).toBe(0);
    running.release();
    expect(queue.inFlight).toBe(0);
    const next = await queue.acquire();
    expect(next.waitedMs).toBe(0);
  });

  it('refuses waiters that waited longer than maxWaitMs, with one timer for the whole queue', async () => {
    vi.useFakeTimers();
    const { queue } = queueWith({ maxConcurrency: 1, queueLength: 10, maxWaitMs: 100 });
    const running = await queue.acquire();
    const first = refusalOf(queue.acquire());
    vi.advanceTimersByTime(50);
    const second = refusalOf(queue.acquire());
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(60);
    expect(await first).toBe('timeout');
    expect(queue.waiting).toBe(1);
    vi.advanceTimersByTime(50);
    expect(await second).toBe('timeout');
    expect(vi.getTimerCount()).toBe(0);
    running.release();
  });

  it('applies a raised capacity at once and never stops requests in flight when it is lowered', async () => {
    const { queue, limits } = queueWith({ maxConcurrency: 1, queueLength: 10, maxWaitMs: 10_000 });
    const running = await queue.acquire();
    const waiters = [queue.acquire(), queue.acquire()];
    limits.maxConcurrency = 3;
    queue.pump();
    const admitted = await Promise.all(waiters);
    expect(queue.inFlight).toBe(3);
    limits.maxConcurrency = 1;
    queue.pump();
    expect(queue.inFlight).toBe(3);
    const late = queue.acquire();
    running.release();
    admitted[0].release();
    expect(queue.waiting).toBe(1);
    admitted[1].release();
    expect((await late).waitedMs).toBeGreaterThanOrEqual(0);
    expect(queue.inFlight).toBe(1);
  });
});
