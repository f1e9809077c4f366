// The shared tier of the section cache: sections in Redis, read within a time budget, written in the background, skipped while Redis fails.
import type { Redis } from 'ioredis';
import { expiresAt } from './memory-sections.js';
import type { CachedSection } from './cached-section.js';
import { decodeSection, encodeSection } from './redis-section-format.js';

/** A read that Redis did not answer within its budget. */
export class RedisTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`Redis did not answer a cache read within ${timeoutMs} ms`);
    this.name = 'RedisTimeoutError';
  }
}

export interface RedisBreakerOptions {
  /** Consecutive failures (errors, timeouts, a client not connected) that open the breaker. Default 3. */
  failures?: number;
  /** How long an open breaker skips Redis before one read probes it, in ms. Default 5000. */
  openMs?: number;
}

/**
 * The cache's own circuit breaker for Redis (a cache must cost a request nothing when its backend is
 * down, so it gives up sooner than a subgraph breaker would):
 * 1. Closed: every call goes to Redis; `failures` consecutive failures open it.
 * 2. Open: for `openMs`, reads are answered from memory alone and writes are dropped, without an error
 *    each (a skipped call is not a failure: the metric counts failures, not requests).
 * 3. Then one read goes through as a probe (others still skip while it is out): success closes the
 *    breaker, failure opens it for another `openMs`. Writes wait for it to close.
 */
class RedisBreaker {
  readonly #threshold: number;
  readonly #openMs: number;
  #failures = 0;
  #openUntil = 0;
  #probing = false;

  constructor(options: RedisBreakerOptions = {}) {
    this.#threshold = options.failures ?? 3;
    this.#openMs = options.openMs ?? 5_000;
  }

  get isOpen(): boolean {
    return this.#failures >= this.#threshold;
  }

  /** May a read go to Redis at `now`? In the open state, true once per probe. */
  allowRead(now: number): boolean {
    if (!this.isOpen) return true;
    if (this.#probing || now < this.#openUntil) return false;
    this.#probing = true;
    return true;
  }

  allowWrite(): boolean {
    return !this.isOpen;
  }

  succeeded(): void {
    this.#failures = 0;
    this.#probing = false;
  }

  failed(now: number): void {
    this.#failures += 1;
    this.#probing = false;
    if (this.isOpen) this.#openUntil = now + this.#openMs;
  }
}

export interface RedisSectionsOptions {
  client: Redis;
  /** Close the client with the store (it was opened for it). */
  ownsClient: boolean;
  /** Prepended to every key: one cache per prefix. */
  prefix: string;
  /** Longest wait for a read, ms. */
  timeoutMs: number;
  breaker?: RedisBreakerOptions;
  now: () => number;
  /** Told of each failure; never throws (the store guards it). */
  onError: (error: Error) => void;
}

/**
 * Sections in Redis. Reads are one MGET raced against the budget; writes and deletes are pipelined in
 * the background and tracked only so `flush` (tests, shutdown) can await them. Nothing here throws
 * or rejects: a failure is reported through onError, counted by the breaker, and reads as misses.
 */
export class RedisSections {
  readonly #client: Redis;
  readonly #options: RedisSectionsOptions;
  readonly #breaker: RedisBreaker;
  readonly #pending = new Set<Promise<void>>();
  #closed = false;

  constructor(options: RedisSectionsOptions) {
    this.#client = options.client;
    this.#options = options;
    this.#breaker = new RedisBreaker(options.breaker);
  }

  get breakerOpen(): boolean {
    return this.#breaker.isOpen;
  }

  /** The sections Redis holds for `keys` (absent ones left out), or an empty map when Redis is skipped, fails or is too slow. */
  async read(keys: readonly string[]): Promise<Map<string, CachedSection>> {
    const found = new Map<string, CachedSection>();
    if (keys.length === 0 || this.#closed || !this.#breaker.allowRead(this.#options.now())) return found;
    let values: (string | null)[];
    try {
      this.#assertReady();
      values = await this.#mget(keys.map((key) => this.#options.prefix + key));
    } catch (error) {
      this.#failed(error);
      return found;
    }
    this.#breaker.succeeded();
    for (const [index, value] of values.entries()) {
      if (value === null || value === undefined) continue;
      try {
        found.set(keys[index], decodeSection(value));
      } catch (error) {
        // Redis answered: a value that does not decode is a miss and an error, not a failure of Redis.
        this.#options.onError(error as Error);
      }
    }
    return found;
  }

  /**
   * Stores sections with a TTL of what is left of their life (maxAge + stale after fetchedAt, so
   * maxAge + stale for a section stored as it is fetched): Redis drops them when no router may serve
   * them any more. One pipeline, not awaited by the caller.
   */
  write(entries: readonly (readonly [string, CachedSection])[]): void {
    if (entries.length === 0 || !this.#writable()) return;
    const now = this.#options.now();
    const pipeline = this.#client.pipeline();
    let commands = 0;
    for (const [key, section] of entries) {
      const ttlMs = Math.ceil(expiresAt(section) - now);
      if (ttlMs <= 0) continue;
      pipeline.set(this.#options.prefix + key, encodeSection(section), 'PX', ttlMs);
      commands += 1;
    }
    if (commands > 0) this.#track(this.#exec(pipeline));
  }

  delete(keys: readonly string[]): void {
    if (keys.length === 0 || !this.#writable()) return;
    const pipeline = this.#client.pipeline();
    pipeline.del(...keys.map((key) => this.#options.prefix + key));
    this.#track(this.#exec(pipeline));
  }

  /** True once the client is connected (at once if it is), false after `waitMs` or when closed. Never rejects. */
  async ready(waitMs: number): Promise<boolean> {
    const client = this.#client;
    if (this.#closed) return false;
    if (client.status === 'ready') return true;
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => done(false), waitMs);
      const onReady = () => done(true);
      function done(value: boolean) {
        clearTimeout(timer);
        client.off('ready', onReady);
        resolve(value);
      }
      client.once('ready', onReady);
    });
  }

  /** Resolves once every write and delete started so far has been answered (or failed). */
  async flush(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all(this.#pending);
  }

  /** Finishes pending writes, then closes the client if it is ours. Later calls skip Redis. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.flush();
    if (!this.#options.ownsClient) return;
    if (this.#client.status === 'ready') await this.#client.quit().catch(() => this.#client.disconnect());
    else this.#client.disconnect();
  }

  /** Writes go out only while the breaker is closed and the client connected (otherwise a failure: counted, not sent). */
  #writable(): boolean {
    if (this.#closed || !this.#breaker.allowWrite()) return false;
    try {
      this.#assertReady();
      return true;
    } catch (error) {
      this.#failed(error);
      return false;
    }
  }

  /**
   * With its offline queue off, ioredis would refuse a command at once while not connected; asking
   * first spares building the command and says why in the error. A client still connecting counts as
   * well: open the store before serving, or let the first reads fail over to memory.
   */
  #assertReady(): void {
    const status = this.#client.status;
    if (status !== 'ready') throw new Error(`Redis is not connected (client ${status})`);
  }

  /** MGET raced against the budget. A reply that comes later is dropped (its rejection too, so nothing goes unhandled). */
  async #mget(keys: string[]): Promise<(string | null)[]> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new RedisTimeoutError(this.#options.timeoutMs)), this.#options.timeoutMs);
    });
    const reply = this.#client.mget(...keys);
    reply.catch(() => {});
    try {
      return await Promise.race([reply, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Runs a pipeline; one failure counted per pipeline (its first error), whatever the number of commands. */
  async #exec(pipeline: ReturnType<Redis['pipeline']>): Promise<void> {
    try {
      const results = await pipeline.exec();
      const failure = results?.find(([error]) => error)?.[0];
      if (failure) throw failure;
      this.#breaker.succeeded();
    } catch (error) {
      this.#failed(error);
    }
  }

  #track(work: Promise<void>): void {
    this.#pending.add(work);
    void work.finally(() => this.#pending.delete(work));
  }

  #failed(error: unknown): void {
    this.#breaker.failed(this.#options.now());
    this.#options.onError(error instanceof Error ? error : new Error(String(error)));
  }
}
