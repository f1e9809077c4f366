// The audit writer: records one row per request off the request path, buffering in memory, spilling to disk during an outage and replaying afterwards.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { RingBuffer } from './audit-buffer.js';
import { isReplayable, toLine, toRow, type AuditEntry, type StoredRow } from './audit-row.js';
import { SpillFolder, type SpillSegment } from './audit-spill.js';
import { insertAuditRows, pingAuditStore } from './audit-store.js';
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
 *    committed just before its connection died, then spilled and replayed, is not duplicated.
 */
export function createAuditWriter(options: AuditWriterOptions): AuditWriter {
  const settings = resolveOptions(options);
  const { db, batchSize } = settings;
  const onError = options.onError;
  const writerId = randomUUID();
  const spill = new SpillFolder(settings.spillDir, writerId);
  const buffer = new RingBuffer<AuditEntry>(settings.bufferCapacity);
  const counts = { written: 0, spilled: 0, replayed: 0, rejected: 0, dropped: 0 };
  const waiters: { target: number; resolve: () => void; reject: (error: Error) => void }[] = [];

  let healthy = true;
  /** Entries with a smaller sequence number are due: the interval passed or `flush` asked for them. */
  let drainTarget = 0;
  let inFlight: { count: number; spilledEarly: boolean } | undefined;
  let cursor: { segment: SpillSegment; lines: string[]; offset: number } | undefined;
  let pumping: Promise<void> | undefined;
  let probing: Promise<void> | undefined;
  let flushTimer: NodeJS.Timeout | undefined;
  let probeTimer: NodeJS.Timeout | undefined;
  let kickTimer: NodeJS.Immediate | undefined;
  let probeDelay = settings.probeIntervalMs;
  /** The last failure to append to the spill folder; cleared by the next success. */
  let spillError: Error | undefined;
  let closing = false;
  let closed = false;
  let closePromise: Promise<void> | undefined;

  function report(error: Error): void {
    try {
      onError?.(error);
    } catch {
      // A failing error handler must not stop the writer.
    }
  }

  function noteSpillError(error: unknown): void {
    if (!spillError) report(new Error(`audit log: cannot write the spill folder ${spill.dir}`, { cause: error }));
    spillError = asError(error);
  }

  function setAside(lines: readonly string[], reason: string): void {
    try {
      spill.rejectSync(lines.map((line) => ({ reason, line })));
      counts.rejected += lines.length;
    } catch (error) {
      counts.dropped += lines.length;
      noteSpillError(error);
    }
    report(new Error(`audit log: ${lines.length} row(s) set aside in ${path.join(spill.dir, 'rejected.jsonl')}: ${reason}`));
  }

  function settleWaiters(final = false): void {
    for (let i = waiters.length - 1; i >= 0; i -= 1) {
      const waiter = waiters[i];
      if (waiter.target <= buffer.headSeq) waiter.resolve();
      else if (final) waiter.reject(new Error(`audit log: ${buffer.length} entries could be written neither to the database nor to ${spill.dir}`, { cause: spillError }));
      else continue;
      waiters.splice(i, 1);
    }
  }

  /** Appends the oldest `count` buffered entries to the spill file (4, 2b). False if the folder refused them. */
  function spillOldest(count: number): boolean {
    const start = buffer.headSeq;
    const entries = buffer.peek(Math.max(count, inFlight && !inFlight.spilledEarly ? inFlight.count : 0));
    try {
      spill.appendSync(entries.map((entry, i) => toLine(entry, writerId, start + i)));
    } catch (error) {
      noteSpillError(error);
      return false;
    }
    spillError = undefined;
    let fresh = entries.length;
    if (inFlight && !inFlight.spilledEarly) {
      // The batch in flight sits at the front: it is now on disk whatever its INSERT does (4).
      inFlight.spilledEarly = true;
      fresh -= inFlight.count;
    }
    counts.spilled += fresh;
    buffer.drop(entries.length);
    settleWaiters();
    return true;
  }

  function dueCount(): number {
    const n = buffer.length;
    if (n === 0) return 0;
    if (closing || n >= batchSize) return n;
    return Math.min(n, Math.max(0, drainTarget - buffer.headSeq));
  }

  function enterOutage(error: unknown): void {
    if (healthy) report(new Error(`audit log: the database did not take a batch; spilling to ${spill.dir} until it answers`, { cause: error }));
    healthy = false;
    armProbe();
  }

  /** 2a. */
  async function writeBatch(): Promise<void> {
    const start = buffer.headSeq;
    const entries = buffer.peek(batchSize);
    const batch = { count: entries.length, spilledEarly: false };
    inFlight = batch;
    try {
      counts.written += await insertAuditRows(db, entries.map((entry, i) => toRow(entry, writerId, start + i)), undefined, setAside);
      probeDelay = settings.probeIntervalMs;
      if (!batch.spilledEarly) buffer.drop(batch.count);
      settleWaiters();
    } catch (error) {
      enterOutage(error);
      // Already on disk (4): count it as spilled now that the database did not take it. Otherwise it is
      // still at the front of the buffer, and 2b spills it first.
      if (batch.spilledEarly) counts.spilled += batch.count;
    } finally {
      inFlight = undefined;
    }
  }

  /** 2c: one batch of the oldest segment, or its deletion once fully replayed. */
  async function replayBatch(): Promise<void> {
    if (!cursor) {
      const segment = spill.head();
      if (!segment) return;
      let lines: string[];
      try {
        lines = await spill.read(segment);
      } catch (error) {
        spill.forget(segment);
        report(new Error(`audit log: cannot read spill segment ${segment.file}; left for a later process`, { cause: error }));
        return;
      }
      const bad = lines.filter((line) => !isReplayable(line));
      if (bad.length > 0) setAside(bad, `unreadable line in spill segment ${segment.name}`);
      cursor = { segment, lines: bad.length > 0 ? lines.filter(isReplayable) : lines, offset: 0 };
    }
    const { segment, lines, offset } = cursor;
    if (offset >= lines.length) {
      cursor = undefined;
      try {
        await spill.remove(segment);
      } catch (error) {
        spill.forget(segment);
        report(new Error(`audit log: cannot delete replayed spill segment ${segment.file}`, { cause: error }));
      }
      if (!spill.hasSegments()) probeDelay = settings.probeIntervalMs;
      return;
    }
    const chunk = lines.slice(offset, offset + batchSize);
    try {
      // Parsed again here rather than kept from the check above: a segment's lines take less memory than their objects.
      counts.replayed += await insertAuditRows(db, chunk.map((line) => JSON.parse(line) as StoredRow), chunk, setAside);
      cursor.offset += chunk.length;
    } catch (error) {
      enterOutage(error);
    }
  }

  async function runPump(): Promise<void> {
    // Start on a later microtask: `pumping` is assigned before this can finish and clear it.
    await Promise.resolve();
    try {
      for (;;) {
        const due = dueCount();
        if (due > 0 && healthy && !spill.hasSegments()) await writeBatch();
        else if (due > 0) {
          if (!spillOldest(Math.min(due, batchSize))) break; // the folder refuses: keep them in memory, retry on the next tick
          // Batch by batch, letting requests run in between: a full buffer is thousands of lines to format.
          if (dueCount() > 0) await new Promise((resolve) => setImmediate(resolve));
        } else if (healthy && spill.hasSegments() && !closing) await replayBatch();
        else break;
      }
    } catch (error) {
      report(asError(error)); // a bug here must not become an unhandled rejection
    } finally {
      // Cleared in the same turn as the last decision, so a caller never sees a pump that will not look again.
      pumping = undefined;
      settleWaiters(true);
      if (buffer.length > 0) armFlushTimer();
    }
  }

  function schedulePump(): Promise<void> {
    pumping ??= runPump();
    return pumping;
  }

  function kick(): void {
    if (kickTimer || pumping || closed) return;
    // Not now: `record` returns first, and the INSERT is built on a later turn of the event loop.
    kickTimer = setImmediate(function flushFullBatch() {
      kickTimer = undefined;
      void schedulePump();
    });
    kickTimer.unref();
  }

  function armFlushTimer(): void {
    if (flushTimer || closing) return;
    flushTimer = setTimeout(function flushTick() {
      flushTimer = undefined;
      drainTarget = Math.max(drainTarget, buffer.tailSeq);
      void schedulePump();
    }, settings.flushIntervalMs);
    flushTimer.unref();
  }

  function armProbe(): void {
    if (probeTimer || probing || closing) return;
    const delay = probeDelay;
    probeDelay = Math.min(probeDelay * 2, settings.probeMaxIntervalMs);
    probeTimer = setTimeout(function probeTick() {
      probeTimer = undefined;
      probing = probe();
    }, delay);
    probeTimer.unref();
  }

  async function probe(): Promise<void> {
    await Promise.resolve(); // as in runPump: `probing` is assigned before it is cleared
    const answered = await pingAuditStore(db); // if not, still down: the next probe waits longer
    probing = undefined;
    if (closing) return;
    if (answered) {
      healthy = true;
      void schedulePump();
    } else armProbe();
  }

  function record(entry: AuditEntry): void {
    try {
      if (typeof entry !== 'object' || entry === null) {
        counts.dropped += 1;
        return;
      }
      if (buffer.full && !spillOldest(batchSize)) {
        counts.dropped += 1;
        return;
      }
      buffer.push(entry);
      if (closed) {
        spillOldest(buffer.length); // nothing runs any more: straight to disk, for the next process
      } else if (closing) {
        drainTarget = buffer.tailSeq;
        void schedulePump();
      } else {
        if (!flushTimer) armFlushTimer();
        if (buffer.length >= batchSize) kick();
      }
    } catch (error) {
      counts.dropped += 1;
      report(asError(error));
    }
  }

  function flush(): Promise<void> {
    if (buffer.length === 0) return Promise.resolve();
    const target = buffer.tailSeq;
    drainTarget = Math.max(drainTarget, target);
    return new Promise<void>((resolve, reject) => {
      waiters.push({ target, resolve, reject });
      void schedulePump();
    });
  }

  function close(): Promise<void> {
    closePromise ??= (async function closeWriter() {
      closing = true;
      clearTimeout(flushTimer);
      clearTimeout(probeTimer);
      if (kickTimer) clearImmediate(kickTimer);
      flushTimer = probeTimer = kickTimer = undefined;
      const drained = (async function drain() {
        await flush();
        // An in-flight replay batch or probe finishes; nothing starts again once `closing` is set.
        while (pumping || probing) await (pumping ?? probing);
        return 'drained' as const;
      })();
      let deadline: NodeJS.Timeout | undefined;
      const expired = new Promise<'expired'>((resolve) => {
        deadline = setTimeout(resolve, settings.closeTimeoutMs, 'expired');
      });
      try {
        if ((await Promise.race([drained, expired])) === 'expired') {
          // The database hangs: the rest (an unsettled batch included, 4) goes to disk for the next process.
          if (buffer.length > 0 && !spillOldest(buffer.length)) throw new Error(`audit log: ${buffer.length} entries could be written neither to the database nor to ${spill.dir}`, { cause: spillError });
          report(new Error(`audit log: the database did not answer within ${settings.closeTimeoutMs} ms while closing; the rest is in ${spill.dir}`));
        }
      } finally {
        clearTimeout(deadline);
        closed = true;
      }
    })();
    return closePromise;
  }

  function stats(): AuditStats {
    return { buffered: buffer.length, ...counts, spilling: !healthy || spill.hasSegments() };
  }

  try {
    if (spill.adoptLeftovers() > 0) kick();
  } catch (error) {
    report(new Error(`audit log: cannot read the spill folder ${spill.dir}; leftovers stay there`, { cause: error }));
  }

  return { record, flush, close, stats };
}
