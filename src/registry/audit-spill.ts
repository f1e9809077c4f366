// The audit writer's spill folder: append-only JSON-lines segment files, replayed oldest first, and the file of rejected rows.
import { appendFileSync, mkdirSync, readdirSync, renameSync } from 'node:fs';
import { readFile, unlink } from 'node:fs/promises';
import path from 'node:path';

/** `<writer start, ms, 13 digits>-<first 8 hex digits of the writer id>-<segment number>.jsonl` */
const SEGMENT_NAME = /^(\d{13})-([0-9a-f]{8})-(\d+)\.jsonl$/;

/** Rows the database refused as invalid and unreadable spill lines: kept for a human, never replayed. */
const REJECTED_FILE = 'rejected.jsonl';

/**
 * A segment takes no more appends past this size, so a replay reads a bounded file into memory, and
 * an outage of hours becomes many small files rather than one huge one.
 */
const MAX_SEGMENT_BYTES = 8 * 1024 * 1024;

/** Audit rows name users and clients: readable by the router's user only. */
const FILE_MODE = 0o600;

export interface SpillSegment {
  readonly name: string;
  readonly file: string;
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

/**
 * The segments one writer owns in a folder, oldest first. Appends are synchronous (`appendFileSync`),
 * so they never interleave with each other and order on disk is the order of the calls.
 *
 * Several writers may share a folder (two routers on one data folder): each appends only to segments
 * named after itself, and takes over the segments it finds at start by renaming them (atomic, so two
 * writers starting together cannot both take one). A segment renamed away from a live writer is
 * replayed by both; the idempotent insert keeps that harmless.
 */
export class SpillFolder {
  readonly dir: string;
  readonly #prefix: string;
  readonly #segments: SpillSegment[] = [];
  #nextNumber = 0;
  #open: { segment: SpillSegment; bytes: number } | undefined;
  #dirReady = false;

  constructor(dir: string, writerId: string) {
    this.dir = dir;
    this.#prefix = `${String(Date.now()).padStart(13, '0')}-${writerId.replace(/-/g, '').slice(0, 8).toLowerCase()}`;
  }

  /**
   * Takes over the segments left in the folder by earlier writers (a crash, or a close during an
   * outage): renamed into this writer's names in their original order, ahead of anything this
   * writer spills, because they are older. Returns how many. A missing folder holds none.
   */
  adoptLeftovers(): number {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch (error) {
      if (isMissing(error)) return 0;
      throw error;
    }
    this.#dirReady = true;
    const leftovers = names
      .map((name) => ({ name, match: SEGMENT_NAME.exec(name) }))
      .filter((item): item is { name: string; match: RegExpExecArray } => item.match !== null && !item.name.startsWith(`${this.#prefix}-`))
      // Oldest writer first, then its segments in number order (numbers are not zero-padded).
      .sort((a, b) => a.match[1].localeCompare(b.match[1]) || a.match[2].localeCompare(b.match[2]) || Number(a.match[3]) - Number(b.match[3]));
    let adopted = 0;
    for (const { name } of leftovers) {
      const segment = this.#newSegment();
      try {
        renameSync(path.join(this.dir, name), segment.file);
      } catch (error) {
        if (isMissing(error)) continue; // another writer took it first
        throw error;
      }
      this.#segments.push(segment);
      adopted += 1;
    }
    return adopted;
  }

  hasSegments(): boolean {
    return this.#segments.length > 0;
  }

  /** Appends lines (each one JSON document, no newline) to the newest segment, starting one if needed. Throws on I/O errors. */
  appendSync(lines: readonly string[]): void {
    if (lines.length === 0) return;
    this.#ensureDir();
    if (!this.#open) {
      const segment = this.#newSegment();
      this.#segments.push(segment);
      this.#open = { segment, bytes: 0 };
    }
    const text = `${lines.join('\n')}\n`;
    appendFileSync(this.#open.segment.file, text, { mode: FILE_MODE });
    this.#open.bytes += text.length;
    if (this.#open.bytes >= MAX_SEGMENT_BYTES) this.#open = undefined;
  }

  /**
   * The oldest segment, to replay. If it is the one taking appends, it stops taking them (later
   * appends start a new segment), so a segment never grows while it is replayed and deleted.
   */
  head(): SpillSegment | undefined {
    const segment = this.#segments[0];
    if (segment && this.#open?.segment === segment) this.#open = undefined;
    return segment;
  }

  /** The non-empty lines of a segment; none if the file is gone (another writer replayed it). */
  async read(segment: SpillSegment): Promise<string[]> {
    let text: string;
    try {
      text = await readFile(segment.file, 'utf8');
    } catch (error) {
      if (isMissing(error)) return [];
      throw error;
    }
    return text.split('\n').filter((line) => line.length > 0);
  }

  /** Deletes a replayed segment. */
  async remove(segment: SpillSegment): Promise<void> {
    await unlink(segment.file).catch((error: unknown) => {
      if (!isMissing(error)) throw error;
    });
    // Only now: while the file exists, the writer still counts as spilling.
    this.forget(segment);
  }

  /** Stops tracking a segment without deleting it (unreadable here): a later process adopts it and tries again. */
  forget(segment: SpillSegment): void {
    const index = this.#segments.indexOf(segment);
    if (index >= 0) this.#segments.splice(index, 1);
    if (this.#open?.segment === segment) this.#open = undefined;
  }

  /** Appends records to `rejected.jsonl`. Throws on I/O errors. */
  rejectSync(records: readonly object[]): void {
    if (records.length === 0) return;
    this.#ensureDir();
    appendFileSync(path.join(this.dir, REJECTED_FILE), `${records.map((record) => JSON.stringify(record)).join('\n')}\n`, { mode: FILE_MODE });
  }

  #newSegment(): SpillSegment {
    const name = `${this.#prefix}-${this.#nextNumber}.jsonl`;
    this.#nextNumber += 1;
    return { name, file: path.join(this.dir, name) };
  }

  #ensureDir(): void {
    if (this.#dirReady) return;
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    this.#dirReady = true;
  }
}
