// One router of a drill's fleet as ops run it: `switchyard serve` in a process of its own, on a fixed port and data folder, killed and restarted at will.
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { PACKAGE_ROOT } from '../../../src/config/paths.js';
import type { ChildHandle, ProcessSupervisor } from '../processes.js';

export interface FleetRouterOptions {
  /** Shown in progress lines and errors: `router a`. */
  name: string;
  port: number;
  /** SWITCHYARD_DATA_DIR: where the audit spill folder lives; the same after a restart, so the spill is replayed. */
  dataDir: string;
  /** The router's settings (DATABASE_URL, REDIS_URL, ...), over a quiet base. */
  env: Record<string, string>;
  supervisor: ProcessSupervisor;
  /** Core(s) to pin the process to, when the supervisor pins. */
  core?: number | readonly number[];
  /** Where the router's log goes (appended across restarts). Default: only the last lines are kept, for errors. */
  logFile?: string;
}

/** Lines of the router's output kept in memory for an error message. */
const LOG_TAIL_LINES = 40;

/**
 * Settings every drill router runs with: warnings only (the drill's faults log some), and none of the
 * test runner's own settings (NODE_ENV=test is not a value the router accepts; an empty value is unset).
 */
const BASE_ENV: Readonly<Record<string, string>> = { LOG_LEVEL: process.env.FLEET_LOG_LEVEL || 'warn', NODE_ENV: '', SWITCHYARD_SUPERGRAPH_FILE: '', PORT: '' };

export class FleetRouter {
  readonly name: string;
  readonly url: string;
  readonly origin: string;
  readonly #options: FleetRouterOptions;
  readonly #tail: string[] = [];
  #child: ChildHandle | undefined;

  constructor(options: FleetRouterOptions) {
    this.#options = options;
    this.name = options.name;
    this.origin = `http://127.0.0.1:${options.port}`;
    this.url = `${this.origin}/graphql`;
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** Starts the process and resolves once it listens (its ready line); returns how long that took, in ms. */
  async start(): Promise<number> {
    const startedAt = performance.now();
    this.#child = await this.#options.supervisor.start({
      name: this.name,
      command: process.execPath,
      args: [path.join(PACKAGE_ROOT, 'bin', 'switchyard.js'), 'serve', '--port', String(this.#options.port)],
      env: { ...BASE_ENV, SWITCHYARD_DATA_DIR: this.#options.dataDir, ...this.#options.env },
      core: this.#options.core,
      cwd: PACKAGE_ROOT,
      ready: /^Switchyard router on (\S+)/,
      readyTimeoutMs: 60_000,
      onOutput: (chunk) => this.#keep(chunk),
    });
    return performance.now() - startedAt;
  }

  #keep(chunk: string): void {
    if (this.#options.logFile) appendFileSync(this.#options.logFile, chunk);
    this.#tail.push(...chunk.split('\n').filter(Boolean));
    this.#tail.splice(0, Math.max(0, this.#tail.length - LOG_TAIL_LINES));
  }

  /** The last lines the router printed (its warnings: LOG_LEVEL=warn). */
  logTail(): string[] {
    return [...this.#tail];
  }

  /** Throws, with the router's last lines, if its process is gone without the drill killing or stopping it (a crash). */
  assertRunning(): void {
    const pid = this.#child?.pid;
    let alive = pid !== undefined;
    try {
      if (pid !== undefined) process.kill(pid, 0);
    } catch {
      alive = false;
    }
    if (!alive) throw new Error(`${this.name} is no longer running; its last lines:\n  ${this.#tail.join('\n  ')}`);
  }

  /** SIGKILL: no drain, no flush; the process is gone when this resolves. */
  async kill(): Promise<void> {
    const child = this.#child;
    if (!child) return;
    process.kill(child.pid, 'SIGKILL');
    await child.stop(1_000);
    this.#child = undefined;
  }

  /** SIGTERM: drains and flushes the audit log; SIGKILL after `graceMs`. */
  async stop(graceMs = 15_000): Promise<void> {
    await this.#child?.stop(graceMs);
    this.#child = undefined;
  }

  /** The router's Prometheus text. */
  async metricsText(): Promise<string> {
    return (await fetch(`${this.origin}/metrics`)).text();
  }

  /** The sum of every sample of `name` (0 when absent). */
  async metric(name: string): Promise<number> {
    return sumOfMetric(await this.metricsText(), name);
  }

  get spillDir(): string {
    return path.join(this.#options.dataDir, 'audit-spill');
  }

  /** The audit spill segments waiting to be replayed (not `rejected.jsonl`). */
  spillSegments(): string[] {
    try {
      return readdirSync(this.spillDir).filter((name) => /^\d{13}-[0-9a-f]{8}-\d+\.jsonl$/.test(name));
    } catch {
      return [];
    }
  }

  /** The request ids of every row in the spill segments now. */
  spilledRequestIds(): string[] {
    const ids: string[] = [];
    for (const segment of this.spillSegments()) {
      let text: string;
      try {
        text = readFileSync(path.join(this.spillDir, segment), 'utf8');
      } catch {
        continue; // replayed and deleted since the listing
      }
      for (const line of text.split('\n')) {
        if (!line) continue;
        try {
          ids.push(String((JSON.parse(line) as { request_id: unknown }).request_id));
        } catch {
          // a line cut by the kill: the writer sets it aside on replay, the count shows it as missing
        }
      }
    }
    return ids;
  }

  /** Rows the router set aside as unreplayable (`rejected.jsonl`): none expected. */
  rejectedLines(): number {
    try {
      return readFileSync(path.join(this.spillDir, 'rejected.jsonl'), 'utf8').split('\n').filter(Boolean).length;
    } catch {
      return 0;
    }
  }

  /** Resolves when no spill segment is left (all replayed), with how long that took; rejects after `timeoutMs`. */
  async spillDrained(timeoutMs: number): Promise<number> {
    const startedAt = performance.now();
    while (this.spillSegments().length > 0) {
      if (performance.now() - startedAt > timeoutMs) throw new Error(`${this.name}: audit spill segments still waiting after ${timeoutMs} ms: ${this.spillSegments().join(', ')}`);
      await delay(50);
    }
    return performance.now() - startedAt;
  }
}

/** The sum of every sample of a metric in Prometheus text (0 when absent). */
export function sumOfMetric(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name} `) || line.startsWith(`${name}{`)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}
