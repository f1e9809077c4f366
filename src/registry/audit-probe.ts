// The audit writer's outage probe (step 3 of createAuditWriter): `select 1` after a failed INSERT, the delay doubling until the database answers.
import type { Queryable } from './database.js';
import { pingAuditStore } from './audit-store.js';

export interface OutageProbeOptions {
  readonly db: Queryable;
  /** Delay of the first probe after an outage, in ms. */
  readonly intervalMs: number;
  /** Longest delay between probes, in ms. */
  readonly maxIntervalMs: number;
  /** Whether the writer is still open: a closing writer starts no probe and ignores the answer of one under way. */
  readonly isOpen: () => boolean;
  /** Called when a probe answers (the writer is still open). */
  readonly onAnswer: () => void;
}

/** At most one probe armed or under way; its timer is unref'd, and `stop` clears it. */
export class OutageProbe {
  readonly #options: OutageProbeOptions;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  /** Delay of the next probe: doubles after each, back to `intervalMs` on `reset`. */
  #delay: number;

  constructor(options: OutageProbeOptions) {
    this.#options = options;
    this.#delay = options.intervalMs;
  }

  /** The probe under way, if any. */
  get running(): Promise<void> | undefined {
    return this.#running;
  }

  /** The next probe is again after `intervalMs` (the database took a batch). */
  reset(): void {
    this.#delay = this.#options.intervalMs;
  }

  /** The next probe, after the current backoff delay. */
  arm(): void {
    if (this.#timer || this.#running || !this.#options.isOpen()) return;
    const delay = this.#delay;
    this.#delay = Math.min(delay * 2, this.#options.maxIntervalMs);
    const probeTick = () => {
      this.#timer = undefined;
      this.#running = this.#probe();
    };
    this.#timer = setTimeout(probeTick, delay);
    this.#timer.unref();
  }

  /** Clears the armed timer; a probe under way finishes (see `running`). */
  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  async #probe(): Promise<void> {
    await Promise.resolve(); // `#running` is assigned before it is cleared
    const answered = await pingAuditStore(this.#options.db); // if not, still down: the next probe waits longer
    this.#running = undefined;
    if (!this.#options.isOpen()) return;
    if (answered) this.#options.onAnswer();
    else this.arm();
  }
}
