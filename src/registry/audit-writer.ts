// The audit writer: records one row per request off the request path, buffering in memory, spilling to disk during an outage and replaying afterwards.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { waitWithin } from '../errors/wait-within.js';
import { RingBuffer } from './audit-buffer.js';
import { SegmentReplay } from './audit-replay.js';
import { toLine, toRow, type AuditEntry } from './audit-row.js';
import { SpillFolder } from './audit-spill.js';
import { insertAuditRows } from './audit-store.js';
import { OutageProbe } from './audit-probe.js';
import { resolveOptions, type AuditWriterOptions } from './audit-writer-options.js';

export interface AuditStats {
  /** Entries in memory, not yet in the database or a spill file (metric `switchyard_audit_buffered`). */
  buffered: number;
  /** Rows inserted straight from memory. */
  written: number;
  /**
   * Entries appended to spill files (metric `switchyard_audit_spilled_total`). A batch copied to disk
   * while its INSERT was in flight counts only if that INSERT fails, so the counter never goes down.
   */
  spilled: number;
  /** Rows inserted from spill files, this writer's or left by an earlier process; rows already present are not counted. */
  replayed: number;
  /** Rows the database refused as invalid, and unreadable spill lines: set aside in `<spillDir>/rejected.jsonl`, not retried. */
  rejected: number;
  /** Entries that could be written neither to the database nor to the spill folder. */
  dropped: number;
  /** The database is unreachable, or spill files wait to be replayed: new entries go to the spill file. */
  spilling: boolean;
}

export interface AuditWriter {
  /** Queues one entry. Synchronous and O(1); never throws, never waits for the database. */
  record(entry: AuditEntry): void;
  /** Resolves when every entry recorded before the call is in the database or a spill file. Rejects only if the spill folder refused them too. */
  flush(): Promise<void>;
  /**
   * For SIGTERM: stops the timers, flushes, lets an in-flight replay batch finish, and leaves nothing
   * scheduled; within `closeTimeoutMs` even if the database hangs. Later entries are spilled synchronously.
   */
  close(): Promise<void>;
  stats(): AuditStats;
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * Creates the audit writer. How entries travel:
 *
 * 1. `record` pushes the entry into a ring buffer and returns. Its sequence number in the buffer,
 *    with the writer's random id, is the row's idempotency key. A flush starts `flushIntervalMs`
 *    after the first waiting entry, or on the next turn of the event loop once `batchSize` wait.
 * 2. One pump at a time moves entries out, oldest first, so rows keep their recording order:
 *    a. database healthy and no spill segments: INSERT the oldest `batchSize` entries. They leave the
 *       buffer only once the INSERT succeeded, so a failed batch is still at the front.
 *    b. otherwise (outage, or segments waiting): append them, batch by batch, to the newest spill
 *       segment. Segments hold only entries older than anything in memory, so replaying them before
 *       writing memory keeps the order. Entries are due when `batchSize` wait, the interval passed,
 *       or `flush`/`close` asked, in every mode, so an outage also appends in batches.
 *    c. database healthy and segments waiting: replay the oldest segment in batches (it takes no more
 *       appends meanwhile), then delete it. Entries due meanwhile go to a newer segment (b).
 * 3. A failed INSERT marks the database unhealthy (2b takes over from that batch on) and arms a probe
 *    (`select 1`) after `probeIntervalMs`, doubling up to `probeMaxIntervalMs`. When it answers, 2c
 *    replays; a failure mid-replay goes back to 3, and the segment resumes where it stopped. Rows the
 *    database rejects as invalid (SQLSTATE 22/23) are isolated one by one and set aside, so one bad
 *    row can neither block the queue nor be mistaken for an outage.
 * 4. A full buffer appends its oldest `batchSize` entries to the spill file synchronously to make room
 *    (those are older than everything else in memory, so order holds). If they include the batch in
 *    flight, that batch is on disk either way; its INSERT outcome only decides how it is counted.
 * 5. Segments left in `spillDir` by an earlier process are adopted at creation and replayed first.
 * 6. Every key is written at most once to the table (`on conflict do nothing`), so a batch that was
 *    committed just before its connection died, then spilled and replayed, is not duplicated. The key
 *    is (writer id, sequence number, `at`): the table is partitioned by `at` (migration 011), and a
 *    row's `at` is fixed when it is first shaped, so a replay meets the row it repeats in its partition.
 */
export function createAuditWriter(options: AuditWriterOptions): AuditWriter {
  const log = new AuditLog(options);
  log.adoptLeftovers();
  return {
    record: (entry) => log.record(entry),
    flush: () => log.flush(),
    close: () => log.close(),
    stats: () => log.stats(),
  };
}

/**
 * Where the writer is in its life. `open`: entries wait for their interval or a full batch. `closing`:
 * `close` was called; every entry is due at once, no timer is armed and no replay or probe starts.
 * `closed`: nothing runs any more; an entry recorded now goes straight to the spill file.
 */
type Lifecycle = 'open' | 'closing' | 'closed';

/** The database as the writer last saw it: `down` from a failed INSERT (3) until a probe answers. */
type Link = 'healthy' | 'down';

/** What the pump does next (2): `write` (2a), `spill` (2b), `replay` (2c), or stop. */
type Step = 'write' | 'spill' | 'replay' | 'idle';

/** A batch whose INSERT is under way; `spilledEarly` once a full buffer copied it to disk meanwhile (4). */
interface InFlight {
  readonly count: number;
  spilledEarly: boolean;
}

/** The writer's state and transitions; `createAuditWriter` above explains the algorithm, whose step numbers the comments cite. */
class AuditLog {
  readonly #settings: ReturnType<typeof resolveOptions>;
  readonly #onError: ((error: Error) => void) | undefined;
  readonly #writerId = randomUUID();
  readonly #spill: SpillFolder;
  readonly #buffer: RingBuffer<AuditEntry>;
  readonly #replay: SegmentReplay;
  readonly #probe: OutageProbe;
  readonly #counts = { written: 0, spilled: 0, replayed: 0, rejected: 0, dropped: 0 };
  readonly #waiters: { target: number; resolve: () => void; reject: (error: Error) => void }[] = [];

  #lifecycle: Lifecycle = 'open';
  #link: Link = 'healthy';
  /** Entries with a smaller sequence number are due: the interval passed or `flush` asked for them. */
  #drainTarget = 0;
  #inFlight: InFlight | undefined;
  /** The pump under way, at most one (and the probe's, at most one, in `#probe`). */
  #pumping: Promise<void> | undefined;
  /** Armed timers: the interval flush, the full-batch kick (and the next probe, in `#probe`). All unref'd; `close` clears them. */
  #flushTimer: NodeJS.Timeout | undefined;
  #kickTimer: NodeJS.Immediate | undefined;
  /** The last failure to append to the spill folder; cleared by the next success. */
  #spillError: Error | undefined;
  #closed: Promise<void> | undefined;

  constructor(options: AuditWriterOptions) {
    this.#settings = resolveOptions(options);
    this.#onError = options.onError;
    this.#spill = new SpillFolder(this.#settings.spillDir, this.#writerId);
    this.#buffer = new RingBuffer<AuditEntry>(this.#settings.bufferCapacity);
    this.#probe = new OutageProbe({
      db: this.#settings.db,
      intervalMs: this.#settings.probeIntervalMs,
      maxIntervalMs: this.#settings.probeMaxIntervalMs,
      isOpen: () => this.#lifecycle === 'open',
      onAnswer: () => {
        this.#link = 'healthy';
        void this.#schedulePump();
      },
    });
    this.#replay = new SegmentReplay({ db: this.#settings.db, spill: this.#spill, batchSize: this.#settings.batchSize, setAside: this.#setAside, report: (error) => this.#report(error) });
  }

  /** 5. */
  adoptLeftovers(): void {
    try {
      if (this.#spill.adoptLeftovers() > 0) this.#kick();
    } catch (error) {
      this.#report(new Error(`audit log: cannot read the spill folder ${this.#spill.dir}; leftovers stay there`, { cause: error }));
    }
  }

  record(entry: AuditEntry): void {
    try {
      if (typeof entry !== 'object' || entry === null) {
        this.#counts.dropped += 1;
        return;
      }
      if (this.#buffer.full && !this.#spillOldest(this.#settings.batchSize)) {
        this.#counts.dropped += 1;
        return;
      }
      this.#buffer.push(entry);
      if (this.#lifecycle === 'closed') {
        this.#spillOldest(this.#buffer.length); // nothing runs any more: straight to disk, for the next process
      } else if (this.#lifecycle === 'closing') {
        this.#drainTarget = this.#buffer.tailSeq;
        void this.#schedulePump();
      } else {
        if (!this.#flushTimer) this.#armFlushTimer();
        if (this.#buffer.length >= this.#settings.batchSize) this.#kick();
      }
    } catch (error) {
      this.#counts.dropped += 1;
      this.#report(asError(error));
    }
  }

  flush(): Promise<void> {
    if (this.#buffer.length === 0) return Promise.resolve();
    const target = this.#buffer.tailSeq;
    this.#drainTarget = Math.max(this.#drainTarget, target);
    return new Promise<void>((resolve, reject) => {
      this.#waiters.push({ target, resolve, reject });
      void this.#schedulePump();
    });
  }

  close(): Promise<void> {
    return (this.#closed ??= this.#closeWriter());
  }

  stats(): AuditStats {
    return { buffered: this.#buffer.length, ...this.#counts, spilling: this.#link === 'down' || this.#spill.hasSegments() };
  }

  async #closeWriter(): Promise<void> {
    this.#lifecycle = 'closing';
    clearTimeout(this.#flushTimer);
    this.#probe.stop();
    if (this.#kickTimer) clearImmediate(this.#kickTimer);
    this.#flushTimer = this.#kickTimer = undefined;
    const { closeTimeoutMs } = this.#settings;
    try {
      if ((await waitWithin(this.#drain(), closeTimeoutMs)) === 'expired') {
        // The database hangs: the rest (an unsettled batch included, 4) goes to disk for the next process.
        if (this.#buffer.length > 0 && !this.#spillOldest(this.#buffer.length)) throw this.#unsaved();
        this.#report(new Error(`audit log: the database did not answer within ${closeTimeoutMs} ms while closing; the rest is in ${this.#spill.dir}`));
      }
    } finally {
      this.#lifecycle = 'closed';
    }
  }

  async #drain(): Promise<void> {
    await this.flush();
    // An in-flight replay batch or probe finishes; nothing starts again once closing.
    while (this.#pumping || this.#probe.running) await (this.#pumping ?? this.#probe.running);
  }

  #unsaved(): Error {
    return new Error(`audit log: ${this.#buffer.length} entries could be written neither to the database nor to ${this.#spill.dir}`, { cause: this.#spillError });
  }

  #report(error: Error): void {
    try {
      this.#onError?.(error);
    } catch {
      // A failing error handler must not stop the writer.
    }
  }

  #noteSpillError(error: unknown): void {
    if (!this.#spillError) this.#report(new Error(`audit log: cannot write the spill folder ${this.#spill.dir}`, { cause: error }));
    this.#spillError = asError(error);
  }

  #setAside = (lines: readonly string[], reason: string): void => {
    try {
      this.#spill.rejectSync(lines.map((line) => ({ reason, line })));
      this.#counts.rejected += lines.length;
    } catch (error) {
      this.#counts.dropped += lines.length;
      this.#noteSpillError(error);
    }
    this.#report(new Error(`audit log: ${lines.length} row(s) set aside in ${path.join(this.#spill.dir, 'rejected.jsonl')}: ${reason}`));
  };

  #settleWaiters(final = false): void {
    for (let i = this.#waiters.length - 1; i >= 0; i -= 1) {
      const waiter = this.#waiters[i];
      if (waiter.target <= this.#buffer.headSeq) waiter.resolve();
      else if (final) waiter.reject(this.#unsaved());
      else continue;
      this.#waiters.splice(i, 1);
    }
  }

  /** Appends the oldest `count` buffered entries to the spill file (4, 2b). False if the folder refused them. */
  #spillOldest(count: number): boolean {
    const inFlight = this.#inFlight && !this.#inFlight.spilledEarly ? this.#inFlight : undefined;
    const start = this.#buffer.headSeq;
    const entries = this.#buffer.peek(Math.max(count, inFlight ? inFlight.count : 0));
    try {
      this.#spill.appendSync(entries.map((entry, i) => toLine(entry, this.#writerId, start + i)));
    } catch (error) {
      this.#noteSpillError(error);
      return false;
    }
    this.#spillError = undefined;
    let fresh = entries.length;
    if (inFlight) {
      // The batch in flight sits at the front: it is now on disk whatever its INSERT does (4).
      inFlight.spilledEarly = true;
      fresh -= inFlight.count;
    }
    this.#counts.spilled += fresh;
    this.#buffer.drop(entries.length);
    this.#settleWaiters();
    return true;
  }

  #dueCount(): number {
    const n = this.#buffer.length;
    if (n === 0) return 0;
    if (this.#lifecycle !== 'open' || n >= this.#settings.batchSize) return n;
    return Math.min(n, Math.max(0, this.#drainTarget - this.#buffer.headSeq));
  }

  /** The transition at the heart of the pump (2). */
  #nextStep(): Step {
    const segments = this.#spill.hasSegments();
    if (this.#dueCount() > 0) return this.#link === 'healthy' && !segments ? 'write' : 'spill';
    if (this.#link === 'healthy' && segments && this.#lifecycle === 'open') return 'replay';
    return 'idle';
  }

  /** 3. */
  #enterOutage(error: unknown): void {
    if (this.#link === 'healthy') this.#report(new Error(`audit log: the database did not take a batch; spilling to ${this.#spill.dir} until it answers`, { cause: error }));
    this.#link = 'down';
    this.#probe.arm();
  }

  /** 2a. */
  async #writeBatch(): Promise<void> {
    const start = this.#buffer.headSeq;
    const entries = this.#buffer.peek(this.#settings.batchSize);
    const batch: InFlight = (this.#inFlight = { count: entries.length, spilledEarly: false });
    try {
      const rows = entries.map((entry, i) => toRow(entry, this.#writerId, start + i));
      this.#counts.written += await insertAuditRows(this.#settings.db, rows, undefined, this.#setAside);
      this.#probe.reset();
      if (!batch.spilledEarly) this.#buffer.drop(batch.count);
      this.#settleWaiters();
    } catch (error) {
      this.#enterOutage(error);
      // Already on disk (4): count it as spilled now that the database did not take it. Otherwise it is
      // still at the front of the buffer, and 2b spills it first.
      if (batch.spilledEarly) this.#counts.spilled += batch.count;
    } finally {
      this.#inFlight = undefined;
    }
  }

  /** 2c: one batch of the oldest segment, or its deletion once fully replayed. */
  async #replayBatch(): Promise<void> {
    const step = await this.#replay.step();
    if (step.kind === 'replayed') this.#counts.replayed += step.rows;
    else if (step.kind === 'failed') this.#enterOutage(step.error);
    else if (step.kind === 'removed' && !this.#spill.hasSegments()) this.#probe.reset();
  }

  async #runPump(): Promise<void> {
    // Start on a later microtask: `#pumping` is assigned before this can finish and clear it.
    await Promise.resolve();
    try {
      for (let step = this.#nextStep(); step !== 'idle'; step = this.#nextStep()) {
        if (step === 'write') await this.#writeBatch();
        else if (step === 'replay') await this.#replayBatch();
        else {
          if (!this.#spillOldest(Math.min(this.#dueCount(), this.#settings.batchSize))) break; // the folder refuses: keep them in memory, retry on the next tick
          // Batch by batch, letting requests run in between: a full buffer is thousands of lines to format.
          if (this.#dueCount() > 0) await new Promise((resolve) => setImmediate(resolve));
        }
      }
    } catch (error) {
      this.#report(asError(error)); // a bug here must not become an unhandled rejection
    } finally {
      // Cleared in the same turn as the last decision, so a caller never sees a pump that will not look again.
      this.#pumping = undefined;
      this.#settleWaiters(true);
      if (this.#buffer.length > 0) this.#armFlushTimer();
    }
  }

  #schedulePump(): Promise<void> {
    return (this.#pumping ??= this.#runPump());
  }

  #kick(): void {
    if (this.#kickTimer || this.#pumping || this.#lifecycle === 'closed') return;
    // Not now: `record` returns first, and the INSERT is built on a later turn of the event loop.
    const flushFullBatch = () => {
      this.#kickTimer = undefined;
      void this.#schedulePump();
    };
    this.#kickTimer = setImmediate(flushFullBatch);
    this.#kickTimer.unref();
  }

  #armFlushTimer(): void {
    if (this.#flushTimer || this.#lifecycle !== 'open') return;
    const flushTick = () => {
      this.#flushTimer = undefined;
      this.#drainTarget = Math.max(this.#drainTarget, this.#buffer.tailSeq);
      void this.#schedulePump();
    };
    this.#flushTimer = setTimeout(flushTick, this.#settings.flushIntervalMs);
    this.#flushTimer.unref();
  }
}
