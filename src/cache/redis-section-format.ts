// How a cached section is stored in Redis: one string, a header line of numbers and the section's JSON text as is; read by every router on the prefix, whatever its version.
import type { CachedSection } from './cached-section.js';

/**
 * First member of every header: a value written in another format decodes as an error (a miss), never
 * as a wrong section. Format 1 also carried the section's purge tags; readers now make them from the
 * value when a purge asks (section-cache.ts), and format 1 values are still read (tags dropped).
 */
const FORMAT = 2;
const FORMAT_WITH_TAGS = 1;

/**
 * A section as one Redis string: a JSON header line, a newline, then the section's JSON text as is.
 *   [2, fetchedAt, maxAgeMs, staleMs, purgeSeq]\n{"the":"section"}
 * The JSON text is not encoded again inside the header (escaping every quote, parsing it twice per
 * hit); the header cannot contain a newline of its own, since it holds only numbers.
 */
export function encodeSection(section: CachedSection): string {
  return `[${FORMAT},${section.fetchedAt},${section.maxAgeMs},${section.staleMs},${section.purgeSeq}]\n${section.json}`;
}

/** The section a Redis value holds; throws when the value is not one (another format, truncated, written by something else). */
export function decodeSection(value: string): CachedSection {
  const newline = value.indexOf('\n');
  if (newline < 0) throw new Error('cached section in Redis has no header line');
  let header: unknown;
  try {
    header = JSON.parse(value.slice(0, newline));
  } catch {
    throw new Error('cached section in Redis has a header that is not JSON');
  }
  const known = Array.isArray(header) && ((header[0] === FORMAT && header.length === 5) || (header[0] === FORMAT_WITH_TAGS && header.length === 6));
  if (!known) throw new Error('cached section in Redis has a header of another format');
  const [, fetchedAt, maxAgeMs, staleMs, purgeSeq] = header as unknown[];
  if (!isNumber(fetchedAt) || !isNumber(maxAgeMs) || !isNumber(staleMs) || !isNumber(purgeSeq)) throw new Error('cached section in Redis has a header with a field that is not a number');
  const json = value.slice(newline + 1);
  if (json.length === 0) throw new Error('cached section in Redis has no JSON text');
  return { json, fetchedAt, maxAgeMs, staleMs, purgeSeq };
}

function isNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}
