// Circuit breaker per subgraph (rolling window of outcomes, open, half-open probe) and its call wrapper.
import { UpstreamFailure, isUpstreamFailure, type CallWrapper } from './subgraph-call.js';

/** `closed`: calls flow. `open`: calls fail at once. `half_open`: one probe call decides. */
export type CircuitState = 'closed' | 'open' | 'half_open';

export interface CircuitBreakerOptions {
  /** Share of failed calls in the window (0 to 1) at or above which the circuit opens. Default 0.5. */
  failureRatio?: number;
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
 * 2. When a failure leaves the window with at least `minRequests` outcomes and a failure share of
 *    at least `failureRatio`, the circuit opens.
 * 3. Open: calls are refused until `openMs` has passed. The first call after that moves the circuit
 *    to half-open and is let through as the only probe; calls are refused while it is in flight.
 * 4. The probe's success closes the circuit with an empty window; its failure opens it for another
 *    `openMs`. A probe that ends without telling anything about health (cancelled, deadline) is
 *    `release()`d: the circuit stays half-open and the next call becomes the probe.
 *
 * Outcomes of calls let through before the circuit opened and ending while it is open are ignored.
 * In half-open state the breaker assumes the result it is told is the probe's: calls are bounded by
 * the request deadline (seconds), well below `openMs`, so none from before the opening is still running.
 */
export class CircuitBreaker {
  readonly #failureRatio: number;
  readonly #minRequests: number;
  readonly #bucketMs: number;
  readonly #openMs: number;
  readonly #now: () => number;
  readonly #onStateChange: ((state: CircuitState) => void) | undefined;
  /** Per bucket: the time slice (floor(time / bucketMs)) it holds, and its counts. */
  readonly #slices: Float64Array;
  readonly #successes: Uint32Array;
  readonly #failures: Uint32Array;
  #state: CircuitState = 'closed';
  #openedAt = 0;
  #probeInFlight = false;

  constructor(options: CircuitBreakerOptions = {}) {
    const { failureRatio = 0.5, minRequests = 20, windowMs = 10_000, buckets = 10, openMs = 5_000 } = options;
    if (!(failureRatio > 0 && failureRatio <= 1)) throw new RangeError(`failureRatio must be above 0 and at most 1, got ${failureRatio}`);
    if (!Number.isInteger(minRequests) || minRequests < 1) throw new RangeError(`minRequests must be a positive integer, got ${minRequests}`);
    if (!Number.isInteger(buckets) || buckets < 1) throw new RangeError(`buckets must be a positive integer, got ${buckets}`);
    if (!(windowMs > 0) || windowMs === Infinity) throw new RangeError(`windowMs must be a positive number, got ${windowMs}`);
    if (!(openMs >= 0) || openMs === Infinity) throw new RangeError(`openMs must be a non-negative number, got ${openMs}`);
    this.#failureRatio = failureRatio;
    this.#minRequests = minRequests;
    this.#bucketMs = windowMs / buckets;
    this.#openMs = openMs;
    this.#now = options.now ?? (() => performance.now());
    this.#onStateChange = options.onStateChange;
    this.#slices = new Float64Array(buckets).fill(-Infinity);
    this.#successes = new Uint32Array(buckets);
    this.#failures = new Uint32Array(buckets);
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

  /** Reports the outcome of an acquired call: `true` when the subgraph answered, `false` when it failed. */
  record(success: boolean): void {
    if (this.#state === 'closed') {
      this.#count(success);
      if (!success && this.#shouldOpen()) this.#open();
    } else if (this.#state === 'half_open' && this.#probeInFlight) {
      this.#probeInFlight = false;
      if (success) {
        this.#resetWindow();
        this.#transition('closed');
      } else {
        this.#open();
      }
    }
    // Open: a late outcome of a call let through before the circuit opened; it changes nothing.
  }

  /** Ends an acquired call that says nothing about health (cancelled, deadline passed): frees the probe slot. */
  release(): void {
    if (this.#state === 'half_open') this.#probeInFlight = false;
  }

  #count(success: boolean): void {
    const slice = Math.floor(this.#now() / this.#bucketMs);
    const index = this.#indexOf(slice);
    if (this.#slices[index] !== slice) {
      this.#slices[index] = slice;
      this.#successes[index] = 0;
      this.#failures[index] = 0;
    }
    if (success) this.#successes[index]++;
    else this.#failures[index]++;
  }

  #shouldOpen(): boolean {
    const oldest = Math.floor(this.#now() / this.#bucketMs) - this.#slices.length + 1;
    let failures = 0;
    let total = 0;
    for (let i = 0; i < this.#slices.length; i++) {
      if (this.#slices[i] < oldest) continue;
      failures += this.#failures[i];
      total += this.#successes[i] + this.#failures[i];
    }
    return total >= this.#minRequests && failures / total >= this.#failureRatio;
  }

  #indexOf(slice: number): number {
    const n = this.#slices.length;
    return ((slice % n) + n) % n;
  }

  #resetWindow(): void {
    this.#slices.fill(-Infinity);
    this.#successes.fill(0);
    this.#failures.fill(0);
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

/**
 * Wraps a call in the breaker: refused at once with `CIRCUIT_OPEN` while the circuit is open (the
 * handler below is not called); otherwise a result counts as health, a failure the subgraph caused
 * (`countsAsFailure`) as sickness, and anything else (deadline, cancelled, 4xx, a bug) as neither.
 */
export function withCircuitBreaker(breaker: CircuitBreaker): CallWrapper {
  return function circuitBreakerWrapper(next) {
    return async function callThroughBreaker(call) {
      if (!breaker.tryAcquire()) {
        throw new UpstreamFailure('CIRCUIT_OPEN', 'circuit_open', `subgraph "${call.subgraph}" is failing; calls are paused until it recovers`);
      }
      let result;
      try {
        result = await next(call);
      } catch (error) {
        if (isUpstreamFailure(error) && error.countsAsFailure) breaker.record(false);
        else breaker.release();
        throw error;
      }
      breaker.record(true);
      return result;
    };
  };
}
