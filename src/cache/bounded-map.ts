// The one size-capped map of the router's memos and in-process stores: at most N entries, the least recently used goes first.

/**
 * A Map with at most `maxEntries` entries (decision 022).
 * 1. A Map iterates in insertion order, so its first key is the least recently used once every use
 *    re-inserts its key: `get` of a present key and `set` both do.
 * 2. A `set` that goes over the bound drops the first key, the least recently used.
 * It stays a plain Map underneath, not the `lru-cache` package: several of these are made per parsed
 * document (authorization decisions, cost estimates), and an `lru-cache` instance allocates its
 * arrays for `max` entries up front (about 6.5 kB at 256 entries against about 50 bytes for a Map
 * holding the one or two entries a document usually has).
 */
export class BoundedMap<K, V> {
  readonly #entries = new Map<K, V>();
  readonly maxEntries: number;

  constructor(maxEntries: number) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError(`maxEntries must be a positive integer, not ${maxEntries}`);
    this.maxEntries = maxEntries;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The value, now the most recently used; undefined when absent. */
  get(key: K): V | undefined {
    const value = this.#entries.get(key);
    if (value === undefined) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, value);
    return value;
  }

  /** Stores the value as the most recently used, then drops the least recently used if over the bound. */
  set(key: K, value: V): this {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.maxEntries) this.#entries.delete(this.#entries.keys().next().value as K);
    return this;
  }

  delete(key: K): boolean {
    return this.#entries.delete(key);
  }

  clear(): void {
    this.#entries.clear();
  }
}
