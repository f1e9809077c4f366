// Unit tests of the circuit breaker: opening on the failure ratio, the half-open probe, window expiry, the wrapper.
import { parse } from 'graphql';
import { describe, expect, it, vi } from 'vitest';
import { CircuitBreaker, withCircuitBreaker, type CircuitBreakerOptions, type CircuitState } from './circuit-breaker.js';
import { UpstreamFailure, type CallHandler, type SubgraphCall } from './subgraph-call.js';

function setup(options: CircuitBreakerOptions = {}) {
  const clock = { ms: 1_000 };
  const states: CircuitState[] = [];
  const breaker = new CircuitBreaker({ now: () => clock.ms, onStateChange: (state) => states.push(state), ...options });
  function outcomes(successes: number, failures: number): void {
    for (let i = 0; i < successes; i++) {
      breaker.tryAcquire();
      breaker.record(true);
    }
    for (let i = 0; i < failures; i++) {
      breaker.tryAcquire();
      breaker.record(false);
    }
  }
  return { clock, states, breaker, outcomes };
}

/** An open breaker, opened at `clock.ms`. */
function openBreaker(options: CircuitBreakerOptions = {}) {
  const context = setup(options);
  context.outcomes(0, 20);
  expect(context.breaker.state).toBe('open');
  return context;
}

describe('CircuitBreaker', () => {
  it('stays closed below minRequests, even when every call fails', () => {
    const { breaker, outcomes, states } = setup();
    outcomes(0, 19);
    expect(breaker.state).toBe('closed');
    expect(breaker.tryAcquire()).toBe(true);
    expect(states).toEqual([]);
  });

  it('opens when the failure share reaches failureRatio over at least minRequests calls', () => {
    const { breaker, outcomes, states } = setup();
    outcomes(10, 9);
    expect(breaker.state).toBe('closed');
    outcomes(0, 1); // 10 of 20 failed: 50%
    expect(breaker.state).toBe('open');
    expect(states).toEqual(['open']);
  });

  it('stays closed under the ratio', () => {
    const { breaker, outcomes } = setup();
    outcomes(11, 9);
    outcomes(30, 0);
    outcomes(0, 20); // 29 of 70
    expect(breaker.state).toBe('closed');
  });

  it('refuses calls while open, then admits exactly one probe after openMs', () => {
    const { breaker, clock, states } = openBreaker();
    clock.ms += 4_999;
    expect(breaker.tryAcquire()).toBe(false);
    expect(breaker.state).toBe('open');
    clock.ms += 1;
    expect(breaker.tryAcquire()).toBe(true);
    expect(breaker.state).toBe('half_open');
    expect(breaker.tryAcquire()).toBe(false);
    expect(breaker.tryAcquire()).toBe(false);
    expect(states).toEqual(['open', 'half_open']);
  });

  it('closes with an empty window when the probe succeeds', () => {
    const { breaker, clock, states, outcomes } = openBreaker();
    clock.ms += 5_000;
    breaker.tryAcquire();
    breaker.record(true);
    expect(breaker.state).toBe('closed');
    expect(states).toEqual(['open', 'half_open', 'closed']);
    outcomes(0, 19); // the 20 failures before the opening are forgotten
    expect(breaker.state).toBe('closed');
  });

  it('opens again for another openMs when the probe fails', () => {
    const { breaker, clock, states } = openBreaker();
    clock.ms += 6_000;
    breaker.tryAcquire();
    breaker.record(false);
    expect(breaker.state).toBe('open');
    clock.ms += 4_999;
    expect(breaker.tryAcquire()).toBe(false);
    clock.ms += 1;
    expect(breaker.tryAcquire()).toBe(true);
    expect(states).toEqual(['open', 'half_open', 'open', 'half_open']);
  });

  it('release() frees the probe slot in half-open without changing state', () => {
    const { breaker, clock, states } = openBreaker();
    clock.ms += 5_000;
    expect(breaker.tryAcquire()).toBe(true);
    breaker.release();
    expect(breaker.state).toBe('half_open');
    expect(breaker.tryAcquire()).toBe(true);
    expect(breaker.tryAcquire()).toBe(false);
    expect(states).toEqual(['open', 'half_open']);
  });

  it('ignores late outcomes while open, and release() while closed', () => {
    const { breaker, outcomes, clock } = openBreaker();
    outcomes(50, 0);
    expect(breaker.state).toBe('open');
    clock.ms += 5_000;
    breaker.tryAcquire();
    breaker.record(true);
    breaker.release();
    expect(breaker.state).toBe('closed');
  });

  it('forgets outcomes older than the window, a bucket at a time', () => {
    const { breaker, clock, outcomes } = setup({ windowMs: 10_000, buckets: 10 });
    clock.ms = 0;
    outcomes(0, 19);
    clock.ms = 9_999; // still in the window (last bucket of it)
    outcomes(0, 1);
    expect(breaker.state).toBe('open');

    const second = setup({ windowMs: 10_000, buckets: 10 });
    second.clock.ms = 0;
    second.outcomes(0, 19);
    second.clock.ms = 10_000; // the bucket of time 0 has expired
    second.outcomes(0, 1);
    expect(second.breaker.state).toBe('closed');
    second.outcomes(0, 18);
    expect(second.breaker.state).toBe('closed');
    second.outcomes(0, 1);
    expect(second.breaker.state).toBe('open');
  });

  it('sums the outcomes of every bucket in the window', () => {
    const { breaker, clock, outcomes } = setup();
    for (let i = 0; i < 10; i++) {
      clock.ms = i * 1_000;
      outcomes(1, 1);
    }
    expect(breaker.state).toBe('open'); // 10 of 20 over ten buckets
  });

  it('rejects impossible options', () => {
    expect(() => new CircuitBreaker({ failureRatio: 0 })).toThrow(RangeError);
    expect(() => new CircuitBreaker({ minRequests: 0 })).toThrow(RangeError);
    expect(() => new CircuitBreaker({ buckets: 0 })).toThrow(RangeError);
    expect(() => new CircuitBreaker({ windowMs: -1 })).toThrow(RangeError);
  });
});

function makeCall(overrides: Partial<SubgraphCall> = {}): SubgraphCall {
  return {
    subgraph: 'products',
    request: { document: parse('{ __typename }') },
    isQuery: true,
    signal: new AbortController().signal,
    deadlineAt: 2_000,
    attempt: 'first',
    ...overrides,
  };
}

const networkFailure = () => new UpstreamFailure('SUBGRAPH_UNAVAILABLE', 'network', 'connection refused');

describe('withCircuitBreaker', () => {
  it('fails at once with CIRCUIT_OPEN while open, without calling the subgraph', async () => {
    const { breaker } = openBreaker();
    const next = vi.fn<CallHandler>();
    const failure = await withCircuitBreaker(breaker)(next)(makeCall()).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(UpstreamFailure);
    expect(failure).toMatchObject({ code: 'CIRCUIT_OPEN', kind: 'circuit_open', message: 'subgraph "products" is failing; calls are paused until it recovers' });
    expect((failure as UpstreamFailure).retryable).toBe(false);
    expect(next).not.toHaveBeenCalled();
  });

  it('counts failures the subgraph caused, and opens on them', async () => {
    const { breaker } = setup();
    const handler = withCircuitBreaker(breaker)(() => Promise.reject(networkFailure()));
    for (let i = 0; i < 20; i++) await expect(handler(makeCall())).rejects.toMatchObject({ kind: 'network' });
    expect(breaker.state).toBe('open');
    await expect(handler(makeCall())).rejects.toMatchObject({ kind: 'circuit_open' });
  });

  it('counts results, GraphQL errors included, as health', async () => {
    const { breaker, clock } = openBreaker();
    clock.ms += 5_000;
    const result = { errors: [{ message: 'Product not found' }] } as never;
    await expect(withCircuitBreaker(breaker)(() => Promise.resolve(result))(makeCall())).resolves.toBe(result);
    expect(breaker.state).toBe('closed');
  });

  it('re-opens when the probe fails', async () => {
    const { breaker, clock } = openBreaker();
    clock.ms += 5_000;
    await expect(withCircuitBreaker(breaker)(() => Promise.reject(new UpstreamFailure('SUBGRAPH_UNAVAILABLE', 'http', 'Service Unavailable', 503)))(makeCall())).rejects.toMatchObject({ status: 503 });
    expect(breaker.state).toBe('open');
  });

  it('releases the probe on a cancellation, a 4xx or a bug, without changing state', async () => {
    const { breaker, clock } = openBreaker();
    clock.ms += 5_000;
    const failures = [
      new UpstreamFailure('SUBGRAPH_UNAVAILABLE', 'cancelled', 'client went away'),
      new UpstreamFailure('SUBGRAPH_ERROR', 'http', 'Bad Request', 400),
      new TypeError('bug'),
    ];
    for (const failure of failures) {
      await expect(withCircuitBreaker(breaker)(() => Promise.reject(failure))(makeCall())).rejects.toBe(failure);
      expect(breaker.state).toBe('half_open');
    }
    expect(breaker.tryAcquire()).toBe(true); // the slot is free each time
  });

  it('records a synchronous throw of the handler below', async () => {
    const { breaker, clock } = openBreaker();
    clock.ms += 5_000;
    const next: CallHandler = () => {
      throw networkFailure();
    };
    await expect(withCircuitBreaker(breaker)(next)(makeCall())).rejects.toMatchObject({ kind: 'network' });
    expect(breaker.state).toBe('open');
  });

  describe('slow calls (resilience4j slow-call rate)', () => {
    const deadline = () => new UpstreamFailure('DEADLINE_EXCEEDED', 'deadline', 'deadline passed');
    /** A handler below the breaker that takes `ms` on the breaker's clock, then settles with `outcome`. */
    const taking = (clock: { ms: number }, ms: number, outcome: () => Promise<never> | Promise<object>): CallHandler =>
      function slowHandler() {
        clock.ms += ms;
        return outcome() as never;
      };

    it('opens when slow calls reach slowCallRatio of the window, successes included', () => {
      const { breaker } = setup({ slowCallRatio: 0.5 });
      const call = (slow: boolean) => {
        breaker.tryAcquire();
        breaker.record(true, slow);
      };
      for (let i = 0; i < 10; i++) call(false);
      for (let i = 0; i < 9; i++) call(true);
      expect(breaker.state).toBe('closed');
      call(true);
      expect(breaker.state).toBe('open');
    });

    it('re-opens on a slow probe', () => {
      const { breaker, clock } = openBreaker();
      clock.ms += 5_000;
      breaker.tryAcquire();
      breaker.record(true, true);
      expect(breaker.state).toBe('open');
    });

    it('counts answers slower than slowCallMs as slow', async () => {
      const { breaker, clock } = setup();
      const handler = withCircuitBreaker(breaker, { slowCallMs: 100, now: () => clock.ms })(taking(clock, 150, () => Promise.resolve({ data: {} })));
      for (let i = 0; i < 20; i++) await handler(makeCall());
      expect(breaker.state).toBe('open');
    });

    it('counts a call cut by the request deadline as slow once it ran the subgraph’s usual answer time: a hanging subgraph opens the circuit', async () => {
      const { breaker, clock } = setup();
      const handler = withCircuitBreaker(breaker, { typicalMs: () => 20, now: () => clock.ms })(taking(clock, 150, () => Promise.reject(deadline())));
      for (let i = 0; i < 20; i++) await expect(handler(makeCall())).rejects.toMatchObject({ code: 'DEADLINE_EXCEEDED' });
      expect(breaker.state).toBe('open');
      await expect(handler(makeCall())).rejects.toMatchObject({ code: 'CIRCUIT_OPEN' });
    });

    it('does not count a call the deadline cut before the subgraph could usually answer (a starved call), nor open on it', async () => {
      const { breaker, clock } = openBreaker();
      clock.ms += 5_000;
      const starved = withCircuitBreaker(breaker, { typicalMs: () => 20, now: () => clock.ms })(taking(clock, 5, () => Promise.reject(deadline())));
      await expect(starved(makeCall())).rejects.toMatchObject({ code: 'DEADLINE_EXCEEDED' });
      expect(breaker.state).toBe('half_open');
      // A probe that hangs until the deadline re-opens the circuit rather than letting every request probe.
      const hanging = withCircuitBreaker(breaker, { typicalMs: () => 20, now: () => clock.ms })(taking(clock, 150, () => Promise.reject(deadline())));
      await expect(hanging(makeCall())).rejects.toMatchObject({ code: 'DEADLINE_EXCEEDED' });
      expect(breaker.state).toBe('open');
    });
  });
});
