// The in-process tier of the section cache: an LRU map bounded in (estimated) bytes rather than entries.
import type { CachedSection } from './cached-section.js';

/**
 * What one entry is taken to cost, in bytes: key length + json length + the tags' lengths (when made) + 64.
 * An estimate, not a measurement: V8 stores a one-byte string in about its length in bytes (two per
 * UTF-16 unit when it holds other characters), and 64 stands for the Map slot, the entry object and its
 * numbers. Sections are mostly JSON text, so the text dominates and the bound holds within a small factor.
 */
const ENTRY_OVERHEAD_BYTES = 64;

function entryBytes(key: string, section: CachedSection): number {
  let bytes = ENTRY_OVERHEAD_BYTES + key.length + section.json.length;
  for (const tag of section.tags ?? []) bytes += tag.length;
  return bytes;
}

/** Whether a section is still fresh (not yet only a stale fallback) at `at`, epoch ms. */
export function isFresh(section: CachedSection, at: number): boolean {
  return section.fetchedAt + section.maxAgeMs > at;
}

/** The end of a section's life (fresh, then stale), in epoch ms on the storing router's clock. */
export function expiresAt(section: CachedSection): number {
  return section.fetchedAt + section.maxAgeMs + section.staleMs;
}

interface Entry {
  section: CachedSection;
  bytes: number;
}

/**
 * 1. A Map iterates in insertion order, so its first entry is the least recently used once every
 *    use deletes and re-inserts (get and set both do).
 * 2. After a set, entries are evicted from the front until the total is at most maxBytes.
 * 3. An entry bigger than maxBytes / 8 is not kept at all: storing it would flush up to an eighth of
 *    the cache (or all of it) for one section, which then most likely goes before it is used again.
 * 4. An entry past its life is dropped when read, and the read is a miss.
 */
export class MemorySections {
  readonly #entries = new Map<string, Entry>();
  readonly #maxBytes: number;
  #bytes = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  get bytes(): number {
    return this.#bytes;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The section, marked as just used, unless missing or past its life at `now`. */
  get(key: string, now: number): CachedSection | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    this.#entries.delete(key);
    if (expiresAt(entry.section) <= now) {
      this.#bytes -= entry.bytes;
      return undefined;
    }
    this.#entries.set(key, entry);
    return entry.section;
  }

  /** The section without marking it used or dropping it when expired. */
  peek(key: string): CachedSection | undefined {
    return this.#entries.get(key)?.section;
  }

  set(key: string, section: CachedSection): void {
    this.delete(key);
    const bytes = entryBytes(key, section);
    if (bytes > this.#maxBytes / 8) return;
    this.#entries.set(key, { section, bytes });
    this.#bytes += bytes;
    this.#evict();
  }

  delete(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
  }

  #evict(): void {
    for (const [key, entry] of this.#entries) {
      if (this.#bytes <= this.#maxBytes) return;
      this.#entries.delete(key);
      this.#bytes -= entry.bytes;
    }
  }
}
