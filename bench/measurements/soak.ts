// Measurement (issue 28, point 6): a router under mixed traffic for `--soak-minutes`, subgraph faults switching and a publish every few minutes; the slope of every resource it holds.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { PACKAGE_ROOT } from '../../src/config/paths.js';
import { compositionCheck } from '../../src/cli/registry-commands.js';
import { openDatabase } from '../../src/registry/open-database.js';
import { migrate } from '../../src/registry/migrate.js';
import { setPolicy } from '../../src/registry/policy-store.js';
import { publishSubgraph } from '../../src/registry/subgraph-store.js';
import { Balancer, startPacedLoad, type Attempt, type BalancedRequest } from '../lib/fleet/balanced-load.js';
import { startDemoSubgraphProcesses, type DemoSubgraphProcess } from '../lib/fleet/demo-subgraph-processes.js';
import { FleetRouter, sumOfMetric } from '../lib/fleet/fleet-router.js';
import { deleteRedisKeys } from '../lib/fleet/redis-keys.js';
import { createScratchDatabase } from '../lib/fleet/scratch-database.js';
import { assertServicesAnswer, postgresServerUrl, sharedRedisUrl } from '../lib/fleet/shared-services.js';
import { freePort } from '../lib/free-port.js';
import { socketsOf } from '../lib/processes.js';
import { floorsOf, trendOf, type Trend } from '../lib/trend.js';
import type { Measurement } from './queue-memory.js';

/** Requests started per second at most, and in flight at most: a steady load a shared 2-core machine can carry for half an hour. */
const RATE_PER_SECOND = 80;
const CONNECTIONS = 16;
/** A sample of every resource every this many ms. */
const SAMPLE_EVERY_MS = 5_000;
/** The floor of each minute (its lowest sample) is fitted too: memory's sawtooth between garbage collections. */
const FLOOR_WINDOW_MS = 60_000;

/** The mix, by weight: product pages (whole, small, with the reviews deferred) and heavy pages of the catalogue (whole and deferred). */
const DEFER_ACCEPT = 'multipart/mixed;deferSpec=20220824, application/json;q=0.9';
const MIX: readonly { name: string; weight: number; deferred: boolean; query: string; variables(n: number): Record<string, unknown> }[] = [
  { name: 'SoakPage', weight: 8, deferred: false, query: 'query SoakPage($id: ID!) { product(id: $id) { id name price reviews { id rating body author } inventory { inStock warehouse } } }', variables: (n) => ({ id: String((n % 1000) + 1) }) },
  { name: 'SoakPageDeferred', weight: 4, deferred: true, query: 'query SoakPageDeferred($id: ID!) { product(id: $id) { id name price inventory { inStock } ... @defer { reviews { id rating body author } } } }', variables: (n) => ({ id: String(((n * 7) % 1000) + 1) }) },
  { name: 'SoakName', weight: 4, deferred: false, query: 'query SoakName($id: ID!) { product(id: $id) { id name } }', variables: (n) => ({ id: String(((n * 13) % 1000) + 1) }) },
  { name: 'SoakHeavy', weight: 2, deferred: false, query: 'query SoakHeavy($first: Int!) { products(first: $first) { id name price reviews { id rating author } inventory { inStock warehouse } } }', variables: (n) => ({ first: 20 + (n % 31) }) },
  { name: 'SoakHeavyDeferred', weight: 2, deferred: true, query: 'query SoakHeavyDeferred($first: Int!) { products(first: $first) { id name price inventory { inStock } ... @defer { reviews { id rating author } } } }', variables: (n) => ({ first: 20 + (n % 31) }) },
];
const WHEEL = MIX.flatMap((entry) => Array.from({ length: entry.weight }, () => entry));

function mixedRequest(n: number): BalancedRequest {
  const entry = WHEEL[n % WHEEL.length]!;
  return { label: entry.name, body: JSON.stringify({ query: entry.query, operationName: entry.name, variables: entry.variables(n) }), headers: entry.deferred ? { accept: DEFER_ACCEPT } : undefined };
}

/**
 * The faults, in turn, each for one period, on top of all subgraphs healthy: slow reviews, inventory
 * failing a third of its calls with 500, a slow tail on product past the 2 s deadline, reviews dropping
 * connections, inventory never answering. Each period starts from the defaults.
 */
const FAULTS: readonly { name: string; subgraph?: DemoSubgraphProcess['name']; patch?: Record<string, unknown> }[] = [
  { name: 'none' },
  { name: 'reviews slow (150 ± 100 ms)', subgraph: 'reviews', patch: { latencyMs: 150, jitterMs: 100 } },
  { name: 'inventory 30% HTTP 500', subgraph: 'inventory', patch: { errorRate: 0.3, errorStatus: 500 } },
  { name: 'product 5% +2.5 s', subgraph: 'product', patch: { slowRate: 0.05, slowMs: 2_500 } },
  { name: 'none' },
  { name: 'reviews down (connections dropped)', subgraph: 'reviews', patch: { mode: 'down' } },
  { name: 'inventory hangs', subgraph: 'inventory', patch: { mode: 'hang' } },
];
const HEALTHY = { latencyMs: 0, jitterMs: 0, errorRate: 0, errorStatus: 200, slowRate: 0, slowMs: 0, mode: 'ok' };

/** One sample of everything, and the requests answered since the last one. */
interface Sample {
  atMs: number;
  rssMb: number;
  heapUsedMb: number;
  /** What V8 has reserved for the heap (`nodejs_heap_size_total_bytes`), and memory outside it held by JavaScript objects (buffers): with heap used, what RSS is made of. */
  heapTotalMb: number;
  externalMb: number;
  /** What the section cache holds in memory (`switchyard_cache_bytes`): heap that is meant to grow, up to SWITCHYARD_CACHE_MAX_BYTES (64 MiB). */
  sectionCacheMb: number;
  eventLoopP99Ms: number;
  eventLoopMeanMs: number;
  openFds: number;
  sockets: number;
  activeHandles: number;
  databaseConnections: number;
  redisConnections: number;
  requests: number;
  /** Answers with GraphQL errors or an HTTP error status (expected while a fault is on: completeness reports what is missing). */
  withErrors: number;
  /** Requests that got no answer at all. */
  noAnswer: number;
  fault: string;
}

/** The resources whose slope the soak reports, with their unit. */
const SERIES: readonly { key: keyof Sample; label: string; unit: string }[] = [
  { key: 'rssMb', label: 'RSS', unit: 'MB' },
  { key: 'heapUsedMb', label: 'heap used', unit: 'MB' },
  { key: 'heapTotalMb', label: 'heap reserved', unit: 'MB' },
  { key: 'externalMb', label: 'external memory', unit: 'MB' },
  { key: 'sectionCacheMb', label: 'section cache', unit: 'MB' },
  { key: 'eventLoopP99Ms', label: 'event-loop delay p99', unit: 'ms' },
  { key: 'eventLoopMeanMs', label: 'event-loop delay mean', unit: 'ms' },
  { key: 'openFds', label: 'open file descriptors', unit: '' },
  { key: 'sockets', label: 'open sockets', unit: '' },
  { key: 'activeHandles', label: 'active handles', unit: '' },
  { key: 'databaseConnections', label: 'database connections', unit: '' },
  { key: 'redisConnections', label: 'Redis connections', unit: '' },
];

export interface SoakResult {
  minutes: number;
  ratePerSecond: number;
  /** Samples before this are the warm-up, left out of the fits. */
  warmupMs: number;
  samples: Sample[];
  /** Fits after the warm-up: of every sample; of the lowest sample of each minute; of every sample with a level of its own per fault. */
  trends: Record<string, Trend>;
  floorTrends: Record<string, Trend>;
  faultTrends: Record<string, Trend>;
  publishes: { atMs: number; servedAfterMs: number }[];
  requests: { total: number; ok: number; withErrors: number; noAnswer: number; byOperation: Record<string, number> };
  /** The router's subgraph calls over the run, by outcome, and what its resilience layer did about the failures: the faults reached it. */
  subgraphCalls: Record<string, number>;
  resilience: { retries: number; hedges: number; staleSections: number };
  /** The router idle, before the load and IDLE_AFTER_MS after it. */
  idle: { before: Resources; after: Resources };
}

export const soak: Measurement = {
  name: 'soak',
  summary: 'one router for --soak-minutes (default 30) of mixed traffic with subgraph faults switching and publishes: slope of RSS, heap, event-loop delay, sockets, database and Redis connections (issue 28)',
  async run(context) {
    const minutes = context.options.soakMinutes;
    const serverUrl = postgresServerUrl();
    const redisUrl = sharedRedisUrl();
    await assertServicesAnswer('soak', serverUrl, redisUrl);
    const durationMs = minutes * 60_000;
    // A tenth of the run per fault (20 s to 2 min each), a publish every 3 minutes (or twice in a short run), a warm-up of a fifth (at most 5 min).
    const faultEveryMs = Math.min(120_000, Math.max(20_000, durationMs / 10));
    const publishEveryMs = Math.min(180_000, durationMs / 3);
    const warmupMs = Math.min(300_000, durationMs / 5);
    const logDir = path.join(PACKAGE_ROOT, 'bench', 'results', `soak-${new Date().toISOString().replace(/[:.]/g, '-')}`);
    mkdirSync(logDir, { recursive: true });
    const cleanup: (() => Promise<unknown>)[] = [];
    try {
      const database = await createScratchDatabase(serverUrl, 'soak');
      cleanup.push(() => database.drop());
      const name = database.name;
      const db = await openDatabase({ databaseUrl: database.url, dataDir: logDir, maxConnections: 2 });
      cleanup.push(() => db.close());
      await migrate(db);
      const subgraphs = await startDemoSubgraphProcesses(context.supervisor, context.cores.load);
      for (const subgraph of subgraphs) await publishSubgraph(db, { name: subgraph.name, url: subgraph.url, sdl: subgraph.sdl }, compositionCheck);
      // Every operation draws from a bucket in Redis, none ever runs out: the rate limiter's Redis path under load.
      for (const entry of MIX) await setPolicy(db, entry.name, { costRatePerSecond: 1_000_000, costBurst: 10_000_000 });
      cleanup.push(() => deleteRedisKeys(redisUrl, [`switchyard:${name}:*`, ...MIX.map((entry) => `switchyard:rate:*|${entry.name}`)]));

      const redisWithName = new URL(redisUrl);
      redisWithName.searchParams.set('connectionName', name);
      const router = new FleetRouter({
        name: 'router',
        port: await freePort(),
        dataDir: path.join(logDir, 'data'),
        supervisor: context.supervisor,
        core: context.cores.gateway,
        logFile: path.join(logDir, 'router.log'),
        env: {
          NODE_ENV: 'production',
          SWITCHYARD_AUTH_MODE: 'off',
          DATABASE_URL: database.urlVia(undefined, name),
          REDIS_URL: redisWithName.toString(),
          SWITCHYARD_SECTION_CACHE: 'true',
          SWITCHYARD_CACHE_REDIS_PREFIX: `switchyard:${name}:`,
        },
      });
      cleanup.push(() => router.stop());
      await router.start();
      const pid = router.pid!;
      const redis = new Redis(redisUrl);
      redis.on('error', () => undefined);
      cleanup.push(async () => redis.disconnect());

      context.log(`  ${name}: router pid ${pid} on ${router.url}, ${RATE_PER_SECOND} requests/s at most (${CONNECTIONS} in flight at most) for ${minutes} min; a sample every ${SAMPLE_EVERY_MS / 1000} s, faults switching every ${faultEveryMs / 1000} s, a publish every ${(publishEveryMs / 1000).toFixed(0)} s; logs in ${logDir}`);
      const result = await soakRun({ context, router, pid, redis, database, subgraphs, db, durationMs, faultEveryMs, publishEveryMs, warmupMs, minutes });
      return { result, table: formatSoak(result) };
    } finally {
      for (const step of cleanup.reverse()) await step().catch((error: unknown) => context.log(`  clean-up step failed: ${(error as Error).message}`));
    }
  },
};

interface SoakSetup {
  context: Parameters<Measurement['run']>[0];
  router: FleetRouter;
  pid: number;
  redis: Redis;
  database: Awaited<ReturnType<typeof createScratchDatabase>>;
  subgraphs: DemoSubgraphProcess[];
  db: Awaited<ReturnType<typeof openDatabase>>;
  durationMs: number;
  faultEveryMs: number;
  publishEveryMs: number;
  warmupMs: number;
  minutes: number;
}

type Resources = Omit<Sample, 'atMs' | 'requests' | 'withErrors' | 'noAnswer' | 'fault'>;

/** One reading of everything the router holds. */
async function readResources(setup: Pick<SoakSetup, 'router' | 'pid' | 'redis' | 'database'>): Promise<Resources> {
  const name = setup.database.name;
  const text = await setup.router.metricsText();
  const connections = await setup.database.connectionsByApplication();
  const clients = String(await setup.redis.client('LIST'));
  return {
    rssMb: sumOfMetric(text, 'switchyard_process_resident_memory_bytes') / 2 ** 20,
    heapUsedMb: sumOfMetric(text, 'switchyard_nodejs_heap_size_used_bytes') / 2 ** 20,
    heapTotalMb: sumOfMetric(text, 'switchyard_nodejs_heap_size_total_bytes') / 2 ** 20,
    externalMb: sumOfMetric(text, 'switchyard_nodejs_external_memory_bytes') / 2 ** 20,
    sectionCacheMb: sumOfMetric(text, 'switchyard_cache_bytes') / 2 ** 20,
    // prom-client resets its event-loop histogram at each scrape: these cover the time since the last one.
    eventLoopP99Ms: sumOfMetric(text, 'switchyard_nodejs_eventloop_lag_p99_seconds') * 1000,
    eventLoopMeanMs: sumOfMetric(text, 'switchyard_nodejs_eventloop_lag_mean_seconds') * 1000,
    openFds: sumOfMetric(text, 'switchyard_process_open_fds'),
    sockets: socketsOf(setup.pid),
    activeHandles: sumOfMetric(text, 'switchyard_nodejs_active_handles_total'),
    databaseConnections: connections.get(name) ?? 0,
    redisConnections: clients.split('\n').filter((line) => line.includes(` name=${name} `)).length,
  };
}

/**
 * After the load, long enough for every idle connection the load left to close: the subgraph pool's
 * keep-alive (30 s, start-router.ts) and the demo subgraphs' own (5 s). What is still open then, compared
 * with the same reading before the load, is what the run kept.
 */
const IDLE_AFTER_MS = 35_000;

/** The traffic, the fault wheel, the publishes and the sampler, side by side until the time is up. */
async function soakRun(setup: SoakSetup): Promise<SoakResult> {
  const { context, router, database, subgraphs, db, durationMs } = setup;
  const name = database.name;
  const window = { requests: 0, withErrors: 0, noAnswer: 0 };
  const totals = { total: 0, ok: 0, withErrors: 0, noAnswer: 0, byOperation: {} as Record<string, number> };
  const balancer = new Balancer({ urls: [router.url], requestIdPrefix: name, keepAttempts: false, onAttempt: count });
  function count(attempt: Attempt): void {
    window.requests += 1;
    totals.total += 1;
    totals.byOperation[attempt.label] = (totals.byOperation[attempt.label] ?? 0) + 1;
    if (attempt.outcome === 'ok') totals.ok += 1;
    else if (attempt.status === undefined) {
      window.noAnswer += 1;
      totals.noAnswer += 1;
    } else {
      window.withErrors += 1;
      totals.withErrors += 1;
    }
  }
  const idleBefore = await readResources(setup);
  const origin = performance.now();
  const elapsed = () => performance.now() - origin;
  const load = startPacedLoad({ connections: CONNECTIONS, ratePerSecond: RATE_PER_SECOND, request: mixedRequest, send: (request) => balancer.send(request) });
  let fault = FAULTS[0]!.name;
  const samples: Sample[] = [];
  const publishes: SoakResult['publishes'] = [];
  const stopAt = origin + durationMs;

  async function switchFaults(): Promise<void> {
    for (let k = 1; performance.now() < stopAt; k++) {
      await delay(Math.min(setup.faultEveryMs, Math.max(0, stopAt - performance.now())));
      if (performance.now() >= stopAt) break;
      const next = FAULTS[k % FAULTS.length]!;
      await Promise.all(subgraphs.map((subgraph) => subgraph.setFaults(subgraph.name === next.subgraph ? { ...HEALTHY, ...next.patch } : HEALTHY)));
      fault = next.name;
      context.log(`  ${(elapsed() / 60_000).toFixed(1).padStart(5)} min  faults: ${fault}`);
    }
  }

  async function publishEvery(): Promise<void> {
    const reviews = subgraphs.find((subgraph) => subgraph.name === 'reviews')!;
    for (let k = 1; performance.now() + setup.publishEveryMs < stopAt; k++) {
      await delay(setup.publishEveryMs);
      const before = await router.metric('switchyard_schema_version');
      const at = performance.now();
      // A new route for reviews (its timeout moves by 1 ms): a new graph to build and swap in under load.
      await publishSubgraph(db, { name: reviews.name, url: reviews.url, sdl: reviews.sdl, route: { timeoutMs: 5_000 + k } }, compositionCheck);
      while ((await router.metric('switchyard_schema_version')) <= before && performance.now() - at < 30_000) await delay(50);
      publishes.push({ atMs: at - origin, servedAfterMs: performance.now() - at });
      context.log(`  ${(elapsed() / 60_000).toFixed(1).padStart(5)} min  publish ${k} served after ${((performance.now() - at) / 1000).toFixed(2)} s`);
    }
  }

  async function sampleEvery(): Promise<void> {
    for (let next = origin; ; ) {
      samples.push({ atMs: elapsed(), ...(await readResources(setup)), ...window, fault });
      Object.assign(window, { requests: 0, withErrors: 0, noAnswer: 0 });
      const last = samples.at(-1)!;
      if (samples.length % 12 === 1) context.log(`  ${(last.atMs / 60_000).toFixed(1).padStart(5)} min  RSS ${last.rssMb.toFixed(0)} MB, heap ${last.heapUsedMb.toFixed(0)} MB, loop p99 ${last.eventLoopP99Ms.toFixed(0)} ms, sockets ${last.sockets}, db ${last.databaseConnections}, redis ${last.redisConnections}, ${last.requests} requests in the last ${SAMPLE_EVERY_MS / 1000} s`);
      if (performance.now() >= stopAt) return;
      next += SAMPLE_EVERY_MS;
      await delay(Math.max(0, Math.min(next, stopAt) - performance.now()));
    }
  }

  try {
    await Promise.all([switchFaults(), publishEvery(), sampleEvery()]);
  } finally {
    await load.stop();
    await balancer.close();
    await Promise.all(subgraphs.map((subgraph) => subgraph.setFaults(HEALTHY).catch(() => undefined)));
  }
  router.assertRunning();
  context.log(`  load stopped; reading the router again once idle, in ${IDLE_AFTER_MS / 1000} s`);
  await delay(IDLE_AFTER_MS);
  const idleAfter = await readResources(setup);
  const final = await router.metricsText();
  const subgraphCalls: Record<string, number> = {};
  for (const line of final.split('\n')) {
    const outcome = /^switchyard_subgraph_requests_total\{.*outcome="([a-z_]+)".*\} (\S+)$/.exec(line);
    if (outcome) subgraphCalls[outcome[1]!] = (subgraphCalls[outcome[1]!] ?? 0) + Number(outcome[2]);
  }
  const resilience = {
    retries: sumOfMetric(final, 'switchyard_subgraph_retries_total'),
    hedges: sumOfMetric(final, 'switchyard_subgraph_hedges_total'),
    staleSections: sumOfMetric(final, 'switchyard_subgraph_stale_total'),
  };
  const fitted = samples.filter((sample) => sample.atMs >= setup.warmupMs);
  const pointsOf = (key: keyof Sample) => fitted.map((sample) => ({ t: sample.atMs, y: sample[key] as number }));
  const byFault = (key: keyof Sample) => fitted.map((sample) => ({ t: sample.atMs, y: sample[key] as number, group: sample.fault }));
  const fits = (fit: (key: keyof Sample) => Trend) => Object.fromEntries(SERIES.map((series) => [series.key, fit(series.key)]));
  return {
    minutes: setup.minutes,
    ratePerSecond: RATE_PER_SECOND,
    warmupMs: setup.warmupMs,
    samples,
    trends: fits((key) => trendOf(pointsOf(key))),
    floorTrends: fits((key) => trendOf(floorsOf(pointsOf(key), FLOOR_WINDOW_MS))),
    faultTrends: fits((key) => trendOf(byFault(key))),
    publishes,
    requests: totals,
    subgraphCalls,
    resilience,
    idle: { before: idleBefore, after: idleAfter },
  };
}

export function formatSoak(result: SoakResult): string {
  const f = (x: number, digits = 1) => (Number.isFinite(x) ? x.toFixed(digits) : '-');
  const fitted = result.samples.filter((sample) => sample.atMs >= result.warmupMs);
  const first = fitted[0] ?? result.samples[0]!;
  const last = result.samples.at(-1)!;
  const { requests } = result;
  const fit = (trend: Trend) => `${`${f(trend.slopePerHour)} ± ${f(2 * trend.slopeErrorPerHour)}`.padStart(20)} ${trend.verdict.padEnd(7)}`;
  const labelOf = (series: (typeof SERIES)[number]) => (series.unit ? `${series.label} (${series.unit})` : series.label);
  const lines = [
    `soak: one router, ${result.minutes} min of mixed traffic at ${result.ratePerSecond} requests/s at most (${Object.entries(requests.byOperation).map(([op, n]) => `${op} ${n}`).join(', ')}), subgraph faults switching, ${result.publishes.length} publishes`,
    `  requests: ${requests.total}, ${requests.ok} whole answers, ${requests.withErrors} with errors (faults on: completeness reports the missing parts), ${requests.noAnswer} without an answer`,
    `  the router's subgraph calls: ${Object.entries(result.subgraphCalls).map(([outcome, n]) => `${outcome} ${n}`).join(', ')}; ${result.resilience.retries} retries, ${result.resilience.hedges} hedges, ${result.resilience.staleSections} stale parts served`,
    `  publishes served after ${result.publishes.map((p) => `${(p.servedAfterMs / 1000).toFixed(2)} s`).join(', ') || '-'}`,
    `  ${result.samples.length} samples, one every ${SAMPLE_EVERY_MS / 1000} s; fitted from ${f(result.warmupMs / 60_000)} min on (${fitted.length} samples)`,
    '',
    `  ${'resource'.padEnd(26)}${'after warm-up'.padStart(14)}${'last'.padStart(8)}${'min'.padStart(8)}${'max'.padStart(8)}${'noise'.padStart(8)}${'drift'.padStart(8)}`,
    ...SERIES.map((series) => {
      const values = result.samples.map((sample) => sample[series.key] as number);
      const all = result.trends[series.key]!;
      return `  ${labelOf(series).padEnd(26)}${f(first[series.key] as number).padStart(14)}${f(last[series.key] as number).padStart(8)}${f(Math.min(...values)).padStart(8)}${f(Math.max(...values)).padStart(8)}${f(all.noise).padStart(8)}${f(all.driftOverWindow).padStart(8)}`;
    }),
    `  idle before the load, and ${IDLE_AFTER_MS / 1000} s after it: ${(['sockets', 'openFds', 'activeHandles', 'databaseConnections', 'redisConnections'] as const).map((key) => `${SERIES.find((series) => series.key === key)!.label} ${result.idle.before[key]} → ${result.idle.after[key]}`).join(', ')}; heap used ${f(result.idle.before.heapUsedMb)} → ${f(result.idle.after.heapUsedMb)} MB, RSS ${f(result.idle.before.rssMb)} → ${f(result.idle.after.rssMb)} MB`,
    '',
    `  ${'slope per hour ± 2 SE'.padEnd(26)}${'every sample'.padStart(28)}${'lowest of each minute'.padStart(29)}${'a level per fault'.padStart(29)}`,
    ...SERIES.map((series) => `  ${labelOf(series).padEnd(26)}${fit(result.trends[series.key]!).padStart(29)}${fit(result.floorTrends[series.key]!).padStart(29)}${fit(result.faultTrends[series.key]!).padStart(29)}`),
    '',
    "  noise: the samples' standard deviation around the fitted line; drift: what the slope of every sample adds up to over the fitted window.",
    '  Verdict: flat when the slope is within two standard errors of zero or adds up over the window to less than the noise; else rising or falling.',
    '  Three fits: every sample; the lowest sample of each minute (memory: the heap grows between garbage collections and drops at each, the floor is what',
    '  is retained); every sample with a level of its own per fault (sockets, handles and connections follow the fault switched on: a hanging subgraph holds',
    '  connections; that fit compares the same fault early and late).',
  ];
  return lines.join('\n');
}
