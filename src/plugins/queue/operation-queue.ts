// One operation's admission control: at most N in flight, a bounded FIFO of waiters on promises, ticket holders first.

/** Limits read at every admission, so a live policy change applies to the next request. */
export interface QueueLimits {
  /** Requests in flight at once; beyond it they wait. */
  maxConcurrency: number;
  /** Requests allowed to wait; beyond it they are refused with QUEUE_FULL. */
  queueLength: number;
  /** Longest wait, in ms; beyond it a waiter is refused with QUEUE_TIMEOUT. */
  maxWaitMs: number;
}

/** A slot in flight; `release()` frees it exactly once, however the request ends. */
export interface Permit {
  /** Milliseconds spent waiting for the slot (0 when admitted at once). */
  readonly waitedMs: number;
  release(): void;
}

export type Refusal = 'full' | 'timeout' | 'aborted';

export class QueueRefused extends Error {
  constructor(readonly reason: Refusal) {
    super(`queue refused: ${reason}`);
    this.name = 'QueueRefused';
  }
}

interface Waiter {
  readonly enqueuedAt: number;
  readonly signal: AbortSignal | undefined;
  resolve(permit: Permit): void;
  reject(error: QueueRefused): void;
  onAbort: (() => void) | undefined;
  prev: Waiter | undefined;
  next: Waiter | undefined;
  list: WaiterList | undefined;
}

/** A doubly linked FIFO: O(1) push, shift and removal of any waiter (a client that leaves). */
class WaiterList {
  head: Waiter | undefined;
  tail: Waiter | undefined;
  size = 0;

  push(waiter: Waiter): void {
    waiter.list = this;
    waiter.prev = this.tail;
    waiter.next = undefined;
    if (this.tail) this.tail.next = waiter;
    else this.head = waiter;
    this.tail = waiter;
    this.size++;
  }

  remove(waiter: Waiter): void {
    if (waiter.list !== this) return;
    if (waiter.prev) waiter.prev.next = waiter.next;
    else this.head = waiter.next;
    if (waiter.next) waiter.next.prev = waiter.prev;
    else this.tail = waiter.prev;
    waiter.prev = waiter.next = waiter.list = undefined;
    this.size--;
  }

  shift(): Waiter | undefined {
    const waiter = this.head;
    if (waiter) this.remove(waiter);
    return waiter;
  }
}

export interface OperationQueueOptions {
  /** The limits in force now (a policy lookup). */
  limits: () => QueueLimits;
  /** Told of every change in the in-flight and waiting counts (gauges). */
  onChange?: (inFlight: number, waiting: number) => void;
  now?: () => number;
}

/**
 * How admission works:
 * 1. A request is admitted at once while fewer than `maxConcurrency` are in flight and nobody waits
 *    before it (FIFO fairness: a newcomer never overtakes a waiter).
 * 2. Otherwise it waits on a promise, no thread and no timer of its own: ticket holders in a priority
 *    list (admitted before every newcomer, even when the queue is full), others in the FIFO list
 *    unless it already holds `queueLength` waiters, in which case it is refused at once (`full`).
 * 3. A release hands the slot to the next waiter: priority list first, then FIFO. Waiters whose
 *    client has gone were removed when their signal fired, so they never take a slot.
 * 4. One timer per queue, set for the oldest waiter's deadline (`maxWaitMs` after it arrived; both
 *    lists are in arrival order, so the oldest is one of the two heads), refuses expired waiters
 *    (`timeout`) and re-arms itself; none is left when the queue is empty.
 * 5. A raised capacity admits waiters at once (`pump`); a lowered one never stops requests already
 *    in flight, it only admits nobody until enough of them finished.
 */
export class OperationQueue {
  readonly #limits: () => QueueLimits;
  readonly #onChange: ((inFlight: number, waiting: number) => void) | undefined;
  readonly #now: () => number;
  readonly #priority = new WaiterList();
  readonly #fifo = new WaiterList();
  #inFlight = 0;
  #timer: NodeJS.Timeout | undefined;
  #timerAt = Infinity;

  constructor(options: OperationQueueOptions) {
    this.#limits = options.limits;
    this.#onChange = options.onChange;
    this.#now = options.now ?? performance.now.bind(performance);
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  get waiting(): number {
    return this.#priority.size + this.#fifo.size;
  }

  /**
   * Resolves with a permit when the request may run; rejects with QueueRefused (`full`, `timeout`,
   * or `aborted` when `signal` fires while waiting). `priority` is for ticket holders.
   */
  acquire(options: { signal?: AbortSignal; priority?: boolean } = {}): Promise<Permit> {
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(new QueueRefused('aborted'));
    const limits = this.#limits();
    if (this.#inFlight < limits.maxConcurrency && this.waiting === 0) return Promise.resolve(this.#admit(0));
    if (!options.priority && this.#fifo.size >= limits.queueLength) return Promise.reject(new QueueRefused('full'));
    return new Promise<Permit>((resolve, reject) => {
      const waiter: Waiter = { enqueuedAt: this.#now(), signal, resolve, reject, onAbort: undefined, prev: undefined, next: undefined, list: undefined };
      if (signal) {
        waiter.onAbort = () => {
          waiter.list?.remove(waiter);
          reject(new QueueRefused('aborted'));
          this.#changed();
          this.#armTimer();
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      (options.priority ? this.#priority : this.#fifo).push(waiter);
      this.#changed();
      // A ticket holder may find a free slot that nobody else was waiting for.
      this.pump();
      this.#armTimer();
    });
  }

  /** Admits waiters while slots are free (after a release or a raised capacity). */
  pump(): void {
    const { maxConcurrency } = this.#limits();
    while (this.#inFlight < maxConcurrency) {
      const waiter = this.#priority.shift() ?? this.#fifo.shift();
      if (!waiter) break;
      this.#detach(waiter);
      waiter.resolve(this.#admit(this.#now() - waiter.enqueuedAt));
    }
    this.#changed();
    this.#armTimer();
  }

  #admit(waitedMs: number): Permit {
    this.#inFlight++;
    this.#changed();
    let released = false;
    return {
      waitedMs,
      release: () => {
        if (released) return;
        released = true;
        this.#inFlight--;
        this.pump();
      },
    };
  }

  #detach(waiter: Waiter): void {
    if (waiter.onAbort) waiter.signal?.removeEventListener('abort', waiter.onAbort);
  }

  #changed(): void {
    this.#onChange?.(this.#inFlight, this.waiting);
  }

  /** Keeps one timer, due when the oldest waiter runs out of patience; none when nobody waits. */
  #armTimer(): void {
    const oldest = Math.min(this.#priority.head?.enqueuedAt ?? Infinity, this.#fifo.head?.enqueuedAt ?? Infinity);
    const due = oldest + this.#limits().maxWaitMs;
    if (due === this.#timerAt) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = due;
    if (due === Infinity) return;
    this.#timer = setTimeout(() => this.#expire(), Math.max(0, due - this.#now()));
    this.#timer.unref();
  }

  #expire(): void {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    const cutoff = this.#now() - this.#limits().maxWaitMs;
    for (const list of [this.#priority, this.#fifo]) {
      while (list.head && list.head.enqueuedAt <= cutoff) {
        const waiter = list.shift()!;
        this.#detach(waiter);
        waiter.reject(new QueueRefused('timeout'));
      }
    }
    this.#changed();
    this.#armTimer();
  }
}
