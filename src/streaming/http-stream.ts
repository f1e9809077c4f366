// A streamed answer written to an HTTP response: framed payloads as they come, heartbeats while idle, and the client's leaving heard at once.
import { Readable } from 'node:stream';
import type { FramingRules } from './framing.js';
import { HeartbeatWheel } from './heartbeat-wheel.js';

/**
 * Where a stream's bytes go: a Node response itself (a subscription request taken in front of the
 * pipeline), or a Readable that is the body of a response the pipeline sends.
 */
export interface StreamTarget {
  write(chunk: string): void;
  end(chunk: string): void;
  /** Cuts the stream without its end. */
  destroy(): void;
  readonly writableLength: number;
  readonly destroyed: boolean;
}

/**
 * What a protocol writes on a framing: its opening (the framing's, and anything the protocol adds),
 * each payload, and its heartbeat (undefined: none).
 */
export interface StreamProtocol {
  readonly framing: FramingRules;
  readonly opening: string;
  readonly heartbeat: string | undefined;
  /** `Content-Type` parameters naming the protocol (`deferSpec=20220824`, `subscriptionSpec=1.0`). */
  readonly parameters?: string;
  /** Headers the protocol adds to the framing's. */
  readonly headers?: Record<string, string>;
  payload(json: string): string;
}

/** A protocol's response headers: the framing's, with the protocol's parameters and headers. */
export function headersOf(protocol: StreamProtocol): Record<string, string> {
  return { ...protocol.framing.headers(protocol.parameters), ...protocol.headers };
}

/**
 * One open stream: written as payloads come, beaten while idle by its wheel, ended or cut once. A
 * protocol with more rules (a subscription's sink) extends it, so an open stream is one object.
 */
export class HttpStream {
  readonly #target: StreamTarget;
  protected readonly protocol: StreamProtocol;
  readonly #wheel: HeartbeatWheel<HttpStream> | undefined;

  constructor(target: StreamTarget, protocol: StreamProtocol, wheel: HeartbeatWheel<HttpStream> | undefined) {
    this.#target = target;
    this.protocol = protocol;
    this.#wheel = wheel;
    target.write(protocol.opening);
    wheel?.add(this);
  }

  /** Bytes written and not yet taken by the client. */
  get buffered(): number {
    return this.#target.writableLength;
  }

  /** Writes one payload; false when the client is gone. */
  write(json: string): boolean {
    if (this.#target.destroyed) return false;
    this.#target.write(this.protocol.payload(json));
    return true;
  }

  /** Ends the stream with `last` before the framing's end, or cuts it without an end (`null`: the client reads a dropped connection). */
  finish(last: string | null = ''): void {
    this.stop();
    if (this.#target.destroyed) return;
    if (last === null) this.#target.destroy();
    else this.#target.end(`${last}${this.protocol.framing.end}`);
  }

  /** No more heartbeats (the client left, or the stream ended). */
  stop(): void {
    this.#wheel?.delete(this);
  }

  beat(): void {
    const heartbeat = this.protocol.heartbeat;
    if (heartbeat !== undefined && !this.#target.destroyed && this.#target.writableLength === 0) this.#target.write(heartbeat);
  }
}

/** The heartbeats of one router's HTTP streams: one wheel per period (heartbeat-wheel.ts), made when first used. */
export class HttpStreams {
  readonly #wheels = new Map<number, HeartbeatWheel<HttpStream>>();

  /** The wheel that beats a stream of `protocol` every `periodMs`, or undefined when the protocol has no heartbeat. */
  wheelFor(protocol: StreamProtocol, periodMs: number): HeartbeatWheel<HttpStream> | undefined {
    if (protocol.heartbeat === undefined) return undefined;
    let wheel = this.#wheels.get(periodMs);
    if (!wheel) this.#wheels.set(periodMs, (wheel = new HeartbeatWheel<HttpStream>(periodMs, (stream) => stream.beat())));
    return wheel;
  }

  /** Opens a stream of `protocol` on `target`, beaten every `periodMs`. */
  open(target: StreamTarget, protocol: StreamProtocol, periodMs: number): HttpStream {
    return new HttpStream(target, protocol, this.wheelFor(protocol, periodMs));
  }
}

/**
 * The response of the pipeline whose body is `target` (the HTTP layer pipes a Node stream body to
 * the socket), with the protocol's headers.
 */
export function streamResponse(target: ReadableTarget, protocol: StreamProtocol, fetchAPI: { Response: typeof Response }): Response {
  return new fetchAPI.Response(target.body as unknown as ReadableStream, { status: 200, headers: headersOf(protocol) });
}

/** A Readable as a stream's target: the body of a response the pipeline sends; `onClose` hears the client leave (or the body cut). */
export class ReadableTarget implements StreamTarget {
  readonly body: Readable;

  constructor(onClose: () => void) {
    this.body = new Readable({
      read() {},
      destroy: (error, callback) => {
        onClose();
        callback(error);
      },
    });
  }

  write(chunk: string): void {
    this.body.push(chunk);
  }

  end(chunk: string): void {
    this.body.push(chunk);
    this.body.push(null);
  }

  destroy(): void {
    this.body.destroy();
  }

  get writableLength(): number {
    return this.body.readableLength;
  }

  get destroyed(): boolean {
    return this.body.destroyed;
  }
}
