// The audit writer's in-memory queue: a fixed-capacity ring of entries numbered by an ever-growing sequence.

/**
 * A FIFO of at most `capacity` items. `push` and `drop` are O(1) and never allocate; every item keeps
 * the sequence number it was pushed with (`headSeq` is the oldest one), which the audit writer uses
 * as the entry's idempotency key and to know whether a batch still sits at the front.
 */
export class RingBuffer<T> {
  readonly capacity: number;
  readonly #items: (T | undefined)[];
  #head = 0;
  #length = 0;
  #headSeq = 0;

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`capacity must be a positive integer (got ${capacity})`);
    this.capacity = capacity;
    this.#items = new Array<T | undefined>(capacity);
  }

  get length(): number {
    return this.#length;
  }

  /** Sequence number of the oldest item (or of the next push when empty). */
  get headSeq(): number {
    return this.#headSeq;
  }

  /** Sequence number the next push gets. */
  get tailSeq(): number {
    return this.#headSeq + this.#length;
  }

  get full(): boolean {
    return this.#length === this.capacity;
  }

  /** Appends an item; returns its sequence number. The caller checks `full` first. */
  push(item: T): number {
    if (this.#length === this.capacity) throw new RangeError('ring buffer is full');
    this.#items[(this.#head + this.#length) % this.capacity] = item;
    this.#length += 1;
    return this.#headSeq + this.#length - 1;
  }

  /** The oldest `count` items (fewer if fewer are held), oldest first, left in place. */
  peek(count: number): T[] {
    const n = Math.min(count, this.#length);
    const out = new Array<T>(n);
    for (let i = 0; i < n; i += 1) out[i] = this.#items[(this.#head + i) % this.capacity] as T;
    return out;
  }

  /** Removes the oldest `count` items (fewer if fewer are held). */
  drop(count: number): void {
    const n = Math.min(count, this.#length);
    for (let i = 0; i < n; i += 1) this.#items[(this.#head + i) % this.capacity] = undefined; // let them be collected
    this.#head = (this.#head + n) % this.capacity;
    this.#length -= n;
    this.#headSeq += n;
  }
}
