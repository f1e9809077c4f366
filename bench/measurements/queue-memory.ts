// Measurement (not a throughput scenario): how much memory requests waiting in an operation queue hold (issue 5).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Pool } from 'undici';
import { productPageRequest } from '../backends/demo-subgraphs.js';
import { FAST_DEMO_SUBGRAPH_NAMES, readDemoSdl } from '../backends/fast-demo-subgraphs.js';
import { switchyardRegistryVariant } from '../gateways/switchyard.js';
import type { BenchOptions } from '../lib/args.js';
import { runLoad, type RequestNumbers } from '../lib/load.js';
import { readMemoryKb, type ProcessSupervisor } from '../lib/processes.js';
import type { CoreLayout } from '../lib/types.js';

export interface MeasurementContext {
  supervisor: ProcessSupervisor;
  cores: CoreLayout;
  numbers: RequestNumbers;
  /** The run's flags: a measurement that times windows and rounds reads --connections, --duration, --warmup, --prime, --rounds here (the soak its --soak-minutes). */
  options: BenchOptions;
  log: (line: string) => void;
}

/** A measurement that is not a paired throughput comparison; `--scenario NAME` selects it like a scenario. */
export interface Measurement {
  readonly name: string;
  readonly summary: string;
  run(context: MeasurementContext): Promise<{ result: unknown; table: string }>;
}

/** Wanted waiters; fewer when the open-file limit does not allow that many sockets (each side holds one per request). */
const TARGET_WAITERS = 10_000;

/** The soft limit on open files of this process (the router inherits it), from /proc/self/limits. */
export function openFileLimit(): number {
  try {
    const match = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    if (match) return match[1] === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(match[1]);
  } catch {
    // no /proc: assume the common default
  }
  return 1024;
}

/** A "subgraph" that accepts connections, reads whatever comes and never answers: the admitted request hangs. */
async function startHangingServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    socket.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

interface RouterMetrics {
  waiting: number;
  inflight: number;
  heapUsedBytes: number;
}

async function readMetrics(origin: string): Promise<RouterMetrics> {
  const text = await (await fetch(`${origin}/metrics`)).text();
  const value = (pattern: RegExp) => {
    const match = pattern.exec(text);
    return match ? Number(match[1]) : NaN;
  };
  return {
    waiting: value(/^switchyard_queue_waiting\{operation="\*"\} (\S+)$/m),
    inflight: value(/^switchyard_queue_inflight\{operation="\*"\} (\S+)$/m),
    heapUsedBytes: value(/^switchyard_nodejs_heap_size_used_bytes (\S+)$/m),
  };
}

/**
 * Heap used and RSS at their lowest over `ms` of samples: the router cannot be told to collect garbage, so
 * the minimum (just after a collection) is the best reading of what is retained rather than merely allocated.
 */
async function settledReading(origin: string, pid: number, ms: number): Promise<{ metrics: RouterMetrics; rssKb: number }> {
  let best: { metrics: RouterMetrics; rssKb: number } | undefined;
  for (const end = performance.now() + ms; performance.now() < end; await delay(250)) {
    const metrics = await readMetrics(origin);
    const rssKb = readMemoryKb(pid).rssKb ?? NaN;
    if (!best || metrics.heapUsedBytes < best.metrics.heapUsedBytes) best = { metrics, rssKb: Math.min(rssKb, best?.rssKb ?? rssKb) };
    else best.rssKb = Math.min(best.rssKb, rssKb);
  }
  return best!;
}

async function waitFor(origin: string, done: (m: RouterMetrics) => boolean, timeoutMs: number): Promise<{ metrics: RouterMetrics; ms: number }> {
  const startedAt = performance.now();
  for (;;) {
    const metrics = await readMetrics(origin);
    const ms = performance.now() - startedAt;
    if (done(metrics) || ms > timeoutMs) return { metrics, ms };
    await delay(250);
  }
}

const mb = (bytes: number) => bytes / (1024 * 1024);

/**
 * One router, policy '*' with max-concurrency 1: the first product page goes to a subgraph that never
 * answers, every other one waits in the queue. RSS and heap are read after a warm-up and again once the
 * queue holds the target; the difference per 1,000 waiters is the figure. Then every request is aborted
 * and the queue must empty. The difference includes each waiter's open connection on the router side
 * (socket, HTTP parser, request objects), which a real waiting client also costs.
 */
export const queueMemory: Measurement = {
  name: 'queue-memory',
  summary: 'memory held by requests waiting in an operation queue (MB per 1,000 waiters; issue 5)',
  async run(context) {
    const limit = openFileLimit();
    const waiters = Math.min(TARGET_WAITERS, limit - 1_000);
    if (waiters < 1_000) throw new Error(`queue-memory: the open-file limit (${limit}) allows too few sockets`);
    if (waiters < TARGET_WAITERS) context.log(`  open-file limit ${limit}: measuring ${waiters} waiters instead of ${TARGET_WAITERS}`);

    const workDir = mkdtempSync(path.join(tmpdir(), 'switchyard-bench-queue-memory-'));
    const hanging = await startHangingServer();
    let waitPool: Pool | undefined;
    const controllers: AbortController[] = [];
    try {
      const variant = switchyardRegistryVariant({
        name: 'queue-memory',
        description: "registry mode, policy '*' --max-concurrency 1 --queue-length 20000 --max-wait-ms 120000, subgraphs that never answer",
        env: { SWITCHYARD_AUDIT: 'false', SWITCHYARD_DEADLINE_MS: '300000', SWITCHYARD_SUBGRAPH_TIMEOUT_MS: '300000' },
        policies: [['*', '--max-concurrency', '1', '--queue-length', '20000', '--max-wait-ms', '120000', '--deadline-ms', '300000']],
      });
      const backend = {
        supergraphFile: '',
        processes: [],
        subgraphs: FAST_DEMO_SUBGRAPH_NAMES.map((name) => ({ name, url: hanging.url, sdl: readDemoSdl(name) })),
      };
      const gateway = await variant.start({ supervisor: context.supervisor, cores: context.cores, workDir }, backend);
      const url = new URL(gateway.url);
      const origin = url.origin;

      // Warm-up: requests that need no subgraph go through the queue (one at a time, never waiting long) and the HTTP path.
      const lightLoad = (durationMs: number) => runLoad({
        url: gateway.url,
        connections: 50,
        warmupMs: 0,
        durationMs,
        numbers: context.numbers,
        request: (n) => ({
          body: JSON.stringify({ query: `query Warm${n % 10} { __typename }` }),
          headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer bench-${n}` },
        }),
      });
      const warm = await lightLoad(5_000);
      if (warm.non2xx + warm.networkErrors + warm.graphqlErrors > 0) {
        throw new Error(`queue-memory: warm-up answered with errors (${warm.non2xx} non-2xx, ${warm.networkErrors} network, ${warm.graphqlErrors} GraphQL)`);
      }
      context.log(`  warm-up: ${warm.completedTotal} requests of { __typename } in 5 s`);
      const before = await settledReading(origin, gateway.process.pid, 5_000);
      context.log(`  before: RSS ${(before.rssKb / 1024).toFixed(1)} MB, heap used ${mb(before.metrics.heapUsedBytes).toFixed(1)} MB, waiting ${before.metrics.waiting}`);

      // Every request on a connection of its own, none answered: one admitted (hangs on the subgraph), the rest wait.
      waitPool = new Pool(origin, { connections: waiters, pipelining: 1, headersTimeout: 0, bodyTimeout: 0, connectTimeout: 60_000 });
      const outcomes = { aborted: 0, answered: 0, failed: 0 };
      const requests: Promise<void>[] = [];
      for (let i = 0; i < waiters; i++) {
        const controller = new AbortController();
        controllers.push(controller);
        const n = context.numbers.next();
        requests.push(
          waitPool
            .request({
              path: url.pathname,
              method: 'POST',
              signal: controller.signal,
              headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer bench-${n}` },
              body: JSON.stringify(productPageRequest(n)),
            })
            .then(
              async (response) => {
                await response.body.text();
                outcomes.answered++;
              },
              (error: Error) => {
                if (error.name === 'AbortError' || controller.signal.aborted) outcomes.aborted++;
                else outcomes.failed++;
              },
            ),
        );
      }
      const filled = await waitFor(origin, (m) => m.waiting >= waiters - 1, 180_000);
      // Lowest readings over 5 s once full: the last arrivals' garbage may be collected by then.
      const full = { ...(await settledReading(origin, gateway.process.pid, 5_000)), hwmKb: readMemoryKb(gateway.process.pid).hwmKb ?? NaN };
      context.log(
        `  full after ${(filled.ms / 1000).toFixed(1)} s: waiting ${full.metrics.waiting}, in flight ${full.metrics.inflight}, RSS ${(full.rssKb / 1024).toFixed(1)} MB, heap used ${mb(full.metrics.heapUsedBytes).toFixed(1)} MB; answered ${outcomes.answered}, failed ${outcomes.failed}`,
      );

      for (const controller of controllers) controller.abort();
      await Promise.all(requests);
      const drained = await waitFor(origin, (m) => m.waiting === 0 && m.inflight === 0, 60_000);
      // An idle V8 does not collect: 3 s of light load make it run the collector before the last reading.
      await lightLoad(3_000);
      const after = await settledReading(origin, gateway.process.pid, 5_000);
      context.log(
        `  aborted all: waiting ${after.metrics.waiting}, in flight ${after.metrics.inflight} after ${(drained.ms / 1000).toFixed(1)} s; RSS ${(after.rssKb / 1024).toFixed(1)} MB, heap used ${mb(after.metrics.heapUsedBytes).toFixed(1)} MB`,
      );

      const waiting = full.metrics.waiting;
      const rssDeltaMb = (full.rssKb - before.rssKb) / 1024;
      const heapDeltaMb = mb(full.metrics.heapUsedBytes - before.metrics.heapUsedBytes);
      const result = {
        openFileLimit: limit,
        requests: waiters,
        waiting,
        inflight: full.metrics.inflight,
        secondsToFill: filled.ms / 1000,
        rssBeforeMb: before.rssKb / 1024,
        rssFullMb: full.rssKb / 1024,
        peakRssMb: full.hwmKb / 1024,
        heapUsedBeforeMb: mb(before.metrics.heapUsedBytes),
        heapUsedFullMb: mb(full.metrics.heapUsedBytes),
        rssMbPer1000Waiters: (rssDeltaMb / waiting) * 1000,
        heapMbPer1000Waiters: (heapDeltaMb / waiting) * 1000,
        outcomes,
        waitingAfterAbort: after.metrics.waiting,
        inflightAfterAbort: after.metrics.inflight,
        secondsToDrain: drained.ms / 1000,
        rssAfterAbortMb: after.rssKb / 1024,
        heapUsedAfterAbortMb: mb(after.metrics.heapUsedBytes),
      };
      const f = (x: number) => x.toFixed(1);
      const table = [
        `queue-memory: ${queueMemory.summary}`,
        `  one router (registry mode), policy '*' --max-concurrency 1 --queue-length 20000 --max-wait-ms 120000; subgraphs accept connections and never answer`,
        `  ${waiters} product-page requests, one connection each (open-file limit ${limit}); ${waiting} waiting and ${full.metrics.inflight} in flight after ${f(result.secondsToFill)} s`,
        `  figure          before   ${waiting} waiting   delta   MB per 1,000 waiters`,
        `  RSS MB          ${f(result.rssBeforeMb).padStart(6)}   ${f(result.rssFullMb).padStart(14)}   ${f(rssDeltaMb).padStart(5)}   ${result.rssMbPer1000Waiters.toFixed(2).padStart(20)}`,
        `  heap used MB    ${f(result.heapUsedBeforeMb).padStart(6)}   ${f(result.heapUsedFullMb).padStart(14)}   ${f(heapDeltaMb).padStart(5)}   ${result.heapMbPer1000Waiters.toFixed(2).padStart(20)}`,
        `  (RSS: VmRSS of the router; heap: switchyard_nodejs_heap_size_used_bytes; each the lowest of 5 s of samples; both include each waiter's open connection; peak RSS ${f(result.peakRssMb)} MB)`,
        `  after aborting every request: waiting ${after.metrics.waiting}, in flight ${after.metrics.inflight} after ${f(result.secondsToDrain)} s (${after.metrics.waiting === 0 && after.metrics.inflight === 0 ? 'queue empty' : 'QUEUE NOT EMPTY'}); then 3 s of { __typename } load (so that V8 collects) and the lowest over 5 s: RSS ${f(result.rssAfterAbortMb)} MB, heap used ${f(result.heapUsedAfterAbortMb)} MB`,
      ].join('\n');
      if (waiting < waiters - 1) throw new Error(`queue-memory: only ${waiting} of ${waiters - 1} requests were waiting after ${f(result.secondsToFill)} s\n${table}`);
      if (after.metrics.waiting !== 0) throw new Error(`queue-memory: ${after.metrics.waiting} requests still waiting after every client aborted\n${table}`);
      return { result, table };
    } finally {
      for (const controller of controllers) controller.abort();
      await waitPool?.destroy().catch(() => undefined);
      await hanging.close();
      // Stop the router before its data dir goes.
      await context.supervisor.stopAll();
      rmSync(workDir, { recursive: true, force: true });
    }
  },
};
