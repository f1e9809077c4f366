// The bound of every close-with-timeout: what it answers, and that it leaves no timer behind.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { waitWithin } from './wait-within.js';

/** A promise settled by the test, at the fake time it chooses. */
function deferred() {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  return { promise, resolve, reject };
}

describe('waitWithin: a wait that gives up', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('answers done when the work finishes in time, and clears its timer', async () => {
    const work = deferred();
    const waited = waitWithin(work.promise, 1_000);
    await vi.advanceTimersByTimeAsync(999);
    work.resolve();
    await expect(waited).resolves.toBe('done');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('answers expired at the bound, not a moment before, and the work may still finish later', async () => {
    const work = deferred();
    let outcome: string | undefined;
    void waitWithin(work.promise, 1_000).then((value) => (outcome = value));
    await vi.advanceTimersByTimeAsync(999);
    expect(outcome).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(outcome).toBe('expired');
    expect(vi.getTimerCount()).toBe(0);
    work.resolve();
    await work.promise;
  });

  it('passes on a rejection that comes in time, and clears its timer', async () => {
    const work = deferred();
    const waited = waitWithin(work.promise, 1_000);
    work.reject(new Error('refused'));
    await expect(waited).rejects.toThrow('refused');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('leaves no unhandled rejection when the work fails after the bound', async () => {
    const work = deferred();
    const waited = waitWithin(work.promise, 10);
    await vi.advanceTimersByTimeAsync(10);
    await expect(waited).resolves.toBe('expired');
    work.reject(new Error('too late'));
    // Vitest fails the run on an unhandled rejection; a turn of the event loop lets one surface.
    await new Promise((resolve) => setImmediate(resolve));
  });
});
