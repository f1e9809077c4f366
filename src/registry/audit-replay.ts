// The audit writer's replay of spill segments (step 2c of createAuditWriter): the oldest segment, batch by batch, deleted once it is all in the table.
import type { Queryable } from './database.js';
import { isReplayable, type StoredRow } from './audit-row.js';
import type { SpillFolder, SpillSegment } from './audit-spill.js';
import { insertAuditRows } from './audit-store.js';

/** What the replay needs from its writer. */
export interface SegmentReplayOptions {
  readonly db: Queryable;
  readonly spill: SpillFolder;
  /** Lines per INSERT. */
  readonly batchSize: number;
  /** Takes lines the database refused as invalid, and unreadable lines, with the reason. */
  readonly setAside: (lines: readonly string[], reason: string) => void;
  /** Told about a segment that cannot be read or deleted; the replay goes on without it. */
  readonly report: (error: Error) => void;
}

/**
 * What one step did: `replayed` rows inserted from the segment (rows already in the table not counted),
 * `removed` the segment once replayed, `failed` the INSERT (the segment resumes there next time), or
 * `none` when there is no segment to replay.
 */
export type ReplayStep = { kind: 'replayed'; rows: number } | { kind: 'removed' } | { kind: 'failed'; error: unknown } | { kind: 'none' };

/** The segment being replayed, its replayable lines, and how many of them are in the table. */
interface ReplayCursor {
  readonly segment: SpillSegment;
  readonly lines: string[];
  offset: number;
}

/** Replays the spill folder's segments, oldest first, one batch per `step`. */
export class SegmentReplay {
  readonly #options: SegmentReplayOptions;
  #cursor: ReplayCursor | undefined;

  constructor(options: SegmentReplayOptions) {
    this.#options = options;
  }

  /** One batch of the oldest segment, or its deletion once fully replayed. */
  async step(): Promise<ReplayStep> {
    const { spill, batchSize } = this.#options;
    const cursor = this.#cursor ?? (this.#cursor = await this.#openSegment());
    if (!cursor) return { kind: 'none' };
    const { segment, lines, offset } = cursor;
    if (offset >= lines.length) {
      this.#cursor = undefined;
      try {
        await spill.remove(segment);
      } catch (error) {
        spill.forget(segment);
        this.#options.report(new Error(`audit log: cannot delete replayed spill segment ${segment.file}`, { cause: error }));
      }
      return { kind: 'removed' };
    }
    const chunk = lines.slice(offset, offset + batchSize);
    try {
      // Parsed again here rather than kept from the check in #openSegment: a segment's lines take less memory than their objects.
      const rows = await insertAuditRows(this.#options.db, chunk.map((line) => JSON.parse(line) as StoredRow), chunk, this.#options.setAside);
      cursor.offset += chunk.length;
      return { kind: 'replayed', rows };
    } catch (error) {
      return { kind: 'failed', error };
    }
  }

  /** The oldest segment's replayable lines, the others set aside; undefined if there is none or it cannot be read. */
  async #openSegment(): Promise<ReplayCursor | undefined> {
    const { spill } = this.#options;
    const segment = spill.head();
    if (!segment) return undefined;
    let lines: string[];
    try {
      lines = await spill.read(segment);
    } catch (error) {
      spill.forget(segment);
      this.#options.report(new Error(`audit log: cannot read spill segment ${segment.file}; left for a later process`, { cause: error }));
      return undefined;
    }
    const bad = lines.filter((line) => !isReplayable(line));
    if (bad.length > 0) this.#options.setAside(bad, `unreadable line in spill segment ${segment.name}`);
    return { segment, lines: bad.length > 0 ? lines.filter(isReplayable) : lines, offset: 0 };
  }
}
