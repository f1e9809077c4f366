// Child processes of the benchmark: started pinned to a core, ready when they print their URL, measured through /proc, always stopped.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { availableParallelism, setPriority } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { readProcessCpuMs } from './cpu.js';

export interface ProcessSpec {
  /** Shown in progress lines and errors. */
  name: string;
  command: string;
  args: readonly string[];
  /** Added to the bench's own environment. */
  env?: Record<string, string>;
  /** CPU core (or cores) to pin the process to with `taskset`; undefined (or no taskset) leaves it free. */
  core?: number | readonly number[];
  /**
   * The process forks workers that do the work (`switchyard serve --workers`): CPU time, memory, pause
   * and resume then cover the process and all its descendants. Default false: the process alone.
   */
  processTree?: boolean;
  /** The first stdout line matching this is the ready signal; group 1 is what it announces (ChildHandle.announced). Default: the first http(s) URL. */
  ready?: RegExp;
  /** How long to wait for the ready line, in ms. Default 30000. */
  readyTimeoutMs?: number;
  cwd?: string;
  /** Everything the process prints (stdout and stderr, as it comes), e.g. to keep a router's log in a file. Default: only the ready line and a tail of stderr are read. */
  onOutput?: (chunk: string) => void;
}

export interface ChildHandle {
  readonly name: string;
  readonly pid: number;
  /** What the ready line announced (its group 1): usually the URL. */
  readonly announced: string;
  /** CPU time used so far (user + system, all threads), in ms; undefined once the process is gone or without /proc. */
  cpuMs(): number | undefined;
  /** The largest resident set seen so far, in KiB (VmHWM, else the largest VmRSS sampled). Call sample() to refresh. */
  peakRssKb(): number | undefined;
  /** Reads /proc/<pid>/status once more, so peakRssKb() cannot miss a peak that VmHWM does not report. */
  sample(): void;
  /** SIGSTOP: the process takes no CPU at all (timers, pollers) until resume(). */
  pause(): void;
  /** SIGCONT after pause(). */
  resume(): void;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process has exited (a paused one is resumed first). */
  stop(graceMs?: number): Promise<void>;
}

/** Whether `taskset` exists and the machine has at least `cores` cores; pinning is skipped (with a warning from the caller) otherwise. */
export function canPin(cores = 2): boolean {
  if (availableParallelism() < cores) return false;
  return spawnSync('taskset', ['--version'], { stdio: 'ignore' }).status === 0;
}

/** Pins every thread of this process (the load generator) to `core`. */
export function pinSelf(core: number): boolean {
  return spawnSync('taskset', ['-a', '-c', '-p', String(core), String(process.pid)], { stdio: 'ignore' }).status === 0;
}

/**
 * Gives a process that was started in the background (niceness 19, the load core) and everything it has
 * started since (npm's scripts, tsc) normal priority and every core: something is now waiting for it.
 * Linux keeps a niceness per thread, so each thread (/proc/<pid>/task) is reniced; what they start later
 * inherits both. Best effort: raising priority back needs privileges on some systems.
 */
export function promoteProcessTree(pid: number): void {
  for (const member of [pid, ...descendantsOf(pid)]) {
    let threads: string[];
    try {
      threads = readdirSync(`/proc/${member}/task`);
    } catch {
      threads = [String(member)];
    }
    for (const tid of threads) {
      try {
        setPriority(Number(tid), 0);
      } catch {
        // Not allowed here: that thread finishes at its niceness.
      }
    }
    spawnSync('taskset', ['-a', '-c', '-p', `0-${availableParallelism() - 1}`, String(member)], { stdio: 'ignore' });
  }
}

/** Every process below `pid`, from the parent pid in each /proc/<pid>/stat (empty without /proc). */
function descendantsOf(pid: number): number[] {
  const children = new Map<number, number[]>();
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  for (const entry of entries) {
    try {
      // Field 4 is the parent pid; the command name before it (in parentheses) may hold spaces.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // Gone since readdir.
    }
  }
  const found: number[] = [];
  for (let queue = [pid]; queue.length > 0; ) {
    const next = children.get(queue.shift()!) ?? [];
    found.push(...next);
    queue.push(...next);
  }
  return found;
}

/** VmHWM (peak resident set) and VmRSS of a process in KiB, from /proc/<pid>/status. */
export function readMemoryKb(pid: number): { hwmKb?: number; rssKb?: number } {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return {};
  }
  const field = (name: string) => {
    const match = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status);
    return match ? Number(match[1]) : undefined;
  };
  return { hwmKb: field('VmHWM'), rssKb: field('VmRSS') };
}

/**
 * Where a process's resident memory is, in KiB, from /proc/<pid>/smaps: `brk` is the classic heap
 * (`[heap]`: malloc's main arena, native allocations of Node.js and its libraries), `anonymous` the
 * anonymous mappings (V8's heap pages, other malloc arenas, thread stacks), `file` mapped files (the
 * node binary, shared libraries). Undefined without /proc.
 */
export function readRssBreakdownKb(pid: number): { brk: number; anonymous: number; file: number } | undefined {
  let smaps: string;
  try {
    smaps = readFileSync(`/proc/${pid}/smaps`, 'utf8');
  } catch {
    return undefined;
  }
  const totals = { brk: 0, anonymous: 0, file: 0 };
  let kind: keyof typeof totals = 'anonymous';
  for (const line of smaps.split('\n')) {
    // A mapping's header: address range, permissions, offset, device, inode, then the path (if any).
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (header) {
      const name = header[1];
      kind = name === '[heap]' ? 'brk' : name.startsWith('/') ? 'file' : 'anonymous';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) totals[kind] += Number(rss[1]);
  }
  return totals;
}

/** Sockets among a process's file descriptors (links named `socket:[inode]`), from /proc/<pid>/fd. */
export function socketsOf(pid: number): number {
  let count = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:')) count += 1;
    } catch {
      // closed since the listing
    }
  }
  return count;
}

/**
 * The process's TCP connections whose local port is `port` (the clients connected to a server it runs on
 * that port; its listening socket is left out), from the socket inodes in /proc/<pid>/fd matched against
 * /proc/<pid>/net/tcp and tcp6.
 */
export function connectionsOnPort(pid: number, port: number): number {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match) inodes.add(match[1]);
    } catch {
      // closed since the listing
    }
  }
  let count = 0;
  for (const table of ['tcp', 'tcp6']) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    // Columns: sl, local address (hex ip:port), remote address, state (0A = LISTEN), ..., inode (the 10th).
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10 || fields[3] === '0A' || !inodes.has(fields[9])) continue;
      if (parseInt(fields[1].slice(fields[1].lastIndexOf(':') + 1), 16) === port) count++;
    }
  }
  return count;
}

/**
 * Owns every child the benchmark starts, so that one call stops them all: after a run, on an error, on
 * Ctrl-C, and (synchronously, with SIGKILL) when the bench process exits for any other reason.
 */
export class ProcessSupervisor {
  /** Each running child and the promise of its exit. */
  readonly #children = new Map<ChildProcess, Promise<void>>();
  readonly #pinning: boolean;

  constructor(options: { pinning: boolean }) {
    this.#pinning = options.pinning;
  }

  get pinning(): boolean {
    return this.#pinning;
  }

  async start(spec: ProcessSpec): Promise<ChildHandle> {
    const pinned = this.#pinning && spec.core !== undefined;
    // taskset execs the command, so the child's pid is the command's own pid and /proc/<pid> measures it.
    const command = pinned ? 'taskset' : spec.command;
    const cpuList = typeof spec.core === 'number' ? String(spec.core) : spec.core?.join(',');
    const args = pinned ? ['-c', cpuList!, spec.command, ...spec.args] : [...spec.args];
    const child = spawn(command, args, { cwd: spec.cwd, env: { ...process.env, ...spec.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    // A command that cannot start emits 'error' and never 'exit'.
    const exited = new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.once('error', () => resolve());
    });
    this.#children.set(child, exited);
    void exited.then(() => this.#children.delete(child));

    if (spec.onOutput) {
      child.stdout!.on('data', (chunk: Buffer | string) => spec.onOutput!(String(chunk)));
      child.stderr!.on('data', (chunk: Buffer | string) => spec.onOutput!(String(chunk)));
    }
    const stderrTail: string[] = [];
    child.stderr!.setEncoding('utf8').on('data', function keepStderrTail(chunk: string) {
      stderrTail.push(...chunk.split('\n').filter(Boolean));
      stderrTail.splice(0, Math.max(0, stderrTail.length - 20));
    });

    let announced: string;
    try {
      announced = await waitForReadyLine(child, spec, stderrTail);
    } catch (error) {
      await stopChild(child, exited, 2_000);
      throw error;
    }
    const pid = child.pid!;
    const tree = spec.processTree ?? false;
    /** The pids measured and signalled: the process, and with processTree its descendants of the moment. */
    const pids = () => (tree ? [pid, ...descendantsOf(pid)] : [pid]);
    let peakKb: number | undefined;
    const sample = () => {
      // A tree's peak is the largest sum of its processes' own peaks seen at one sample.
      let sum: number | undefined;
      for (const each of pids()) {
        const { hwmKb, rssKb } = readMemoryKb(each);
        const seen = hwmKb ?? rssKb;
        if (seen !== undefined) sum = (sum ?? 0) + seen;
      }
      if (sum !== undefined) peakKb = Math.max(peakKb ?? 0, sum);
    };
    const signal = (name: NodeJS.Signals) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      // Children first when pausing, so none is left running behind a stopped parent; the parent first when resuming.
      const targets = name === 'SIGSTOP' ? pids().reverse() : pids();
      for (const each of targets) {
        try {
          process.kill(each, name);
        } catch {
          // Gone since it was listed.
        }
      }
    };
    return {
      name: spec.name,
      pid,
      announced,
      cpuMs: () => {
        if (!tree) return readProcessCpuMs(pid);
        let total = 0;
        for (const each of pids()) {
          const ms = readProcessCpuMs(each);
          if (ms === undefined && each === pid) return undefined;
          total += ms ?? 0;
        }
        return total;
      },
      peakRssKb: () => peakKb,
      sample,
      pause: () => signal('SIGSTOP'),
      resume: () => signal('SIGCONT'),
      stop: (graceMs = 5_000) => {
        sample();
        // A paused tree's workers must run to drain when their parent tells them to stop.
        if (tree) signal('SIGCONT');
        return stopChild(child, exited, graceMs);
      },
    };
  }

  /** Stops every child still running, in parallel. */
  async stopAll(graceMs = 5_000): Promise<void> {
    await Promise.all([...this.#children].map(([child, exited]) => stopChild(child, exited, graceMs)));
  }

  /** Last resort from a process 'exit' handler, where nothing asynchronous runs any more. */
  killAllSync(): void {
    for (const child of this.#children.keys()) child.kill('SIGKILL');
  }
}

async function stopChild(child: ChildProcess, exited: Promise<void>, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  // A paused (SIGSTOP) child would hold SIGTERM pending for ever: continue it first (harmless otherwise).
  child.kill('SIGCONT');
  child.kill('SIGTERM');
  const timedOut = Symbol('timeout');
  const outcome = await Promise.race([exited, delay(graceMs, timedOut)]);
  if (outcome === timedOut) {
    child.kill('SIGKILL');
    await exited;
  }
}

function waitForReadyLine(child: ChildProcess, spec: ProcessSpec, stderrTail: string[]): Promise<string> {
  const pattern = spec.ready ?? /(https?:\/\/\S+)/;
  const timeoutMs = spec.readyTimeoutMs ?? 30_000;
  return new Promise((resolve, reject) => {
    let buffered = '';
    const describe = (why: string) => new Error(`${spec.name}: ${why}${stderrTail.length ? `\n  stderr: ${stderrTail.join('\n  stderr: ')}` : ''}`);
    const cleanup = () => {
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      child.off('exit', onExit);
      child.off('error', onError);
      // Keep draining stdout so a chatty child never blocks on a full pipe.
      child.stdout!.resume();
    };
    const onData = (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        const match = pattern.exec(line);
        if (match) {
          cleanup();
          resolve(match[1] ?? match[0]);
          return;
        }
      }
    };
    const onExit = (code: number | null, signal: string | null) => {
      cleanup();
      reject(describe(`exited before it was ready (code ${code}, signal ${signal})`));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(describe(`could not start: ${error.message}`));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(describe(`printed no ready line within ${timeoutMs} ms`));
    }, timeoutMs);
    child.stdout!.setEncoding('utf8').on('data', onData);
    child.once('exit', onExit);
    child.once('error', onError);
  });
}
