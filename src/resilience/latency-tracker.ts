// Recent response times of one subgraph, and their percentiles (p50 paces retries, p95 triggers hedges).

export interface LatencyTrackerOptions {
  /** How many of the most recent observations are kept; older ones are forgotten. Default 512. */
  capacity?: number;
  /** Percentiles are `undefined` until this many observations are kept (too little data to trust). Default 20. */
  minSamples?: number;
  /**
   * The sorted snapshot behind `percentile()` is rebuilt at most once per this many new observations,
   * so percentiles may lag the newest `recomputeEvery - 1` observations. Default 16.
   */
  recomputeEvery?: number;
}

/**
 * A ring buffer of the last `capacity` latencies, in milliseconds.
 *
 * `observe()` is O(1) (one write into a Float64Array). `percentile()` sorts a copy only when the
 * cached snapshot is missing or `recomputeEvery` observations old, so reading p50 and p95 on every
 * call costs a sort per `recomputeEvery` calls, not per call.
 */
export class LatencyTracker {
  readonly #samples: Float64Array;
  readonly #sorted: Float64Array;
  readonly #minSamples: number;
  readonly #recomputeEvery: number;
  /** Index the next observation is written to. */
  #next = 0;
  /** Observations held (at most capacity). */
  #size = 0;
  /** Observations held in the sorted snapshot; 0 when there is none. */
  #sortedSize = 0;
  /** Observations since the snapshot was taken. */
  #sinceSort = 0;

  constructor(options: LatencyTrackerOptions = {}) {
    const { capacity = 512, minSamples = 20, recomputeEvery = 16 } = options;
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`capacity must be a positive integer, got ${capacity}`);
    if (!Number.isInteger(minSamples) || minSamples < 1 || minSamples > capacity) {
      throw new RangeError(`minSamples must be an integer between 1 and capacity (${capacity}), got ${minSamples}`);
    }
    if (!Number.isInteger(recomputeEvery) || recomputeEvery < 1) throw new RangeError(`recomputeEvery must be a positive integer, got ${recomputeEvery}`);
    this.#samples = new Float64Array(capacity);
    this.#sorted = new Float64Array(capacity);
    this.#minSamples = minSamples;
    this.#recomputeEvery = recomputeEvery;
  }

  /** Records one response time in milliseconds. Negative, NaN and infinite values are ignored. */
  observe(ms: number): void {
    if (!(ms >= 0) || ms === Infinity) return;
    this.#samples[this.#next] = ms;
    this.#next = this.#next + 1 === this.#samples.length ? 0 : this.#next + 1;
    if (this.#size < this.#samples.length) this.#size++;
    this.#sinceSort++;
  }

  /**
   * The `p`-th percentile (0 to 100, nearest rank) of the kept observations, in milliseconds;
   * `undefined` until `minSamples` observations are kept.
   */
  percentile(p: number): number | undefined {
    if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be between 0 and 100, got ${p}`);
    if (this.#size < this.#minSamples) return undefined;
    if (this.#sortedSize === 0 || this.#sinceSort >= this.#recomputeEvery) this.#resort();
    const rank = Math.ceil((p / 100) * this.#sortedSize);
    return this.#sorted[Math.min(this.#sortedSize - 1, Math.max(0, rank - 1))];
  }

  /** Observations currently kept (at most `capacity`): the population percentiles are computed from. */
  get count(): number {
    return this.#size;
  }

  #resort(): void {
    // Order does not matter for percentiles, so the ring's first #size slots are copied as they lie.
    this.#sorted.set(this.#samples.subarray(0, this.#size));
    this.#sorted.subarray(0, this.#size).sort(); // typed arrays sort numerically
    this.#sortedSize = this.#size;
    this.#sinceSort = 0;
  }
}
