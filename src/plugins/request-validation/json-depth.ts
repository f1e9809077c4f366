// A streaming scan of JSON text that stops as soon as objects and arrays nest deeper than a limit.

/**
 * Why our own: JSON.parse has no depth limit, and what comes after it (variable coercion, the cost
 * walk, logging) recurses over the parsed value, so a body of 100,000 nested arrays must be refused
 * before it is parsed. No well-kept library checks depth on raw text without parsing it; the scan
 * is a dozen lines.
 *
 * How it works, one byte (or UTF-16 unit) at a time, with no allocation:
 * 1. Outside a string, `{` and `[` open a level and `}` and `]` close one; the deepest level seen so
 *    far is checked against the limit when it opens, so the scan stops at the first byte too deep.
 * 2. `"` enters a string; inside it, `\` escapes the next unit and an unescaped `"` leaves it, so
 *    brackets inside strings are not counted.
 * 3. Multi-byte UTF-8 sequences contain no byte below 0x80, so scanning bytes never mistakes part
 *    of a character for a bracket or a quote.
 * The scan does not validate JSON (JSON.parse does that afterwards); on malformed text it only
 * errs towards counting more depth, never less, which can only refuse a body that is invalid anyway.
 * State is kept between chunks, so a body is scanned as it arrives.
 */
export class JsonDepthScanner {
  /** Deepest nesting allowed (the top-level object of a request body is level 1). */
  readonly maxDepth: number;
  #depth = 0;
  #inString = false;
  #escaped = false;
  #exceeded = false;

  constructor(maxDepth: number) {
    this.maxDepth = maxDepth;
  }

  /** True once the text nested deeper than the limit; further chunks are ignored. */
  get exceeded(): boolean {
    return this.#exceeded;
  }

  /** Scans the next chunk (bytes of UTF-8, or a string). Returns false when the limit was passed. */
  feed(chunk: Uint8Array | string): boolean {
    if (this.#exceeded) return false;
    let depth = this.#depth;
    let inString = this.#inString;
    let escaped = this.#escaped;
    const max = this.maxDepth;
    const text = typeof chunk === 'string';
    const length = chunk.length;
    for (let i = 0; i < length; i++) {
      const unit = text ? chunk.charCodeAt(i) : chunk[i];
      if (inString) {
        if (escaped) escaped = false;
        else if (unit === 0x5c /* \ */) escaped = true;
        else if (unit === 0x22 /* " */) inString = false;
      } else if (unit === 0x22) {
        inString = true;
      } else if (unit === 0x7b /* { */ || unit === 0x5b /* [ */) {
        if (++depth > max) {
          this.#exceeded = true;
          return false;
        }
      } else if (unit === 0x7d /* } */ || unit === 0x5d /* ] */) {
        depth--;
      }
    }
    this.#depth = depth;
    this.#inString = inString;
    this.#escaped = escaped;
    return true;
  }
}

/** Whether a whole JSON text nests deeper than `maxDepth`. */
export function jsonDeeperThan(text: string, maxDepth: number): boolean {
  return !new JsonDepthScanner(maxDepth).feed(text);
}
