// What a process holds open, released in the reverse of the order it was opened, one failure never keeping the rest open.

/** Reports a release that failed: what could not be done, and why. */
export type ReleaseFailure = (message: string, error: unknown, level: 'warn' | 'error') => void;

interface Entry {
  readonly release: () => unknown;
  readonly failure: string;
  readonly level: 'warn' | 'error';
}

/**
 * A stack of releases. Each service is pushed the moment it is open, so a start that fails half way
 * releases exactly what it opened, by the same path as a normal stop:
 * 1. `close()` pops the releases last-in first-out: what was opened on top of another (the audit
 *    writer on the database, requests on the server) is released before what it stands on.
 * 2. A release that throws or rejects is reported with its message, and the next one still runs.
 * 3. `close()` runs once; later calls return the same promise.
 */
export class ResourceStack {
  readonly #entries: Entry[] = [];
  readonly #onFailure: ReleaseFailure;
  #closing: Promise<void> | undefined;

  constructor(onFailure: ReleaseFailure) {
    this.#onFailure = onFailure;
  }

  /** Releases `release` at close, before everything pushed earlier; `failure` (logged at `level`, default error) says what a failure lost. */
  push(release: () => unknown, failure: string, level: 'warn' | 'error' = 'error'): void {
    if (this.#closing) throw new Error('resource stack: already closed');
    this.#entries.push({ release, failure, level });
  }

  close(): Promise<void> {
    return (this.#closing ??= this.#releaseAll());
  }

  async #releaseAll(): Promise<void> {
    for (let entry = this.#entries.pop(); entry; entry = this.#entries.pop()) {
      try {
        await entry.release();
      } catch (error) {
        this.#onFailure(entry.failure, error, entry.level);
      }
    }
  }
}
