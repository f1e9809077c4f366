// Reads a GraphQL answer as its bytes arrive: one JSON body, or each part of a multipart/mixed stream (incremental delivery), timed when complete.
import { performance } from 'node:perf_hooks';

/** Where MultipartParts is in the stream: before the first delimiter, looking for the next one, after one, in a part's headers or body, or past the end. */
type ReaderState = 'start' | 'seek' | 'after-delimiter' | 'headers' | 'body' | 'closed';

/**
 * Why a reader of our own: the bench must know when each part's bytes were complete. `meros` (a dev
 * dependency, for the tests' clients) hands a part over only when the delimiter after it has arrived, and
 * @graphql-tools/executor-http hands back ExecutionResults it has already merged, its merging timed with the
 * router. This reader does only what the bench needs, on the framing of RFC 2046 §5.1.1 as graphql-yoga writes it:
 *
 *   CRLF "--" boundary CRLF  headers CRLF CRLF  body  CRLF "--" boundary CRLF ... body CRLF "--" boundary "--" CRLF
 *
 * 1. the body is scanned for the delimiter `CRLF--boundary` (the first one may come without its CRLF when
 *    there is no preamble); after a delimiter, `--` closes the stream, anything else up to CRLF is padding;
 * 2. a part's headers run to the first empty line; only Content-Length is read;
 * 3. a part with a Content-Length is complete as soon as that many bytes have arrived, without waiting for
 *    the next delimiter (the router may send it later, with the next part); one without, when its closing
 *    delimiter arrives. A JSON body cannot hold the delimiter: JSON strings escape CR and LF.
 * Bytes are kept only until their part is complete, so a long stream holds one part at a time.
 */
export class MultipartParts {
  readonly #delimiter: Buffer;
  #buffer: Buffer = Buffer.alloc(0);
  #state: ReaderState = 'start';
  #bodyLength: number | undefined;

  constructor(boundary: string) {
    this.#delimiter = Buffer.from(`\r\n--${boundary}`);
  }

  /** Whether the closing delimiter has been read: nothing after it is a part. */
  get closed(): boolean {
    return this.#state === 'closed';
  }

  /** Adds the next bytes and returns the bodies of the parts they completed, in order. */
  push(chunk: Uint8Array): string[] {
    if (this.#state === 'closed') return [];
    this.#buffer = this.#buffer.length ? Buffer.concat([this.#buffer, chunk]) : Buffer.from(chunk);
    const parts: string[] = [];
    for (;;) {
      const progressed = this.#step(parts);
      if (!progressed) return parts;
    }
  }

  /** One move of the state machine; false when it needs more bytes. */
  #step(parts: string[]): boolean {
    const buffer = this.#buffer;
    switch (this.#state) {
      case 'start':
      case 'seek': {
        // At the very start the delimiter may lack its CRLF (no preamble): `--boundary` first.
        const bare = this.#delimiter.subarray(2);
        if (this.#state === 'start' && buffer.length >= bare.length && buffer.subarray(0, bare.length).equals(bare)) return this.#consume(bare.length, 'after-delimiter');
        const at = buffer.indexOf(this.#delimiter);
        if (at === -1) {
          // Keep what could be the beginning of a delimiter split across chunks.
          this.#buffer = buffer.subarray(Math.max(0, buffer.length - this.#delimiter.length + 1));
          return false;
        }
        return this.#consume(at + this.#delimiter.length, 'after-delimiter');
      }
      case 'after-delimiter': {
        if (buffer.length < 2) return false;
        if (buffer[0] === 0x2d && buffer[1] === 0x2d) {
          this.#buffer = Buffer.alloc(0);
          this.#state = 'closed';
          return false;
        }
        const lineEnd = buffer.indexOf('\r\n');
        return lineEnd === -1 ? false : this.#consume(lineEnd + 2, 'headers');
      }
      case 'headers': {
        if (buffer.length < 2) return false;
        // No headers at all: the empty line comes at once.
        const end = buffer[0] === 0x0d && buffer[1] === 0x0a ? 0 : buffer.indexOf('\r\n\r\n');
        if (end === -1) return false;
        const match = /^content-length:\s*(\d+)\s*$/im.exec(buffer.subarray(0, end).toString('latin1'));
        this.#bodyLength = match ? Number(match[1]) : undefined;
        return this.#consume(end === 0 ? 2 : end + 4, 'body');
      }
      case 'body': {
        if (this.#bodyLength !== undefined) {
          if (buffer.length < this.#bodyLength) return false;
          parts.push(buffer.subarray(0, this.#bodyLength).toString('utf8'));
          return this.#consume(this.#bodyLength, 'seek');
        }
        const at = buffer.indexOf(this.#delimiter);
        if (at === -1) return false;
        parts.push(buffer.subarray(0, at).toString('utf8'));
        return this.#consume(at + this.#delimiter.length, 'after-delimiter');
      }
      case 'closed':
        return false;
    }
  }

  #consume(bytes: number, next: ReaderState): boolean {
    this.#buffer = this.#buffer.subarray(bytes);
    this.#state = next;
    return true;
  }
}

/** The boundary of a `multipart/mixed` Content-Type (`boundary="-"` or `boundary=-`), or undefined for any other type. */
export function multipartBoundary(contentType: string | undefined): string | undefined {
  if (!contentType || !/^\s*multipart\/mixed\s*(;|$)/i.test(contentType)) return undefined;
  const match = /;\s*boundary\s*=\s*(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return match ? (match[1] ?? match[2]) : undefined;
}

/**
 * Reads `body` to its end and calls `onPayload` with each payload's JSON text and the moment
 * (`performance.now()`) its last byte arrived: once for a JSON answer (at the end of the body), once per
 * part for `multipart/mixed`. Throws on a multipart type without a boundary.
 */
export async function readPayloads(contentType: string | undefined, body: AsyncIterable<Uint8Array>, onPayload: (json: string, at: number) => void): Promise<void> {
  const boundary = multipartBoundary(contentType);
  if (boundary === undefined) {
    if (contentType && /^\s*multipart\//i.test(contentType)) throw new Error(`no boundary in Content-Type ${contentType}`);
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(Buffer.from(chunk));
    onPayload(Buffer.concat(chunks).toString('utf8'), performance.now());
    return;
  }
  const parts = new MultipartParts(boundary);
  for await (const chunk of body) {
    // Read to the end even after the closing delimiter, so the connection can carry the next request.
    const completed = parts.push(chunk);
    if (completed.length === 0) continue;
    const at = performance.now();
    for (const json of completed) onPayload(json, at);
  }
}
