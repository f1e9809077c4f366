// The heartbeats of long-lived streams: one timer, spread over the period.
/**
 * One heartbeat timer for every stream of a period, not one per stream (10,000 open subscriptions
 * hold no timer each), and spread: the items are dealt into slots, and each tick beats one slot, so
 * 10,000 streams on a 12 s period get 100 small writes every 120 ms rather than one burst of 10,000
 * writes that would hold every event behind it for a few hundred milliseconds.
 */
export class HeartbeatWheel<T> {
  readonly #slots: Set<T>[];
  readonly #slotOf = new Map<T, Set<T>>();
  readonly #tickMs: number;
  readonly #beat: (item: T) => void;
  #next = 0;
  #hand = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(periodMs: number, beat: (item: T) => void, slots = 100) {
    const count = Math.max(1, Math.min(slots, Math.floor(periodMs / 10)));
    this.#slots = Array.from({ length: count }, () => new Set<T>());
    this.#tickMs = periodMs / count;
    this.#beat = beat;
  }

  get size(): number {
    return this.#slotOf.size;
  }

  add(item: T): void {
    const slot = this.#slots[this.#next];
    this.#next = (this.#next + 1) % this.#slots.length;
    slot.add(item);
    this.#slotOf.set(item, slot);
    if (!this.#timer) {
      this.#timer = setInterval(() => this.#tick(), this.#tickMs);
      this.#timer.unref();
    }
  }

  delete(item: T): void {
    this.#slotOf.get(item)?.delete(item);
    this.#slotOf.delete(item);
    if (this.#slotOf.size === 0 && this.#timer) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }

  #tick(): void {
    const slot = this.#slots[this.#hand];
    this.#hand = (this.#hand + 1) % this.#slots.length;
    for (const item of slot) this.#beat(item);
  }
}

