// In-process publish/subscribe for Subscription resolvers: each subscriber gets its own bounded async iterator.

/** Events kept for a subscriber that reads slower than they are published, before the oldest is dropped. */
export const DEFAULT_EVENT_BUFFER = 100;

export interface EventSourceOptions {
  /** Events queued per subscriber; when a slow reader falls further behind, its oldest event is dropped. Default 100. */
  bufferSize?: number;
}

export interface SubscribeOptions<T> {
  /** Only the values it accepts reach this subscriber (and count in `publish`'s answer). Default: every value. */
  accept?: (value: T) => boolean;
  /** Runs once when the subscription ends: its consumer returned (the client left) or `close()`. Default none. */
  onEnd?: () => void;
}

export interface EventSource<T> {
  /**
   * A stream of the values published from now on. It counts as a listener at once (before the
   * first `next()`), and stops being one when its consumer calls `return()` or the source closes.
   */
  subscribe(options?: SubscribeOptions<T>): AsyncIterableIterator<T>;
  /** Hands `value` to every subscriber that accepts it; answers how many did. */
  publish(value: T): number;
  /** Subscriptions open now. */
  readonly listeners: number;
  /** Resolves once at least `count` subscriptions are open (at once if they are): how a test waits for a subscriber before publishing. */
  whenListening(count?: number): Promise<void>;
  /** Ends every subscription (their consumers see `done`); later subscriptions end at once. */
  close(): void;
}

interface Subscriber<T> {
  deliver(value: T): boolean;
  end(): void;
}

/**
 * How one subscription works:
 * 1. `publish` pushes the value to a waiting `next()` if there is one, else onto the subscriber's queue
 *    (bounded: stock levels and similar events are superseded by newer ones, so the oldest goes first);
 * 2. `next()` takes from the queue, or waits for the next accepted value;
 * 3. `return()` (the transport's unsubscribe) or `close()` removes the subscriber, settles waiting
 *    `next()` calls with `done` and runs `onEnd` once, so whoever started work for it can stop it.
 */
export function createEventSource<T>(options: EventSourceOptions = {}): EventSource<T> {
  const bufferSize = options.bufferSize ?? DEFAULT_EVENT_BUFFER;
  if (!Number.isInteger(bufferSize) || bufferSize < 1) throw new TypeError(`createEventSource: bufferSize must be a positive integer (got ${bufferSize})`);
  const subscribers = new Set<Subscriber<T>>();
  const waiters = new Set<{ count: number; resolve: () => void }>();
  let closed = false;

  function wakeWaiters(): void {
    for (const waiter of waiters) {
      if (subscribers.size >= waiter.count) {
        waiters.delete(waiter);
        waiter.resolve();
      }
    }
  }

  function subscribe(subscribeOptions: SubscribeOptions<T> = {}): AsyncIterableIterator<T> {
    const { accept, onEnd } = subscribeOptions;
    const queue: T[] = [];
    const pending: ((result: IteratorResult<T>) => void)[] = [];
    let ended = false;

    const subscriber: Subscriber<T> = {
      deliver: function deliverEvent(value) {
        if (accept !== undefined && !accept(value)) return false;
        const waiting = pending.shift();
        if (waiting !== undefined) waiting({ value, done: false });
        else if (queue.push(value) > bufferSize) queue.shift();
        return true;
      },
      end: function endSubscription() {
        if (ended) return;
        ended = true;
        subscribers.delete(subscriber);
        queue.length = 0;
        for (const waiting of pending.splice(0)) waiting({ value: undefined, done: true });
        onEnd?.();
      },
    };
    if (closed) ended = true;
    else {
      subscribers.add(subscriber);
      wakeWaiters();
    }

    return {
      next: function nextEvent() {
        if (queue.length > 0) return Promise.resolve({ value: queue.shift() as T, done: false });
        if (ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise<IteratorResult<T>>((resolve) => pending.push(resolve));
      },
      return: function unsubscribe() {
        subscriber.end();
        return Promise.resolve({ value: undefined, done: true });
      },
      throw: function failSubscription(error: unknown) {
        subscriber.end();
        return Promise.reject(error);
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }

  return {
    subscribe,
    publish: function publishEvent(value) {
      let delivered = 0;
      for (const subscriber of subscribers) if (subscriber.deliver(value)) delivered += 1;
      return delivered;
    },
    get listeners() {
      return subscribers.size;
    },
    whenListening: function whenListening(count = 1) {
      if (subscribers.size >= count) return Promise.resolve();
      return new Promise<void>((resolve) => waiters.add({ count, resolve }));
    },
    close: function closeEventSource() {
      closed = true;
      for (const subscriber of [...subscribers]) subscriber.end();
    },
  };
}
