// Runs one scenario: start the backend and every variant, check they agree on the data, then alternate measurements A B A B.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { describeDifference, hashSampleData, type DataCheck } from './check-data.js';
import { readCoreBusyMs } from './cpu.js';
import { runLoad, type LoadRequest, type LoadResult, type RequestNumbers } from './load.js';
import type { ChildHandle, ProcessSupervisor } from './processes.js';
import { toLoadRequest } from './requests.js';
import type { CoreLayout, RunningGateway, Scenario, StartContext, Variant } from './types.js';

export interface MeasureOptions {
  connections: number;
  durationMs: number;
  warmupMs: number;
  /** Load sent to each fresh gateway once before round 1, unmeasured, in ms: V8 needs several seconds of traffic to optimise the hot path. */
  primeMs: number;
  rounds: number;
  /** Send the same body and headers with every request (request 0's), instead of a unique Authorization and varying variables. */
  identical: boolean;
  /** Also measure the baseline a second time in its own process (see withControl). */
  control?: boolean;
  /** Processes per variant (default 1): see the measurement loop. */
  replicas?: number;
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
  /** With replicas, one "round" per replica: (round - 1) × replicas + replica. */
  round: number;
  variant: string;
  /** Which process of the variant (1 when --replicas is not given). */
  replica?: number;
  load: LoadResult;
  cpu: CpuShare;
  /** The gateway's peak resident set since it started, in KiB. */
  peakRssKb: number | undefined;
  /** Subgraph requests per operation sent (warm-up included); undefined when the backend cannot count. */
  fetchesPerOperation: number | undefined;
  /** The measured window on the monotonic clock, in µs (what V8 CPU profiles time their samples with). */
  windowUs?: [number, number];
}

export interface ScenarioResult {
  name: string;
  summary: string;
  backend: string;
  /** The variants that were measured, in order. */
  variants: { name: string; description: string }[];
  /** Optional variants (peers) that could not start or failed the data check, and why: not measured. */
  skipped: { name: string; description: string; reason: string }[];
  baseline: string;
  /** Whether every request was the same (--identical). */
  identicalRequests: boolean;
  dataHash: string;
  checkRequests: number;
  /** Size of the first sample answer's body from each measured variant, in bytes. */
  answerBytes: Record<string, number>;
  measurements: Measurement[];
  /** With Scenario.headerPeriod: each variant's throughput while answering every header value for the first time (one pass, not paired). */
  firstRequestRps?: Record<string, number>;
  /** Wall time of the whole scenario, from starting the backend to the last measurement, in ms. */
  elapsedMs: number;
  /** Each measured window, in ms: --duration, or the scenario's minDurationMs when longer. */
  durationMs: number;
}

const DEFAULT_CHECK_REQUESTS = [0, 1, 2, 499, 999];

/**
 * --control: the baseline a second time, in its own process, measured right after it in every round.
 * Its ratio to the baseline is what two identical gateways differ by in this run (each process's JIT
 * and heap, the machine's noise): a variant's difference smaller than that is not shown by the run.
 */
function withControl(variants: readonly Variant[]): Variant[] {
  const [baseline, ...others] = variants as [Variant, ...Variant[]];
  const name = `${baseline.name}-again`;
  const control: Variant = {
    name,
    description: `${baseline.description}; the baseline again in its own process (the noise floor)`,
    start: (context, backend) => baseline.start({ ...context, instanceName: context.instanceName ?? name }, backend),
  };
  return [baseline, control, ...others];
}

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
 *    an optional variant (a peer) that cannot start is left out, with its reason, and the others go on;
 * 2. sends the sample requests to each variant and refuses to time any whose data differs from the reference
 *    (the first non-optional variant's data: Switchyard's when peers are compared; else the first's): an
 *    optional variant is left out, a non-optional one fails the scenario;
 * 3. primes each gateway with unmeasured load, so round 1 does not time V8 optimising the hot path;
 * 4. for each round, measures every variant in order (A B A B ...): all gateways stay up between rounds, so
 *    each measurement's warm-up only has to re-warm, not restart; the gateways not under load are paused
 *    (SIGSTOP) meanwhile, so they take no CPU from the gateway core at all;
 * 5. stops everything it started, whatever happened.
 */
export async function runScenario(scenario: Scenario, asked: MeasureOptions, context: RunScenarioContext): Promise<ScenarioResult> {
  const options = scenario.minDurationMs && scenario.minDurationMs > asked.durationMs ? { ...asked, durationMs: scenario.minDurationMs } : asked;
  const startedAt = performance.now();
  const workDir = mkdtempSync(path.join(tmpdir(), `switchyard-bench-${scenario.name}-`));
  const profileDir = context.profileRoot ? path.join(context.profileRoot, scenario.name) : undefined;
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  const startContext: StartContext = { supervisor: context.supervisor, cores: context.cores, workDir, profileDir, log: context.log };
  const started: ChildHandle[] = [];
  const skipped: ScenarioResult['skipped'] = [];
  const skip = (variant: Variant, reason: string) => {
    skipped.push({ name: variant.name, description: variant.description, reason });
    context.log(`  SKIPPED ${variant.name}: ${reason}`);
  };
  try {
    await scenario.setup?.(startContext);
    const backend = await scenario.backend.start(startContext);
    started.push(...backend.processes);
    const running: { variant: Variant; gateway: RunningGateway; replicas: RunningGateway[] }[] = [];
    const scenarioVariants = options.control ? withControl(scenario.variants) : scenario.variants;
    const replicaCount = options.replicas ?? 1;
    for (const variant of scenarioVariants) {
      try {
        const replicas: RunningGateway[] = [];
        for (let k = 1; k <= replicaCount; k++) {
          // Replica 1 keeps the variant's own name (its profile file, its work folder); the others are numbered.
          const gateway = await variant.start(k === 1 ? startContext : { ...startContext, instanceName: `${variant.name}.r${k}` }, backend);
          started.push(gateway.process);
          replicas.push(gateway);
        }
        running.push({ variant, gateway: replicas[0]!, replicas });
      } catch (error) {
        if (!variant.optional) throw error;
        skip(variant, `could not start: ${(error as Error).message}`);
      }
    }

    const checkNumbers = scenario.checkRequests ?? DEFAULT_CHECK_REQUESTS;
    const samples = checkNumbers.map((n) => scenario.request(n));
    const checks = new Map<Variant, DataCheck>();
    for (const { variant, replicas } of running) {
      try {
        // Every replica answers the samples; the data check stands on the first, the others must agree with it.
        const [check, ...others] = await Promise.all(replicas.map((gateway) => hashSampleData(gateway.url, samples, (index) => scenario.headers?.(checkNumbers[index]))));
        const odd = others.find((other) => other.hash !== check!.hash);
        if (odd) throw new Error(`its replicas disagree (sha256 ${odd.hash} vs ${check!.hash})`);
        checks.set(variant, check!);
      } catch (error) {
        const message = `failed the data check: ${(error as Error).message}`;
        if (!variant.optional) throw new Error(`${scenario.name}: ${variant.name} ${message}`);
        skip(variant, message);
      }
    }
    // The product under test is the reference: a peer that disagrees with it is left out, not the other way round.
    const reference = running.find(({ variant }) => !variant.optional && checks.has(variant)) ?? running.find(({ variant }) => checks.has(variant));
    if (!reference) throw new Error(`${scenario.name}: no variant could be started and checked`);
    const expected = checks.get(reference.variant)!;
    for (const { variant } of running) {
      const check = checks.get(variant);
      if (!check || check.hash === expected.hash) continue;
      const message = `answers different data than ${reference.variant.name} (sha256 ${check.hash} vs ${expected.hash}; first difference: ${describeDifference(expected.answers, check.answers) ?? 'none found'})`;
      if (!variant.optional) throw new Error(`${scenario.name}: ${variant.name} ${message}; not timing it`);
      skip(variant, `${message}; not timing it`);
      checks.delete(variant);
    }
    const measured = running.filter(({ variant }) => checks.has(variant));
    // A peer left out after it started would only sit idle on the gateway core until the end: stop it now.
    await Promise.all(running.filter(({ variant }) => !checks.has(variant)).flatMap(({ replicas }) => replicas.map((gateway) => gateway.process.stop())));
    // Every gateway process, replicas of a variant next to each other; gatewayIndex[v][k - 1] is replica k of variant v.
    const gateways = measured.flatMap(({ replicas }) => replicas);
    const gatewayIndex = measured.map((_, v) => Array.from({ length: replicaCount }, (__, k) => v * replicaCount + k));
    const variants = measured.map(({ variant }) => variant);
    const dataHash = expected.hash;
    const answerBytes = Object.fromEntries(measured.map(({ variant }) => [variant.name, checks.get(variant)!.bodyBytes[0]]));
    context.log(
      `  data check: ${samples.length} sample requests, same data from ${variants.length === scenarioVariants.length ? 'all ' : ''}${variants.length} variants (sha256 ${dataHash}; first answer ${formatBytes(expected.bodyBytes[0])})`,
    );
    if (variants[0] !== scenarioVariants[0]) context.log(`  baseline: ${scenarioVariants[0]!.name} is not measured, so ratios are against ${variants[0].name}`);
    const requestFor = requestFactory(scenario, options.identical);
    // Only the gateway under load runs: the others are paused (SIGSTOP), so their timers and pollers
    // (a registry-mode router polls its embedded database every 250 ms) take nothing from the gateway core.
    const runOnly = (i: number) => {
      gateways[i]!.process.resume();
      for (const [j, gateway] of gateways.entries()) if (j !== i) gateway.process.pause();
    };
    /** Load on gateway `i` alone that no measurement counts: priming, the first-request pass. */
    const unmeasuredLoad = (i: number, durationMs: number, maxRequests?: number) => {
      runOnly(i);
      return runLoad({ url: gateways[i]!.url, connections: options.connections, warmupMs: 0, durationMs, maxRequests, numbers: context.numbers, request: requestFor });
    };

    const replicaLabel = (k: number) => (replicaCount > 1 ? ` (replica ${k})` : '');
    if (options.primeMs > 0) {
      for (const [v, variant] of variants.entries()) {
        for (const [k, i] of gatewayIndex[v]!.entries()) {
          const primed = await unmeasuredLoad(i, options.primeMs);
          context.log(`  primed ${variant.name}${replicaLabel(k + 1)} for ${options.primeMs / 1000} s (${primed.rps.toFixed(0)} rps while cold; not counted)`);
        }
      }
    }

    const firstRequestRps: Record<string, number> = {};
    if (scenario.headerPeriod && !options.identical) {
      for (const [v, variant] of variants.entries()) {
        for (const [k, i] of gatewayIndex[v]!.entries()) {
          const pass = await unmeasuredLoad(i, 600_000, scenario.headerPeriod);
          const rps = pass.completedTotal / (pass.wallMs / 1000);
          if (k === 0) firstRequestRps[variant.name] = rps;
          context.log(`  ${variant.name}${replicaLabel(k + 1)}: every one of the ${scenario.headerPeriod} header values once (${rps.toFixed(0)} rps on first requests; not counted)`);
        }
      }
    }

    // With replicas, each round measures A1 B1, A2 B2, ...: replica k of every variant forms one pair with
    // replica k of the baseline, recorded as its own "round", so the paired ratios spread each process's
    // own luck (JIT decisions, heap layout) over the pairs instead of tying it to one variant.
    const measurements: Measurement[] = [];
    const nameWidth = Math.max(16, ...variants.map((v) => v.name.length)) + (replicaCount > 1 ? 4 : 0);
    const totalRounds = options.rounds * replicaCount;
    for (let round = 1; round <= options.rounds; round++) {
      for (let k = 1; k <= replicaCount; k++) {
        const pair = (round - 1) * replicaCount + k;
        for (const [v, variant] of variants.entries()) {
          const i = gatewayIndex[v]![k - 1]!;
          runOnly(i);
          const measured = await measure(requestFor, gateways[i]!, backend.processes, backend.subgraphRequests, options, context, scenario.whileMeasured && ((run) => scenario.whileMeasured!({ ...run, variant: variant.name, backend, workDir })));
          const measurement: Measurement = { round: pair, variant: variant.name, ...(replicaCount > 1 ? { replica: k } : {}), ...measured };
          measurements.push(measurement);
          context.log(`  round ${pair}/${totalRounds}  ${formatProgress({ ...measurement, variant: replicaCount > 1 ? `${variant.name}.r${k}` : variant.name }, nameWidth)}`);
        }
      }
    }
    for (const gateway of gateways) gateway.process.resume();
    return {
      name: scenario.name,
      summary: scenario.summary,
      backend: `${scenario.backend.name}: ${scenario.backend.description}`,
      variants: variants.map((v) => ({ name: v.name, description: v.description })),
      skipped,
      baseline: variants[0].name,
      identicalRequests: options.identical,
      dataHash,
      checkRequests: samples.length,
      answerBytes,
      measurements,
      ...(Object.keys(firstRequestRps).length ? { firstRequestRps } : {}),
      elapsedMs: performance.now() - startedAt,
      durationMs: options.durationMs,
    };
  } finally {
    await Promise.all(started.map((child) => child.stop()));
    rmSync(workDir, { recursive: true, force: true });
  }
}

/**
 * Request `n` of the load: the scenario's request with a unique Authorization header, or with --identical one
 * request built once (request 0's body, headers `authorization: Bearer bench-identical` or the scenario's
 * own for request 0), sent every time, so a gateway may answer concurrent requests by executing one.
 */
function requestFactory(scenario: Scenario, identical: boolean): (n: number) => LoadRequest {
  if (!identical) return (n) => toLoadRequest(scenario.request(n), n, scenario.headers?.(n));
  const same = toLoadRequest(scenario.request(0), 'identical', scenario.headers?.(0));
  return () => same;
}

function formatBytes(bytes: number): string {
  return bytes >= 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${bytes} B`;
}

async function measure(
  requestFor: (n: number) => LoadRequest,
  gateway: RunningGateway,
  subgraphs: readonly ChildHandle[],
  subgraphRequests: (() => Promise<number>) | undefined,
  options: MeasureOptions,
  context: RunScenarioContext,
  whileMeasured?: (run: { url: string; durationMs: number }) => Promise<string | void>,
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
  const at: Partial<Record<'start' | 'end', { wall: number; monotonicUs: number; gateway?: number; subgraphs?: number; loadGenerator: NodeJS.CpuUsage; gatewayCore?: number; loadCore?: number }>> = {};
  const pinned = context.cores.gateway !== undefined && context.cores.load !== undefined;
  const fetchesBefore = subgraphRequests ? await subgraphRequests() : undefined;
  let during: Promise<string | void> | undefined;
  const load = await runLoad({
    url: gateway.url,
    connections: options.connections,
    warmupMs: options.warmupMs,
    durationMs: options.durationMs,
    numbers: context.numbers,
    request: requestFor,
    onTick: () => gateway.process.sample(),
    onWindow: (edge) => {
      at[edge] = {
        wall: performance.now(),
        monotonicUs: Number(process.hrtime.bigint() / 1000n),
        gateway: gateway.process.cpuMs(),
        subgraphs: cpuOf(subgraphs),
        loadGenerator: process.cpuUsage(),
        gatewayCore: readCoreBusyMs(context.cores.gateway),
        loadCore: pinned ? readCoreBusyMs(context.cores.load) : undefined,
      };
      if (edge === 'start' && whileMeasured) during = whileMeasured({ url: gateway.url, durationMs: options.durationMs });
    },
  });
  const note = await during;
  if (note) context.log(`    ${note}`);
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
    windowUs: [start.monotonicUs, end.monotonicUs],
  };
}

const pct = (value: number | undefined) => (value === undefined ? '?' : `${value.toFixed(0)}%`);

function formatProgress(m: Measurement, nameWidth: number): string {
  const errors = m.load.non2xx + m.load.networkErrors + m.load.graphqlErrors;
  return [
    m.variant.padEnd(nameWidth),
    `${m.load.rps.toFixed(0).padStart(6)} rps`,
    `p50 ${m.load.p50Ms.toFixed(1)} ms`,
    `p99 ${m.load.p99Ms.toFixed(1)} ms`,
    `errors ${errors}`,
    `cpu: gateway ${pct(m.cpu.gateway)}, subgraphs ${pct(m.cpu.subgraphs)}, load generator ${pct(m.cpu.loadGenerator)}, others on the gateway core ${pct(m.cpu.otherOnGatewayCore)}`,
  ].join('  ');
}
