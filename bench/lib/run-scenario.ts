// Runs one scenario: start the backend and every variant, check they agree on the data, then alternate measurements A B A B.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { hashSampleData } from './check-data.js';
import { readCoreBusyMs } from './cpu.js';
import { runLoad, type LoadResult, type RequestNumbers } from './load.js';
import type { ChildHandle, ProcessSupervisor } from './processes.js';
import { toLoadRequest } from './requests.js';
import type { CoreLayout, RunningGateway, Scenario, StartContext } from './types.js';

export interface MeasureOptions {
  connections: number;
  durationMs: number;
  warmupMs: number;
  /** Load sent to each fresh gateway once before round 1, unmeasured, in ms: V8 needs several seconds of traffic to optimise the hot path. */
  primeMs: number;
  rounds: number;
}

/** CPU use during the measured window, in % of one core. */
export interface CpuShare {
  gateway: number | undefined;
  /** All subgraph processes together. */
  subgraphs: number | undefined;
  loadGenerator: number;
  /** Time the gateway's core spent on anything but the gateway: other tenants, the kernel, hypervisor steal (all cores when not pinned). */
  otherOnGatewayCore: number | undefined;
  /** The same for the load core, beyond the subgraphs and the load generator (undefined when not pinned). */
  otherOnLoadCore: number | undefined;
}

export interface Measurement {
  round: number;
  variant: string;
  load: LoadResult;
  cpu: CpuShare;
  /** The gateway's peak resident set since it started, in KiB. */
  peakRssKb: number | undefined;
  /** Subgraph requests per operation sent (warm-up included); undefined when the backend cannot count. */
  fetchesPerOperation: number | undefined;
}

export interface ScenarioResult {
  name: string;
  summary: string;
  backend: string;
  variants: { name: string; description: string }[];
  baseline: string;
  dataHash: string;
  checkRequests: number;
  measurements: Measurement[];
}

const DEFAULT_CHECK_REQUESTS = [0, 1, 2, 499, 999];

export interface RunScenarioContext {
  supervisor: ProcessSupervisor;
  /** Where gateways write CPU profiles (one folder per scenario below it); undefined: no profiling. */
  profileRoot?: string;
  cores: CoreLayout;
  numbers: RequestNumbers;
  log: (line: string) => void;
}

/**
 * 1. starts the backend (subgraphs, supergraph file) and every variant, each gateway on the gateway core;
 * 2. sends the sample requests to each variant and refuses to time any whose data differs from the baseline's;
 * 3. primes each gateway with unmeasured load, so round 1 does not time V8 optimising the hot path;
 * 4. for each round, measures every variant in order (A B A B ...): all gateways stay up between rounds, so
 *    each measurement's warm-up only has to re-warm, not restart, and the idle gateway costs next to nothing;
 * 5. stops everything it started, whatever happened.
 */
export async function runScenario(scenario: Scenario, options: MeasureOptions, context: RunScenarioContext): Promise<ScenarioResult> {
  const workDir = mkdtempSync(path.join(tmpdir(), `switchyard-bench-${scenario.name}-`));
  const profileDir = context.profileRoot ? path.join(context.profileRoot, scenario.name) : undefined;
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  const startContext: StartContext = { supervisor: context.supervisor, cores: context.cores, workDir, profileDir };
  const started: ChildHandle[] = [];
  try {
    await scenario.setup?.(startContext);
    const backend = await scenario.backend.start(startContext);
    started.push(...backend.processes);
    const gateways: RunningGateway[] = [];
    for (const variant of scenario.variants) {
      const gateway = await variant.start(startContext, backend);
      started.push(gateway.process);
      gateways.push(gateway);
    }

    const checkNumbers = scenario.checkRequests ?? DEFAULT_CHECK_REQUESTS;
    const samples = checkNumbers.map((n) => scenario.request(n));
    let dataHash = '';
    for (const [i, variant] of scenario.variants.entries()) {
      const { hash } = await hashSampleData(gateways[i].url, samples, (index) => scenario.headers?.(checkNumbers[index])).catch((error: Error) => {
        throw new Error(`${scenario.name}: ${variant.name} failed the data check: ${error.message}`);
      });
      if (i === 0) dataHash = hash;
      else if (hash !== dataHash) throw new Error(`${scenario.name}: ${variant.name} answers different data than ${scenario.variants[0].name} (${hash} vs ${dataHash}); not timing it`);
    }
    context.log(`  data check: ${samples.length} sample requests, same data from all ${gateways.length} variants (sha256 ${dataHash})`);

    if (options.primeMs > 0) {
      for (const [i, variant] of scenario.variants.entries()) {
        const primed = await runLoad({
          url: gateways[i].url,
          connections: options.connections,
          warmupMs: 0,
          durationMs: options.primeMs,
          numbers: context.numbers,
          request: (n) => toLoadRequest(scenario.request(n), n, scenario.headers?.(n)),
        });
        context.log(`  primed ${variant.name} for ${options.primeMs / 1000} s (${primed.rps.toFixed(0)} rps while cold; not counted)`);
      }
    }

    const measurements: Measurement[] = [];
    for (let round = 1; round <= options.rounds; round++) {
      for (const [i, variant] of scenario.variants.entries()) {
        const measured = await measure(scenario, gateways[i], backend.processes, backend.subgraphRequests, options, context);
        const measurement: Measurement = { round, variant: variant.name, ...measured };
        measurements.push(measurement);
        context.log(`  round ${round}/${options.rounds}  ${formatProgress(measurement)}`);
      }
    }
    return {
      name: scenario.name,
      summary: scenario.summary,
      backend: `${scenario.backend.name}: ${scenario.backend.description}`,
      variants: scenario.variants.map((v) => ({ name: v.name, description: v.description })),
      baseline: scenario.variants[0].name,
      dataHash,
      checkRequests: samples.length,
      measurements,
    };
  } finally {
    await Promise.all(started.map((child) => child.stop()));
    rmSync(workDir, { recursive: true, force: true });
  }
}

async function measure(
  scenario: Scenario,
  gateway: RunningGateway,
  subgraphs: readonly ChildHandle[],
  subgraphRequests: (() => Promise<number>) | undefined,
  options: MeasureOptions,
  context: RunScenarioContext,
): Promise<Omit<Measurement, 'round' | 'variant'>> {
  const cpuOf = (handles: readonly ChildHandle[]) => {
    let total = 0;
    for (const handle of handles) {
      const ms = handle.cpuMs();
      if (ms === undefined) return undefined;
      total += ms;
    }
    return total;
  };
  // CPU time of each side, read when the measured window opens and closes (warm-up excluded).
  const at: Partial<Record<'start' | 'end', { wall: number; gateway?: number; subgraphs?: number; loadGenerator: NodeJS.CpuUsage; gatewayCore?: number; loadCore?: number }>> = {};
  const pinned = context.cores.gateway !== undefined && context.cores.load !== undefined;
  const fetchesBefore = subgraphRequests ? await subgraphRequests() : undefined;
  const load = await runLoad({
    url: gateway.url,
    connections: options.connections,
    warmupMs: options.warmupMs,
    durationMs: options.durationMs,
    numbers: context.numbers,
    request: (n) => toLoadRequest(scenario.request(n), n, scenario.headers?.(n)),
    onTick: () => gateway.process.sample(),
    onWindow: (edge) => {
      at[edge] = {
        wall: performance.now(),
        gateway: gateway.process.cpuMs(),
        subgraphs: cpuOf(subgraphs),
        loadGenerator: process.cpuUsage(),
        gatewayCore: readCoreBusyMs(context.cores.gateway),
        loadCore: pinned ? readCoreBusyMs(context.cores.load) : undefined,
      };
    },
  });
  gateway.process.sample();
  const fetchesAfter = subgraphRequests ? await subgraphRequests() : undefined;

  const { start, end } = at as Required<typeof at>;
  const wallMs = end.wall - start.wall;
  const share = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? undefined : (100 * (b - a)) / wallMs);
  const loadgenUs = end.loadGenerator.user + end.loadGenerator.system - start.loadGenerator.user - start.loadGenerator.system;
  const cpu = { gateway: share(start.gateway, end.gateway), subgraphs: share(start.subgraphs, end.subgraphs), loadGenerator: loadgenUs / 10 / wallMs };
  // What ran on a core besides our own processes; unpinned, the gateway's "core" is the whole machine.
  const other = (busy: number | undefined, ours: (number | undefined)[]) =>
    busy === undefined || ours.some((v) => v === undefined) ? undefined : Math.max(0, busy - ours.reduce<number>((sum, v) => sum + (v ?? 0), 0));
  return {
    load,
    cpu: {
      ...cpu,
      otherOnGatewayCore: other(share(start.gatewayCore, end.gatewayCore), pinned ? [cpu.gateway] : [cpu.gateway, cpu.subgraphs, cpu.loadGenerator]),
      otherOnLoadCore: pinned ? other(share(start.loadCore, end.loadCore), [cpu.subgraphs, cpu.loadGenerator]) : undefined,
    },
    peakRssKb: gateway.process.peakRssKb(),
    fetchesPerOperation: fetchesBefore !== undefined && fetchesAfter !== undefined && load.sentTotal > 0 ? (fetchesAfter - fetchesBefore) / load.sentTotal : undefined,
  };
}

const pct = (value: number | undefined) => (value === undefined ? '?' : `${value.toFixed(0)}%`);

function formatProgress(m: Measurement): string {
  const errors = m.load.non2xx + m.load.networkErrors + m.load.graphqlErrors;
  return [
    m.variant.padEnd(16),
    `${m.load.rps.toFixed(0).padStart(6)} rps`,
    `p50 ${m.load.p50Ms.toFixed(1)} ms`,
    `p99 ${m.load.p99Ms.toFixed(1)} ms`,
    `errors ${errors}`,
    `cpu: gateway ${pct(m.cpu.gateway)}, subgraphs ${pct(m.cpu.subgraphs)}, load generator ${pct(m.cpu.loadGenerator)}, others on the gateway core ${pct(m.cpu.otherOnGatewayCore)}`,
  ].join('  ');
}
