// The fleet fault drill (issue 28, point 4): two routers under load while Redis goes away, PostgreSQL restarts, one router is killed, and a subgraph is published.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { compositionCheck } from '../../../src/cli/registry-commands.js';
import { openDatabase } from '../../../src/registry/open-database.js';
import type { Database } from '../../../src/registry/database.js';
import { migrate } from '../../../src/registry/migrate.js';
import { setPolicy } from '../../../src/registry/policy-store.js';
import { publishSubgraph } from '../../../src/registry/subgraph-store.js';
import { freePort } from '../free-port.js';
import type { ProcessSupervisor } from '../processes.js';
import { Balancer, startPacedLoad, type Attempt, type BalancedRequest, type RunningLoad } from './balanced-load.js';
import { startDemoSubgraphProcesses, type DemoSubgraphProcess } from './demo-subgraph-processes.js';
import { accountAudit, type AuditAccount } from './fleet-audit.js';
import { FleetRouter } from './fleet-router.js';
import { rankOf, RANK_SDL, startRankSubgraph, type RankSubgraph } from './rank-subgraph.js';
import { deleteRedisKeys } from './redis-keys.js';
import { createScratchDatabase, type ScratchDatabase } from './scratch-database.js';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

export interface FleetTimings {
  /** Load before the first fault, in ms. */
  warmMs: number;
  /** How long Redis is unreachable, in ms. */
  redisDownMs: number;
  /** How long PostgreSQL is unreachable after its backends are ended, in ms. */
  postgresDownMs: number;
  /** When, into the PostgreSQL outage, router b is killed (it is spilling its audit rows by then), in ms. */
  killAfterMs: number;
  /** Load after the last step, in ms. */
  steadyMs: number;
  /** Longest wait for any recovery (cache, rate limits, spill replay, publish) before the drill gives up on it, in ms. */
  recoveryTimeoutMs: number;
}

/** The CI form: about 45 s of load. */
export const SHORT_TIMINGS: FleetTimings = { warmMs: 3_000, redisDownMs: 3_000, postgresDownMs: 4_000, killAfterMs: 2_000, steadyMs: 2_000, recoveryTimeoutMs: 30_000 };
/** The bench form: outages long enough for every backoff to reach its ceiling (Redis reconnect 2 s, audit probe 10 s). */
export const LONG_TIMINGS: FleetTimings = { warmMs: 15_000, redisDownMs: 20_000, postgresDownMs: 30_000, killAfterMs: 15_000, steadyMs: 15_000, recoveryTimeoutMs: 60_000 };

export interface FleetDrillOptions {
  /** A PostgreSQL server (any database on it); the drill creates a database of its own there and drops it. */
  serverUrl: string;
  /** The Redis the routers share; the drill reaches it through a proxy and only writes keys under its own prefix. */
  redisUrl: string;
  supervisor: ProcessSupervisor;
  /** Core(s) of the router processes, and of the demo subgraphs' processes, when the supervisor pins. */
  routerCore?: number | readonly number[];
  subgraphCore?: number | readonly number[];
  /** Requests in flight at most, and started per second, through the balancer. */
  connections: number;
  ratePerSecond: number;
  timings: FleetTimings;
  log: (line: string) => void;
  /** A folder to keep each router's log in (`router-a.log`, `router-b.log`). Default: only their last lines, in an error. */
  logDir?: string;
}

/** When something happened, in ms since the load started. */
export interface TimelineEvent {
  atMs: number;
  event: string;
}

/** The load's requests on one router (probes not counted). */
export interface RouterRequests {
  name: string;
  answered: number;
  ok: number;
  graphqlErrors: number;
  httpErrors: number;
  /** Sent, and the connection broke before an answer. */
  network: number;
  /** Refused connections, sent on to the other router. */
  refused: number;
}

export interface FleetDrillResult {
  runId: string;
  timings: FleetTimings;
  /** `attempts`: every request sent, probes included; `probes`: those sent by the steps' checks. */
  load: { connections: number; ratePerSecond: number; durationMs: number; attempts: number; probes: number };
  routers: RouterRequests[];
  /** Load requests without an answer on router b that were sent before its kill: the only failures allowed. */
  inFlightAtKill: number;
  /** Every other failure of the load (any router, any time): a 5xx, GraphQL errors, a broken connection. Expected: none. */
  otherFailures: { count: number; examples: string[] };
  redis: {
    downMs: number;
    /** Draws the two routers took from their own buckets while Redis was away. */
    fallbacksDuringOutage: number;
    /** From Redis's return until the last draw taken from a router's own bucket, in ms. */
    rateLimitsSharedAfterMs: number;
    /** After recovery, 8 requests alternating routers against one shared budget (burst 40, 1/s): refusals seen on each router. */
    sharedBudgetRefusals: [number, number];
    /** From Redis's return until a part router a fetched was served by router b from Redis, in ms. */
    cacheSharedAfterMs: number;
    /** A review added during the outage (its purge recorded in the registry while Redis kept the old part): answers checked after Redis returned, and how many showed the old reviews. */
    purgeChecks: number;
    staleAnswers: number;
  };
  postgres: {
    downMs: number;
    /** Backends ended with pg_terminate_backend, as a restart does. */
    terminated: number;
    /** Router b's gauges just before its SIGKILL. */
    bufferedBeforeKill: number;
    spilledBeforeKill: number;
    /** Router b's restart (the process's start to its ready line), in ms. */
    restartMs: number;
    /** From PostgreSQL's return until each router's spill folder was empty, in ms. */
    spillReplayedAfterMs: [number, number];
    rejectedLines: number;
  };
  /** From the publish until both routers served the new subgraph's field, in ms. */
  publishServedAfterMs: number;
  audit: AuditAccount;
  timeline: TimelineEvent[];
}

/** Product ids by use: the load's pages, the cache probes (each a part no router has fetched), the purge probe. */
const LOAD_IDS = 600;
const FIRST_CACHE_PROBE_ID = 601;
const PURGE_PROBE_ID = '990';
/** A missing audit row of the killed router is expected only for requests answered this long before the kill: the writer's 200 ms flush interval, and a loaded machine's timer delays. */
const BUFFER_WINDOW_MS = 1_000;

const json = (query: string, variables?: Record<string, unknown>) => JSON.stringify({ query, variables });

/** Everything the drill started, released in reverse order whatever happens, and the routers among it. */
class Teardown {
  readonly #steps: (() => Promise<unknown> | unknown)[] = [];
  /** The routers started, for their last lines in an error. */
  readonly routers: FleetRouter[] = [];
  push(step: () => Promise<unknown> | unknown): void {
    this.#steps.push(step);
  }
  async run(log: (line: string) => void): Promise<void> {
    for (const step of this.#steps.reverse()) {
      try {
        await step();
      } catch (error) {
        log(`  clean-up step failed: ${(error as Error).message}`);
      }
    }
  }
}

/**
 * The drill, in order, all under a paced load through a round-robin balancer:
 * 1. Set-up: a database of its own, proxies in front of PostgreSQL and Redis, the demo subgraphs, two
 *    router processes (a and b) with the section cache and a rate-limited page shared through Redis.
 * 2. Redis goes away (its proxy stops); a review is added meanwhile; Redis comes back with its data.
 *    Measured: how soon draws and cached parts are shared again, and whether a part purged during the
 *    outage is ever served from Redis afterwards.
 * 3. PostgreSQL restarts: its backends are ended and it refuses connections for a while; both routers
 *    spill their audit rows. Router b is killed with SIGKILL in the middle, and restarted with the same
 *    data folder once PostgreSQL is back: it must replay what it had spilled.
 * 4. A subgraph is published; both routers must serve it.
 * 5. The load stops, the routers stop with SIGTERM, and every answered request is looked up in the audit log.
 */
export async function runFleetDrill(options: FleetDrillOptions): Promise<FleetDrillResult> {
  const teardown = new Teardown();
  const progress: string[] = [];
  const log = (line: string) => {
    progress.push(line);
    options.log(line);
  };
  try {
    return await drill({ ...options, log }, teardown);
  } catch (error) {
    // What happened up to the failure, and what the routers last said, travel with the error (a CI log may be all there is).
    const tails = teardown.routers.map((router) => `${router.name}'s last lines:\n    ${router.logTail().join('\n    ') || '(none)'}`);
    throw new Error(`${(error as Error).message}\n  drill so far:\n${progress.join('\n')}\n  ${tails.join('\n  ')}`, { cause: error });
  } finally {
    await teardown.run(options.log);
  }
}

interface Fleet {
  runId: string;
  database: ScratchDatabase;
  db: Database;
  postgresProxy: TcpProxy;
  redisProxy: TcpProxy;
  subgraphs: DemoSubgraphProcess[];
  routers: [FleetRouter, FleetRouter];
  balancer: Balancer;
}

async function setUp(options: FleetDrillOptions, teardown: Teardown): Promise<Fleet> {
  const database = await createScratchDatabase(options.serverUrl, 'fleet');
  teardown.push(() => database.drop());
  const runId = database.name.replace(/_/g, '-');
  const db = await openDatabase({ databaseUrl: database.url, dataDir: tmpdir(), maxConnections: 2 });
  teardown.push(() => db.close());
  await migrate(db);
  const subgraphs = await startDemoSubgraphProcesses(options.supervisor, options.subgraphCore);
  // One at a time: each publish composes with those already registered.
  for (const subgraph of subgraphs) await publishSubgraph(db, { name: subgraph.name, url: subgraph.url, sdl: subgraph.sdl }, compositionCheck);
  // The load's page draws from a bucket in Redis on every request; the spender's budget is small enough to run out.
  await setPolicy(db, pageOperation(runId), { costRatePerSecond: 1_000_000, costBurst: 10_000_000 });
  await setPolicy(db, spenderOperation(runId), { costRatePerSecond: 1, costBurst: 40 });

  const server = new URL(options.serverUrl);
  const postgresProxy = await startTcpProxy({ host: server.hostname, port: Number(server.port || 5432) });
  teardown.push(() => postgresProxy.close());
  const redis = new URL(options.redisUrl);
  const redisProxy = await startTcpProxy({ host: redis.hostname, port: Number(redis.port || 6379) });
  teardown.push(() => redisProxy.close());
  // The run's cached parts and buckets would expire within minutes; they go at once.
  teardown.push(() => deleteRedisKeys(options.redisUrl, [`switchyard:${runId}:*`, `switchyard:rate:*${pageOperation(runId)}`, `switchyard:rate:*${spenderOperation(runId)}`]));

  const workDir = mkdtempSync(path.join(tmpdir(), 'switchyard-fleet-'));
  teardown.push(() => rmSync(workDir, { recursive: true, force: true }));
  const routers = [] as unknown as [FleetRouter, FleetRouter];
  for (const letter of ['a', 'b']) {
    const router = new FleetRouter({
      name: `router ${letter}`,
      port: await freePort(),
      dataDir: path.join(workDir, letter),
      supervisor: options.supervisor,
      core: options.routerCore,
      logFile: options.logDir ? path.join(options.logDir, `router-${letter}.log`) : undefined,
      env: {
        DATABASE_URL: database.urlVia(postgresProxy.port, applicationName(database, letter)),
        REDIS_URL: `redis://127.0.0.1:${redisProxy.port}${redis.pathname}`,
        SWITCHYARD_SECTION_CACHE: 'true',
        // The run's own keys: no other test's parts or buckets are read or written.
        SWITCHYARD_CACHE_REDIS_PREFIX: `switchyard:${runId}:`,
      },
    });
    routers.push(router);
    teardown.routers.push(router);
    teardown.push(() => router.stop());
  }
  await Promise.all(routers.map((router) => router.start()));
  const balancer = new Balancer({ urls: routers.map((router) => router.url), requestIdPrefix: runId });
  teardown.push(() => balancer.close());
  return { runId, database, db, postgresProxy, redisProxy, subgraphs, routers, balancer };
}

const applicationName = (database: ScratchDatabase, letter: string) => `${database.name}_${letter}`;
const pageOperation = (runId: string) => `FleetPage_${runId.split('-')[1]}`;
const spenderOperation = (runId: string) => `FleetSpender_${runId.split('-')[1]}`;

/** The load: the demo product page under the run's rate-limited operation name, ids cycling over the first 600 products. */
function pageRequest(runId: string) {
  const operation = pageOperation(runId);
  const query = `query ${operation}($id: ID!) { product(id: $id) { id name price reviews { id rating } inventory { inStock } } }`;
  return (n: number): BalancedRequest => ({ label: 'page', body: json(query, { id: String((n % LOAD_IDS) + 1) }) });
}

async function drill(options: FleetDrillOptions, teardown: Teardown): Promise<FleetDrillResult> {
  const { timings, log } = options;
  log(`  setting up: a database of its own, proxies for PostgreSQL and Redis, 3 demo subgraphs, 2 router processes`);
  const fleet = await setUp(options, teardown);
  const { balancer, routers } = fleet;
  const origin = performance.now();
  const timeline: TimelineEvent[] = [];
  const mark = (event: string) => {
    const atMs = performance.now() - origin;
    timeline.push({ atMs, event });
    log(`  ${(atMs / 1000).toFixed(1).padStart(6)} s  ${event}`);
  };
  const load: RunningLoad = startPacedLoad({ connections: options.connections, ratePerSecond: options.ratePerSecond, request: pageRequest(fleet.runId), send: (request) => balancer.send(request) });
  teardown.push(() => load.stop());
  mark(`load started: ${options.ratePerSecond} requests/s at most, ${options.connections} in flight at most, round robin over a and b`);
  await delay(timings.warmMs);

  // After each step both routers must still run: a crash would otherwise hide behind the balancer.
  const running = () => routers.forEach((router) => router.assertRunning());
  const redis = await redisOutage(fleet, options, mark);
  running();
  const postgres = await postgresRestart(fleet, options, mark);
  running();
  const publishServedAfterMs = await publishDuringLoad(fleet, options, mark, teardown);
  await delay(timings.steadyMs);
  running();
  await load.stop();
  const durationMs = performance.now() - origin;
  mark(`load stopped after ${balancer.attempts.length} attempts`);
  for (const router of routers) await router.spillDrained(timings.recoveryTimeoutMs);
  await Promise.all(routers.map((router) => router.stop()));
  mark('both routers stopped with SIGTERM (drained, audit flushed)');

  const killAt = postgres.killAt;
  const audit = await accountAudit({
    databaseUrl: fleet.database.url,
    requestIdPrefix: fleet.runId,
    attempts: balancer.attempts,
    routers: 2,
    killed: { router: 1, at: killAt, exitSeenAt: postgres.exitSeenAt, bufferWindowMs: BUFFER_WINDOW_MS },
    spilledAtKill: postgres.spilledIdsAtKill,
  });
  const { inFlightAtKill, otherFailures } = classifyFailures(balancer.attempts, { at: killAt, exitSeenAt: postgres.exitSeenAt });
  return {
    runId: fleet.runId,
    timings,
    load: {
      connections: options.connections,
      ratePerSecond: options.ratePerSecond,
      durationMs,
      attempts: balancer.attempts.length,
      probes: balancer.attempts.filter((attempt) => attempt.label !== 'page').length,
    },
    routers: routers.map((router, index) => countRequests(router.name, balancer.attempts, index)),
    inFlightAtKill,
    otherFailures,
    redis,
    postgres: { ...postgres.figures, rejectedLines: routers.reduce((sum, router) => sum + router.rejectedLines(), 0) },
    publishServedAfterMs,
    audit,
    timeline,
  };
}

function countRequests(name: string, attempts: readonly Attempt[], router: number): RouterRequests {
  const mine = attempts.filter((attempt) => attempt.router === router && attempt.label === 'page');
  const count = (outcome: Attempt['outcome']) => mine.filter((attempt) => attempt.outcome === outcome).length;
  return {
    name,
    answered: mine.filter((attempt) => attempt.status !== undefined).length,
    ok: count('ok'),
    graphqlErrors: count('graphql-errors'),
    httpErrors: count('http-error'),
    network: count('network'),
    refused: count('refused'),
  };
}

/**
 * The load's failures (probes are checked by their own steps: a 429 of the spender or a 400 before a
 * publish is served is the probe working): in flight on the killed router (b, index 1) at the kill,
 * sent before it and never answered; or anything else that is neither `ok` nor `refused`.
 */
function classifyFailures(attempts: readonly Attempt[], kill: { at: number; exitSeenAt: number }): Pick<FleetDrillResult, 'inFlightAtKill' | 'otherFailures'> {
  let inFlightAtKill = 0;
  const others: Attempt[] = [];
  for (const attempt of attempts) {
    if (attempt.label !== 'page' || attempt.outcome === 'ok' || attempt.outcome === 'refused') continue;
    if (attempt.router === 1 && attempt.outcome === 'network' && attempt.sentAt <= kill.exitSeenAt && attempt.doneAt >= kill.at) inFlightAtKill += 1;
    else others.push(attempt);
  }
  return {
    inFlightAtKill,
    otherFailures: {
      count: others.length,
      examples: others.slice(0, 5).map((a) => `router ${'ab'[a.router]} ${a.label} ${a.outcome}${a.status ? ` ${a.status}` : ''}, sent ${(a.sentAt - kill.at).toFixed(0)} ms after the kill: ${a.error ?? ''}`.trim()),
    },
  };
}

type Mark = (event: string) => void;

/** Draws the two routers took from their own buckets so far. */
async function fallbacks(routers: readonly FleetRouter[]): Promise<number> {
  const each = await Promise.all(routers.map((router) => router.metric('switchyard_rate_limit_fallbacks_total')));
  return each.reduce((a, b) => a + b, 0);
}

/**
 * Whether router b serves a part router a just fetched from Redis: a asks for a product no router has
 * fetched, b asks 1.2 s later. A copy from Redis is at least that old, so its `Cache-Control` says at
 * most 58 s of the 60 s the catalogue's hint gives; a copy b fetched itself says 59 or 60.
 */
async function cacheShared(balancer: Balancer, id: number): Promise<boolean> {
  const request = { label: 'cache-probe', body: json('query FleetCacheProbe($id: ID!) { product(id: $id) { id name } }', { id: String(id) }) };
  await balancer.ask(0, request);
  await delay(1_200);
  const seen = await balancer.ask(1, request);
  const maxAge = /max-age=(\d+)/.exec(String(seen.answer?.headers['cache-control'] ?? ''));
  return maxAge !== null && Number(maxAge[1]) <= 58;
}

/** The number of reviews router `router` shows for the purge probe's product. */
async function reviewCount(balancer: Balancer, router: number): Promise<number> {
  const seen = await balancer.ask(router, { label: 'purge-probe', body: json('query FleetReviews($id: ID!) { product(id: $id) { id reviews { id } } }', { id: PURGE_PROBE_ID }) });
  const body = JSON.parse(seen.answer?.text ?? '{}') as { data?: { product?: { reviews?: unknown[] } } };
  return body.data?.product?.reviews?.length ?? -1;
}

async function redisOutage(fleet: Fleet, options: FleetDrillOptions, mark: Mark): Promise<FleetDrillResult['redis']> {
  const { balancer, routers, redisProxy } = fleet;
  const { timings } = options;
  let probeId = FIRST_CACHE_PROBE_ID;
  // Until the probe sees sharing before the outage, it could not tell its return. A busy machine can
  // keep a router's Redis breaker open for a while (3 reads over 50 ms open it for 5 s).
  for (const startedAt = performance.now(); !(await cacheShared(balancer, probeId++)); ) {
    if (performance.now() - startedAt > timings.recoveryTimeoutMs) throw new Error(`router b never served a part router a cached in Redis in ${timings.recoveryTimeoutMs} ms before the outage: the drill cannot measure its return`);
  }
  // The purge probe's part, fetched by a only: in a's memory and in Redis, never in b's.
  const reviewsBefore = await reviewCount(balancer, 0);
  await delay(300);
  const fallbacksBefore = await fallbacks(routers);

  await redisProxy.stop();
  const downAt = performance.now();
  mark('Redis unreachable (its proxy stopped: connections reset, new ones refused)');
  await delay(Math.min(1_000, timings.redisDownMs / 3));
  const added = await balancer.ask(0, { label: 'mutation', body: json(`mutation FleetAddReview { addReview(productId: "${PURGE_PROBE_ID}", rating: 5, body: "added while Redis was away") { id product { id } } }`) });
  if (added.outcome !== 'ok') throw new Error(`the review could not be added during the Redis outage: ${added.outcome} ${added.error ?? ''}`);
  mark(`a review added to product ${PURGE_PROBE_ID} through router a (its purge goes to the registry; Redis keeps the old part)`);
  await delay(downAt + timings.redisDownMs - performance.now());
  const fallbacksDuringOutage = (await fallbacks(routers)) - fallbacksBefore;
  await redisProxy.start();
  const upAt = performance.now();
  mark(`Redis back (with its data) after ${((upAt - downAt) / 1000).toFixed(1)} s; ${fallbacksDuringOutage} rate-limit draws fell back to the routers' own buckets`);

  // Rate limits: the last draw that still fell back marks the return of the shared buckets.
  let purgeChecks = 0;
  let staleAnswers = 0;
  const checkPurge = async () => {
    for (const router of [1, 0]) {
      purgeChecks += 1;
      if ((await reviewCount(balancer, router)) !== reviewsBefore + 1) staleAnswers += 1;
    }
  };
  await checkPurge();
  let lastCount = await fallbacks(routers);
  let lastChangeAt = upAt;
  for (let quietSince = performance.now(); performance.now() - quietSince < 3_000; await delay(100)) {
    if (performance.now() - upAt > timings.recoveryTimeoutMs) throw new Error(`rate-limit draws still fall back ${timings.recoveryTimeoutMs} ms after Redis returned`);
    const count = await fallbacks(routers);
    if (count !== lastCount) {
      lastCount = count;
      lastChangeAt = performance.now();
      quietSince = lastChangeAt;
    }
  }
  const rateLimitsSharedAfterMs = lastChangeAt - upAt;
  mark(`rate limits shared again: the last draw from a router's own bucket ${(rateLimitsSharedAfterMs / 1000).toFixed(1)} s after Redis returned`);

  let cacheSharedAfterMs = Number.NaN;
  while (Number.isNaN(cacheSharedAfterMs)) {
    if (performance.now() - upAt > timings.recoveryTimeoutMs) throw new Error(`router b does not read what router a caches ${timings.recoveryTimeoutMs} ms after Redis returned`);
    const askedAt = performance.now();
    if (await cacheShared(balancer, probeId++)) cacheSharedAfterMs = askedAt - upAt;
  }
  mark(`section cache shared again: a part router a fetched ${(cacheSharedAfterMs / 1000).toFixed(1)} s after Redis returned was served by router b from Redis`);
  for (let i = 0; i < 3; i++) await checkPurge();

  const sharedBudgetRefusals = await spendSharedBudget(fleet);
  mark(`shared budget: ${sharedBudgetRefusals[0]} + ${sharedBudgetRefusals[1]} refusals on routers a + b; purge checks: ${staleAnswers} of ${purgeChecks} answers showed the reviews from before the outage`);
  return { downMs: upAt - downAt, fallbacksDuringOutage, rateLimitsSharedAfterMs, sharedBudgetRefusals, cacheSharedAfterMs, purgeChecks, staleAnswers };
}

/**
 * 8 requests of the spender (about 11 points each, burst 40, 1 point/s), alternating routers. With one
 * budget in Redis the fifth request and most after it are refused, on both routers; with a bucket per
 * router each would admit its four (40 → 29 → 18 → 7 → -4: admitted while above zero) and refuse none.
 */
async function spendSharedBudget(fleet: Fleet): Promise<[number, number]> {
  const operation = spenderOperation(fleet.runId);
  const refusals: [number, number] = [0, 0];
  for (let i = 0; i < 8; i++) {
    const router = i % 2;
    const seen = await fleet.balancer.ask(router, { label: 'spender', body: json(`query ${operation} { products(first: 10) { id } }`) });
    if (seen.status === 429) refusals[router] += 1;
  }
  return refusals;
}

async function postgresRestart(
  fleet: Fleet,
  options: FleetDrillOptions,
  mark: Mark,
): Promise<{ killAt: number; exitSeenAt: number; spilledIdsAtKill: string[]; figures: Omit<FleetDrillResult['postgres'], 'rejectedLines'> }> {
  const { routers, postgresProxy, database } = fleet;
  const { timings } = options;
  const [, killed] = routers;
  // Ended first, as a restart does (each router reads FATAL 57P01 on its connections), then nothing answers until it is back.
  const terminated = await database.terminate(['a', 'b'].map((letter) => applicationName(database, letter)));
  await postgresProxy.stop();
  const downAt = performance.now();
  mark(`PostgreSQL restarting: ${terminated} router backends ended (pg_terminate_backend), connections refused`);

  await delay(timings.killAfterMs);
  const metrics = await killed.metricsText();
  const bufferedBeforeKill = sumOfSample(metrics, 'switchyard_audit_buffered');
  const spilledBeforeKill = sumOfSample(metrics, 'switchyard_audit_spilled_total');
  // From the signal to the exit seen here, the balancer may still send on b's connections: those are in flight at the kill too.
  const killAt = performance.now();
  await killed.kill();
  const exitSeenAt = performance.now();
  const spilledIdsAtKill = killed.spilledRequestIds();
  mark(`router b killed with SIGKILL (audit: ${bufferedBeforeKill} buffered and ${spilledBeforeKill} spilled just before; ${spilledIdsAtKill.length} rows in its spill files)`);

  await delay(downAt + timings.postgresDownMs - performance.now());
  await postgresProxy.start();
  const upAt = performance.now();
  mark(`PostgreSQL back after ${((upAt - downAt) / 1000).toFixed(1)} s`);
  // Router a's replay is timed from now, while b restarts.
  const drainedA = routers[0].spillDrained(timings.recoveryTimeoutMs).then(() => performance.now() - upAt);
  drainedA.catch(() => undefined); // awaited below; not an unhandled rejection meanwhile
  const restartMs = await killed.start();
  mark(`router b restarted on its port and data folder in ${(restartMs / 1000).toFixed(1)} s`);
  const drainedB = killed.spillDrained(timings.recoveryTimeoutMs).then(() => performance.now() - upAt);
  const drained = [await drainedA, await drainedB];
  mark(`audit spill replayed: router a's ${(drained[0] / 1000).toFixed(1)} s, router b's ${(drained[1] / 1000).toFixed(1)} s after PostgreSQL returned`);
  return {
    killAt,
    exitSeenAt,
    spilledIdsAtKill,
    figures: { downMs: upAt - downAt, terminated, bufferedBeforeKill, spilledBeforeKill, restartMs, spillReplayedAfterMs: drained as [number, number] },
  };
}

function sumOfSample(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : Number.NaN;
}

/** Publishes the rank subgraph while the load runs, and waits until both routers serve its field. */
async function publishDuringLoad(fleet: Fleet, options: FleetDrillOptions, mark: Mark, teardown: Teardown): Promise<number> {
  const rank: RankSubgraph = await startRankSubgraph();
  teardown.push(() => rank.close());
  await publishSubgraph(fleet.db, { name: 'ranking', url: rank.url, sdl: RANK_SDL }, compositionCheck);
  const publishedAt = performance.now();
  mark('subgraph "ranking" published (adds Product.rank)');
  const request = { label: 'rank', body: json('query FleetRank { product(id: "7") { rank } }') };
  for (const router of [0, 1]) {
    for (;;) {
      const seen = await fleet.balancer.ask(router, request);
      if (seen.answer?.text.includes(`"rank":${rankOf('7')}`)) break;
      if (performance.now() - publishedAt > options.timings.recoveryTimeoutMs) throw new Error(`router ${'ab'[router]} does not serve the publish after ${options.timings.recoveryTimeoutMs} ms`);
      await delay(50);
    }
  }
  const servedAfterMs = performance.now() - publishedAt;
  mark(`both routers serve Product.rank, ${(servedAfterMs / 1000).toFixed(2)} s after the publish`);
  return servedAfterMs;
}
