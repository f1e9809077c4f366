// Circuit breaker per subgraph (rolling window of outcomes, open, half-open probe) and its call wrapper.
import { UpstreamFailure, isUpstreamFailure, type CallWrapper } from './subgraph-call.js';

/** `closed`: calls flow. `open`: calls fail at once. `half_open`: one probe call decides. */
export type CircuitState = 'closed' | 'open' | 'half_open';

export interface CircuitBreakerOptions {
  /** Share of failed calls in the window (0 to 1) at or above which the circuit opens. Default 0.5. */
  failureRatio?: number;
  /** Share of slow calls in the window (0 to 1) at or above which the circuit opens (resilience4j's slow-call rate). Default 0.5. */
  slowCallRatio?: number;
  /** Calls the window must hold before the ratio is judged, so a few early failures do not open it. Default 20. */
  minRequests?: number;
  /** Length of the rolling window of outcomes, in milliseconds. Default 10_000. */
  windowMs?: number;
  /** Time buckets the window is split into; outcomes expire a bucket (windowMs / buckets) at a time. Default 10. */
  buckets?: number;
  /** How long the circuit stays open before letting a probe through, in milliseconds. Default 5_000. */
  openMs?: number;
  /** Clock in milliseconds. Default `performance.now`. */
  now?: () => number;
  /** Called after every transition with the new state (e.g. to set a gauge). Must not throw. */
  onStateChange?: (state: CircuitState) => void;
}

/**
 * How the breaker decides:
 * 1. Closed: every call is let through (`tryAcquire()` is true) and its outcome lands in the bucket
 *    of the current time slice. Buckets older than `windowMs` are forgotten, so the window holds
 *    between `windowMs - windowMs / buckets` and `windowMs` of history.
 * 2. When a failure or a slow call leaves the window with at least `minRequests` outcomes and a
 *    failure share of at least `failureRatio`, or a slow share of at least `slowCallRatio`, the
 *    circuit opens (resilience4j's failure-rate and slow-call-rate model). What is slow is the
 *    caller's to say (see withCircuitBreaker); a slow call may have succeeded, failed, or been cut
 *    short by the request deadline, and counts in the window's total either way.
 * 3. Open: calls are refused until `openMs` has passed. The first call after that moves the circuit
 *    to half-open and is let through as the only probe; calls are refused while it is in flight.
 * 4. The probe's success closes the circuit with an empty window; its failure, or a slow probe,
 *    opens it for another `openMs`. A probe that ends without telling anything about health
 *    (cancelled) is `release()`d: the circuit stays half-open and the next call becomes the probe.
 *
 * Outcomes of calls let through before the circuit opened and ending while it is open are ignored.
 * In half-open state the breaker assumes the result it is told is the probe's: calls are bounded by
 * the request deadline (seconds), well below `openMs`, so none from before the opening is still running.
 */
export class CircuitBreaker {
  readonly #failureRatio: number;
  readonly #slowCallRatio: number;
  readonly #minRequests: number;
  readonly #bucketMs: number;
  readonly #openMs: number;
  readonly #now: () => number;
  readonly #onStateChange: ((state: CircuitState) => void) | undefined;
  /** Per bucket: the time slice (floor(time / bucketMs)) it holds, and its counts. */
  readonly #slices: Float64Array;
  readonly #successes: Uint32Array;
  readonly #failures: Uint32Array;
  readonly #slow: Uint32Array;
  #state: CircuitState = 'closed';
  #openedAt = 0;
  #probeInFlight = false;

  constructor(options: CircuitBreakerOptions = {}) {
    const { failureRatio = 0.5, slowCallRatio = 0.5, minRequests = 20, windowMs = 10_000, buckets = 10, openMs = 5_000 } = options;
    if (!(failureRatio > 0 && failureRatio <= 1)) throw new RangeError(`failureRatio must be above 0 and at most 1, got ${failureRatio}`);
    if (!(slowCallRatio > 0 && slowCallRatio <= 1)) throw new RangeError(`slowCallRatio must be above 0 and at most 1, got ${slowCallRatio}`);
    if (!Number.isInteger(minRequests) || minRequests < 1) throw new RangeError(`minRequests must be a positive integer, got ${minRequests}`);
    if (!Number.isInteger(buckets) || buckets < 1) throw new RangeError(`buckets must be a positive integer, got ${buckets}`);
    if (!(windowMs > 0) || windowMs === Infinity) throw new RangeError(`windowMs must be a positive number, got ${windowMs}`);
    if (!(openMs >= 0) || openMs === Infinity) throw new RangeError(`openMs must be a non-negative number, got ${openMs}`);
    this.#failureRatio = failureRatio;
    this.#slowCallRatio = slowCallRatio;
    this.#minRequests = minRequests;
    this.#bucketMs = windowMs / buckets;
    this.#openMs = openMs;
    this.#now = options.now ?? (() => performance.now());
    this.#onStateChange = options.onStateChange;
    this.#slices = new Float64Array(buckets).fill(-Infinity);
    this.#successes = new Uint32Array(buckets);
    this.#failures = new Uint32Array(buckets);
    this.#slow = new Uint32Array(buckets);
  }

  get state(): CircuitState {
    return this.#state;
  }

  /** Whether a call may go ahead now. Every `true` must be followed by `record()` or `release()`. */
  tryAcquire(): boolean {
    switch (this.#state) {
      case 'closed':
        return true;
      case 'open':
        if (this.#now() - this.#openedAt < this.#openMs) return false;
        this.#probeInFlight = true;
        this.#transition('half_open');
        return true;
      case 'half_open':
        if (this.#probeInFlight) return false;
        this.#probeInFlight = true;
        return true;
    }
  }

  /**
   * Reports the outcome of an acquired call: `success` false when the subgraph failed (true when it
   * answered, or was cut short by the deadline without failing); `slow` when the call was slow.
   */
  record(success: boolean, slow = false): void {
    if (this.#state === 'closed') {
      this.#count(success, slow);
      if ((!success || slow) && this.#shouldOpen()) this.#open();
    } else if (this.#state === 'half_open' && this.#probeInFlight) {
      this.#probeInFlight = false;
      if (success && !slow) {
        this.#resetWindow();
        this.#transition('closed');
      } else {
        this.#open();
      }
    }
    // Open: a late outcome of a call let through before the circuit opened; it changes nothing.
  }

  /** Ends an acquired call that says nothing about health (cancelled, or cut by the deadline before it could tell): frees the probe slot. */
  release(): void {
    if (this.#state === 'half_open') this.#probeInFlight = false;
  }

  #count(success: boolean, slow: boolean): void {
    const slice = Math.floor(this.#now() / this.#bucketMs);
    const index = this.#indexOf(slice);
    if (this.#slices[index] !== slice) {
      this.#slices[index] = slice;
      this.#successes[index] = 0;
      this.#failures[index] = 0;
      this.#slow[index] = 0;
    }
    if (success) this.#successes[index]++;
    else this.#failures[index]++;
    if (slow) this.#slow[index]++;
  }

  #shouldOpen(): boolean {
    const oldest = Math.floor(this.#now() / this.#bucketMs) - this.#slices.length + 1;
    let failures = 0;
    let slow = 0;
    let total = 0;
    for (let i = 0; i < this.#slices.length; i++) {
      if (this.#slices[i] < oldest) continue;
      failures += this.#failures[i];
      slow += this.#slow[i];
      total += this.#successes[i] + this.#failures[i];
    }
    return total >= this.#minRequests && (failures / total >= this.#failureRatio || slow / total >= this.#slowCallRatio);
  }

  #indexOf(slice: number): number {
    const n = this.#slices.length;
    return ((slice % n) + n) % n;
  }

  #resetWindow(): void {
    this.#slices.fill(-Infinity);
    this.#successes.fill(0);
    this.#failures.fill(0);
    this.#slow.fill(0);
  }

  #open(): void {
    this.#openedAt = this.#now();
    this.#transition('open');
  }

  #transition(state: CircuitState): void {
    this.#state = state;
    this.#onStateChange?.(state);
  }
}

export interface BreakerWrapperOptions {
  /** A call that takes longer than this, in ms, is slow (resilience4j's slowCallDurationThreshold). Default: never. */
  slowCallMs?: number;
  /**
   * The subgraph's usual answer time, in ms (its recent p95), or undefined while unknown. A call cut by
   * the request deadline counts as slow only once it ran at least this long: a call cut sooner was
   * starved by the request (a short client deadline, a slow step before it), which says nothing of
   * this subgraph, and must not let a client's `Switchyard-Deadline-Ms` open the circuit for everyone.
   */
  typicalMs?: () => number | undefined;
  /** Clock in ms. Default `performance.now`. */
  now?: () => number;
}

/**
 * Wraps a call in the breaker: refused at once with `CIRCUIT_OPEN` while the circuit is open (the
 * handler below is not called); otherwise:
 * 1. A result counts as health, slow when it took longer than `slowCallMs`.
 * 2. A failure the subgraph caused (`countsAsFailure`: network, timeout, 5xx) counts as sickness,
 *    slow by the same measure.
 * 3. A call cut by the request deadline counts as slow, not failed, once it ran at least the
 *    subgraph's usual answer time (`typicalMs`, or `slowCallMs` if that is less): a subgraph that
 *    hangs on every call, under clients with short deadlines, thus opens its circuit instead of
 *    holding every request to its deadline.
 * 4. Anything else (cancelled, a hedge loser, 4xx, a bug) counts as neither and is released.
 */
export function withCircuitBreaker(breaker: CircuitBreaker, options: BreakerWrapperOptions = {}): CallWrapper {
  const slowCallMs = options.slowCallMs ?? Infinity;
  const now = options.now ?? (() => performance.now());
  return function circuitBreakerWrapper(next) {
    return async function callThroughBreaker(call) {
      if (!breaker.tryAcquire()) {
        throw new UpstreamFailure('CIRCUIT_OPEN', 'circuit_open', `subgraph "${call.subgraph}" is failing; calls are paused until it recovers`);
      }
      const started = now();
      let result;
      try {
        result = await next(call);
      } catch (error) {
        const elapsed = now() - started;
        if (isUpstreamFailure(error) && error.countsAsFailure) breaker.record(false, elapsed > slowCallMs);
        else if (isUpstreamFailure(error) && error.kind === 'deadline' && elapsed >= Math.min(options.typicalMs?.() ?? 0, slowCallMs)) breaker.record(true, true);
        else breaker.release();
        throw error;
      }
      breaker.record(true, now() - started > slowCallMs);
      return result;
    };
  };
}
