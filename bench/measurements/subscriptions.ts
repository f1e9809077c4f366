// Measurement (issue 27, decision 031): N subscriptions through one router, over graphql-ws and then over SSE: memory per open subscription, events per second and per CPU-second, push-to-client latency, and what is left once every client has gone.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Pool, request } from 'undici';
import { PACKAGE_ROOT } from '../../src/config/paths.js';
import { switchyardVariant } from '../gateways/switchyard.js';
import { readCoreBusyMs, readCoreTimesMs } from '../lib/cpu.js';
import { startDemoSubgraphProcesses, type DemoSubgraphProcess } from '../lib/fleet/demo-subgraph-processes.js';
import { sumOfMetric } from '../lib/fleet/fleet-router.js';
import { freePort } from '../lib/free-port.js';
import { collectGarbage, profileWhile, type CpuProfile } from '../lib/inspector.js';
import { connectionsOnPort, readMemoryKb, readRssBreakdownKb, socketsOf, type ChildHandle } from '../lib/processes.js';
import { categoryOf } from '../lib/profile-summary.js';
import { percentile } from '../lib/stats.js';
import { SUBSCRIPTION_CLIENTS_LABEL, wallClockMs, type FleetReport, type FleetStatus, type Push, type SubscriptionTransport } from '../lib/subscription-clients.js';
import { writeSupergraph } from '../lib/supergraph.js';
import type { RunningGateway } from '../lib/types.js';
import { table } from '../report.js';
import { openFileLimit, type Measurement, type MeasurementContext } from './queue-memory.js';

/** What every client subscribes to: one inventory event completed with the product subgraph's fields (one entity fetch per event and group). */
export const STOCK_SUBSCRIPTION = /* GraphQL */ `
  subscription Stock($id: ID) {
    inventoryChanged(productId: $id) { inStock product { name price } }
  }
`;
const OPERATION_NAME = 'Stock';

/** Clients per load-generator process: 10,000 subscriptions take two processes, so neither event loop queues a whole fan-out. */
const CLIENTS_PER_PROCESS = 5_000;
/** Clients of one process connecting at once: well under the router's listen backlog (511), so no connection is refused while it opens. */
const OPEN_CONCURRENCY = 100;
/** Subscriptions per transport of the warm-up pass, before the idle reading: the router has loaded and compiled both paths once. */
const WARMUP_SUBSCRIPTIONS = 200;
/** The measured window is at least this long, whatever --duration says: a few events per client. */
const MIN_WINDOW_MS = 10_000;
/** After the window, events still on their way are waited for up to this long. */
const STRAGGLER_MS = 5_000;
/** Connections the pusher uses to the inventory subgraph's admin API. */
const PUSH_CONNECTIONS = 8;
/** The inventory subgraph's stock goes 0..500 (subgraphs/inventory/inventory-data.ts): pushed values cycle through them per product. */
const STOCK_VALUES = 501;

/** After the last pass, the router idles this long before the last reading: V8 and malloc give memory back lazily. */
const SETTLE_MS = 30_000;

/** Other processes taking more than this share of the router's core (in %) disturbed a window (as summary.ts). */
const DISTURBED_PCT = 10;

/** Issue 27's targets. */
const MAX_KB_PER_SUBSCRIPTION = 10;
const MAX_RSS_AFTER_RATIO = 1.1;

/** A reading of the router after a full garbage collection. */
interface Reading {
  rssMb: number;
  /** Where RSS is (processes.ts readRssBreakdownKb): malloc's main arena (`[heap]`), anonymous mappings (V8's heap pages among them), mapped files. */
  rssBrkMb: number;
  rssAnonymousMb: number;
  rssFileMb: number;
  heapUsedMb: number;
  heapTotalMb: number;
  externalMb: number;
  sockets: number;
  /** Of those, connections from clients (local port = the router's). */
  clientConnections: number;
  subscriptions: number;
  upstreams: number;
  upstreamConnections: number;
}

interface LatencySummary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
}

interface PassResult {
  transport: SubscriptionTransport;
  subscriptions: number;
  products: number;
  loadProcesses: number;
  /** Seconds from the first client's connect to every subscription open on the router, and the router's CPU per subscription opened, in µs. */
  openSeconds: number;
  openCpuUsPerSubscription: number;
  before: Reading;
  open: Reading;
  after: Reading;
  /** (open − before) / N, in KB (1,024 bytes). */
  rssKbPerSubscription: number;
  heapKbPerSubscription: number;
  window?: WindowResult;
  /** After every client left: seconds until the router and the subgraph held no subscription; what was still open when the wait ended. */
  drainSeconds: number;
  leftOpen: { subscriptions: number; upstreams: number; subgraphOpen: number; clientConnections: number };
}

interface WindowResult {
  seconds: number;
  pushes: number;
  /** Subscriptions the subgraph said each push reached (1 per product when the router shares one upstream subscription per product). */
  subgraphDeliveriesPerPush: number;
  expectedDeliveries: number;
  matched: number;
  lost: number;
  unmatched: number;
  malformed: number;
  /** Events that reached the clients inside the window, per second. */
  eventsPerSecond: number;
  /** The router's CPU in the window, in % of one core; events delivered per CPU-second of the router. */
  routerCpuPct: number;
  eventsPerCpuSecond: number;
  /** From the router's metrics over the window: events in from the subgraph, out to clients, dropped; the mean time to complete one event (its entity fetch), in ms. */
  eventsIn: number;
  eventsOut: number;
  eventsDropped: number;
  eventCompletionMeanMs: number;
  /** The router's event-loop delay over the window (prom-client's monitor, reset at each scrape), in ms. */
  eventLoopDelayP99Ms: number;
  eventLoopDelayMaxMs: number;
  /** The router's garbage collections in the window (prom-client's `nodejs_gc_duration_seconds`): major ones, their total pause, those over 100 ms; all kinds' total, in ms. */
  gc: { major: number; majorMs: number; majorOver100Ms: number; totalMs: number };
  latencyMs: LatencySummary;
  /** % of one core during the window: the load generator's processes, the subgraphs, and all of the load core. */
  loadGeneratorCpuPct: number;
  subgraphsCpuPct: number;
  loadCoreBusyPct: number | undefined;
  /** Other processes (other tenants) and the hypervisor's steal on the router's core in the window, in % of it: above 10% the window was disturbed. */
  othersOnRouterCorePct: number | undefined;
  /** The kernel's interrupt work on the router's core (irq + softirq: loopback traffic of the sockets there), in %. */
  interruptsOnRouterCorePct: number | undefined;
  /** The first event that was not a whole answer, or other problem a client saw, if any. */
  firstProblem?: string;
  /** With --cpu-prof: the router's CPU profile of the window (file), its busy µs per delivered event, and the heaviest categories and functions (self µs per event). */
  profile?: ProfileSummary;
}

interface ProfileSummary {
  file: string;
  busyUsPerEvent: number;
  categories: [string, number][];
  functions: [string, number][];
}

export interface SubscriptionsResult {
  subscriptions: number;
  products: number;
  pushesPerSecond: number;
  windowMs: number;
  openFileLimit: number;
  idle: Reading;
  passes: PassResult[];
  /** Right after the last client left, and SETTLE_MS later (the RSS target reads this one). */
  final: Reading;
  settled: Reading;
  targets: { kbPerSubscription: Record<string, number>; kbMet: boolean; rssAfterRatio: number; rssAfterMet: boolean; nothingLeftOpen: boolean };
}

const mb = (bytes: number) => bytes / (1024 * 1024);

function summariseLatencies(values: number[]): LatencySummary {
  const sorted = Float64Array.from(values).sort();
  const list = Array.from(sorted);
  const mean = list.length ? list.reduce((a, b) => a + b, 0) / list.length : Number.NaN;
  return { count: list.length, p50: percentile(list, 50), p90: percentile(list, 90), p99: percentile(list, 99), p999: percentile(list, 99.9), max: list.length ? list[list.length - 1] : Number.NaN, mean };
}

/** Self time of the router's profile by category (a package, a file of our own, node internals, the garbage collector) and by function, in µs per delivered event; idle left out. */
function summariseProfile(profile: CpuProfile, events: number, file: string): ProfileSummary {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const categories = new Map<string, number>();
  const functions = new Map<string, number>();
  const add = (map: Map<string, number>, key: string, us: number) => map.set(key, (map.get(key) ?? 0) + us);
  let busyUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const frame = nodes.get(profile.samples[i])!.callFrame;
    const category = categoryOf(frame);
    if (category === '(idle)') continue;
    const us = profile.timeDeltas[i] ?? 0;
    busyUs += us;
    add(categories, category, us);
    const where = frame.url ? `${category.includes('/') ? category : `${category} ${path.basename(frame.url)}`}:${frame.lineNumber + 1}` : category;
    add(functions, `${frame.functionName || '(anonymous)'} (${where})`, us);
  }
  const top = (map: Map<string, number>, n: number): [string, number][] =>
    [...map].sort((a, b) => b[1] - a[1]).slice(0, n).map(([key, us]) => [key, Math.round((us / events) * 10) / 10]);
  return { file, busyUsPerEvent: busyUs / events, categories: top(categories, 12), functions: top(functions, 15) };
}

/** A series of `name` with `kind="<kind>"` (and `le="<bucket>"` when given) in a Prometheus text exposition; 0 when absent. */
function labelled(text: string, name: string, kind: string, bucket?: string): number {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) || !line.includes(`kind="${kind}"`) || (bucket !== undefined && !line.includes(`le="${bucket}"`))) continue;
    return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}

/** A reading in a few words: RSS, heap used of reserved, memory outside the heap. */
function describeReading(r: Reading): string {
  return `RSS ${r.rssMb.toFixed(1)} MB (malloc heap ${r.rssBrkMb.toFixed(1)}, anonymous ${r.rssAnonymousMb.toFixed(1)}, files ${r.rssFileMb.toFixed(1)}), heap used ${r.heapUsedMb.toFixed(1)} of ${r.heapTotalMb.toFixed(1)} MB reserved, external ${r.externalMb.toFixed(1)} MB`;
}

/** The router under test, with what the measurement reads from it. */
class RouterProbe {
  readonly gateway: RunningGateway;
  readonly #inspectPort: number;

  constructor(gateway: RunningGateway, inspectPort: number) {
    this.gateway = gateway;
    this.#inspectPort = inspectPort;
  }

  get origin(): string {
    return new URL(this.gateway.url).origin;
  }

  /** The router's /metrics, on a connection closed after the answer: the bench's own connections must not count among the clients' (Reading.clientConnections). */
  async metrics(): Promise<string> {
    const { body } = await request(`${this.origin}/metrics`, { reset: true });
    return body.text();
  }

  async counts(): Promise<{ subscriptions: number; upstreams: number; upstreamConnections: number }> {
    const text = await this.metrics();
    return {
      subscriptions: sumOfMetric(text, 'switchyard_subscriptions_active'),
      upstreams: sumOfMetric(text, 'switchyard_subscription_upstreams'),
      upstreamConnections: sumOfMetric(text, 'switchyard_subscription_upstream_connections'),
    };
  }

  /**
   * Asks `{ product(id: "1") { name } }` every 250 ms until an answer comes whole, for at most
   * `timeoutMs`: a window that overloaded the router can leave the product subgraph's circuit open (its
   * calls ran past their deadline while the router's event loop was stalled), and the next pass must
   * not start against an open circuit. Answers how long it took and the last error seen.
   */
  async untilAnswering(timeoutMs: number): Promise<{ ok: boolean; ms: number; lastError?: string }> {
    let lastError: string | undefined;
    const { ok, ms } = await until(async () => {
      const { statusCode, body } = await request(this.gateway.url, {
        method: 'POST',
        reset: true,
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ query: '{ product(id: "1") { name } }' }),
      });
      const text = await body.text();
      if (statusCode === 200 && !text.includes('"errors"')) return true;
      lastError = `HTTP ${statusCode} ${text.slice(0, 200)}`;
      return false;
    }, timeoutMs);
    return { ok, ms, ...(lastError ? { lastError } : {}) };
  }

  /** Runs `work` under the router's CPU profiler (the inspector's sampling profiler, attached for that time only). */
  profile<T>(work: () => Promise<T>): Promise<{ result: T; profile: CpuProfile }> {
    return profileWhile(this.#inspectPort, work);
  }

  /** A full collection through the inspector, a second for the kernel to take back freed pages, then RSS, heap, sockets and counts. */
  async reading(): Promise<Reading> {
    await collectGarbage(this.#inspectPort);
    await delay(1_000);
    const pid = this.gateway.process.pid;
    // Sockets before /metrics is asked: its own connection is not the clients'.
    const rssMb = (readMemoryKb(pid).rssKb ?? Number.NaN) / 1024;
    const breakdown = readRssBreakdownKb(pid);
    const sockets = socketsOf(pid);
    const clientConnections = connectionsOnPort(pid, Number(new URL(this.gateway.url).port));
    const text = await this.metrics();
    return {
      rssMb,
      rssBrkMb: (breakdown?.brk ?? Number.NaN) / 1024,
      rssAnonymousMb: (breakdown?.anonymous ?? Number.NaN) / 1024,
      rssFileMb: (breakdown?.file ?? Number.NaN) / 1024,
      heapUsedMb: mb(sumOfMetric(text, 'switchyard_nodejs_heap_size_used_bytes')),
      heapTotalMb: mb(sumOfMetric(text, 'switchyard_nodejs_heap_size_total_bytes')),
      externalMb: mb(sumOfMetric(text, 'switchyard_nodejs_external_memory_bytes')),
      sockets,
      clientConnections,
      subscriptions: sumOfMetric(text, 'switchyard_subscriptions_active'),
      upstreams: sumOfMetric(text, 'switchyard_subscription_upstreams'),
      upstreamConnections: sumOfMetric(text, 'switchyard_subscription_upstream_connections'),
    };
  }
}

/** The inventory subgraph's admin API: pushes stock changes (each logged with the time it was sent) and counts its subscriptions. */
class InventoryPusher {
  readonly #pool: Pool;
  readonly #origin: string;
  /** The next value per product: values only go round after STOCK_VALUES pushes of one product. */
  readonly #next = new Map<string, number>();
  pushes: Push[] = [];
  subgraphDeliveries = 0;
  failures: string[] = [];

  constructor(inventoryUrl: string) {
    this.#origin = new URL(inventoryUrl).origin;
    this.#pool = new Pool(this.#origin, { connections: PUSH_CONNECTIONS });
  }

  /** Forgets the log (each pass matches its own pushes). */
  clear(): void {
    this.pushes = [];
    this.subgraphDeliveries = 0;
    this.failures = [];
  }

  /** One stock change; its time is taken just before the request is written, so the latency measured includes the admin call (about a millisecond on loopback). */
  async push(productId: string): Promise<void> {
    const inStock = ((this.#next.get(productId) ?? 0) + 1) % STOCK_VALUES;
    this.#next.set(productId, inStock);
    this.pushes.push({ productId, inStock, at: wallClockMs() });
    try {
      const response = await this.#pool.request({ path: '/admin/inventory', method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ productId, inStock }) });
      const body = (await response.body.json()) as { delivered?: number };
      if (response.statusCode !== 200) this.failures.push(`HTTP ${response.statusCode} ${JSON.stringify(body)}`);
      else this.subgraphDeliveries += body.delivered ?? 0;
    } catch (error) {
      this.failures.push((error as Error).message);
    }
  }

  /**
   * Pushes `rate` changes per second for `durationMs`, to the products in turn. Push k is due at
   * k / rate seconds after the start; every 5 ms the loop sends what is due, so a late timer is made up
   * at once instead of shifting the rest.
   */
  async run(productIds: readonly string[], rate: number, durationMs: number): Promise<void> {
    const started = performance.now();
    const inFlight: Promise<void>[] = [];
    for (let k = 0; ; ) {
      const elapsed = performance.now() - started;
      if (elapsed >= durationMs) break;
      for (const due = Math.floor((elapsed * rate) / 1000); k <= due && (k * 1000) / rate < durationMs; k++) inFlight.push(this.push(productIds[k % productIds.length]));
      await delay(5);
    }
    await Promise.all(inFlight);
  }

  async subscriptionsOpen(): Promise<number> {
    const response = await this.#pool.request({ path: '/admin/subscriptions', method: 'GET' });
    return ((await response.body.json()) as { open: number }).open;
  }

  close(): Promise<void> {
    return this.#pool.close();
  }
}

/** One load-generator process: its clients' control API (bench/lib/subscription-clients-main.ts). */
class ClientProcess {
  readonly handle: ChildHandle;
  readonly clients: number;

  constructor(handle: ChildHandle, clients: number) {
    this.handle = handle;
    this.clients = clients;
  }

  async call<T>(method: 'GET' | 'POST', route: string, body?: unknown): Promise<T> {
    const response = await fetch(`${this.handle.announced}${route}`, { method, ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }) });
    if (!response.ok && response.status !== 202) throw new Error(`${this.handle.name}: ${method} ${route} answered ${response.status}: ${await response.text()}`);
    return (await response.json()) as T;
  }

  status(): Promise<FleetStatus> {
    return this.call('GET', '/status');
  }
}

async function statuses(processes: readonly ClientProcess[]): Promise<FleetStatus> {
  const all = await Promise.all(processes.map((p) => p.status()));
  const sum = (key: keyof Omit<FleetStatus, 'firstProblem'>) => all.reduce((total, s) => total + s[key], 0);
  const firstProblem = all.find((s) => s.firstProblem)?.firstProblem;
  return { clients: sum('clients'), connected: sum('connected'), failed: sum('failed'), ended: sum('ended'), events: sum('events'), malformed: sum('malformed'), clientsWithEvents: sum('clientsWithEvents'), ...(firstProblem ? { firstProblem } : {}) };
}

/** Polls `check` every 250 ms until it returns true or `timeoutMs` passes; answers whether it did and after how long. */
async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<{ ok: boolean; ms: number }> {
  const started = performance.now();
  for (;;) {
    if (await check()) return { ok: true, ms: performance.now() - started };
    if (performance.now() - started > timeoutMs) return { ok: false, ms: performance.now() - started };
    await delay(250);
  }
}

interface Setup {
  context: MeasurementContext;
  router: RouterProbe;
  pusher: InventoryPusher;
  subgraphs: DemoSubgraphProcess[];
  /** Product ids 1..P. */
  productIds: string[];
  windowMs: number;
  pushesPerSecond: number;
  /** With --cpu-prof: where the router's profile of each measured window is written. */
  profileDir?: string;
}

/** Starts the load-generator processes for `count` clients, at most CLIENTS_PER_PROCESS each, on the load core. */
async function startClientProcesses(setup: Setup, transport: SubscriptionTransport, count: number): Promise<ClientProcess[]> {
  const processes = Math.ceil(count / CLIENTS_PER_PROCESS);
  return Promise.all(
    Array.from({ length: processes }, async (_, k) => {
      const clients = Math.floor(count / processes) + (k < count % processes ? 1 : 0);
      const handle = await setup.context.supervisor.start({
        name: `subscription clients ${transport} ${k + 1}/${processes}`,
        command: process.execPath,
        args: [path.join(PACKAGE_ROOT, 'dist', 'bench', 'lib', 'subscription-clients-main.js')],
        env: { NODE_ENV: 'production' },
        core: setup.context.cores.load,
        cwd: PACKAGE_ROOT,
        ready: new RegExp(`^${SUBSCRIPTION_CLIENTS_LABEL} (\\S+)`),
      });
      return new ClientProcess(handle, clients);
    }),
  );
}

const cpuOf = (handles: readonly ChildHandle[]) => handles.reduce((total, h) => total + (h.cpuMs() ?? 0), 0);

/**
 * One pass over one transport:
 * 1. the load-generator processes open `count` subscriptions, client i on product i mod P, and the
 *    router must hold them all, with one upstream subscription per product and as many at the subgraph;
 * 2. one push per product: every client must get a whole event (no errors, product name and price);
 * 3. readings before and with every subscription open (after a full collection);
 * 4. when measured, the window: pushes at the set rate; every client logs what arrives and when, and
 *    the logs are matched to the pushes afterwards (latency = arrival − push);
 * 5. every client leaves at once; the router, its upstream and the subgraph must come back to nothing.
 */
async function runPass(setup: Setup, transport: SubscriptionTransport, count: number, measure: boolean): Promise<PassResult> {
  const { context, router, pusher } = setup;
  const log = (line: string) => context.log(`  ${transport}${measure ? '' : ' (warm-up)'}: ${line}`);
  const productIds = setup.productIds.slice(0, Math.min(setup.productIds.length, count));
  const subscribersOf = new Map<string, number>();
  const assigned = Array.from({ length: count }, (_, i) => productIds[i % productIds.length]);
  for (const id of assigned) subscribersOf.set(id, (subscribersOf.get(id) ?? 0) + 1);

  const answering = await router.untilAnswering(60_000);
  if (!answering.ok) throw new Error(`${transport}: the router did not answer a product query whole within 60 s: ${answering.lastError}`);
  if (answering.lastError) log(`the router answered a product query whole again after ${(answering.ms / 1000).toFixed(1)} s (before: ${answering.lastError})`);
  const before = await router.reading();
  const processes = await startClientProcesses(setup, transport, count);
  const loadHandles = processes.map((p) => p.handle);
  try {
    // 1. Open.
    const openCpu0 = router.gateway.process.cpuMs() ?? 0;
    let offset = 0;
    await Promise.all(
      processes.map((p) => {
        const ids = assigned.slice(offset, (offset += p.clients));
        return p.call('POST', '/open', { url: router.gateway.url, transport, query: STOCK_SUBSCRIPTION, operationName: OPERATION_NAME, productIds: ids, concurrency: OPEN_CONCURRENCY });
      }),
    );
    let fleet = await statuses(processes);
    const opened = await until(async () => {
      fleet = await statuses(processes);
      if (fleet.failed > 0 || fleet.ended > 0) return true;
      return fleet.connected === count && (await router.counts()).subscriptions >= count;
    }, 30_000 + count * 10);
    const openCpuMs = (router.gateway.process.cpuMs() ?? 0) - openCpu0;
    const counts = await router.counts();
    if (!opened.ok || fleet.failed > 0 || fleet.ended > 0 || counts.subscriptions !== count) {
      throw new Error(`${transport}: ${counts.subscriptions} of ${count} subscriptions open on the router after ${(opened.ms / 1000).toFixed(1)} s (clients connected ${fleet.connected}, failed ${fleet.failed}, ended ${fleet.ended})${fleet.firstProblem ? `; first problem: ${fleet.firstProblem}` : ''}`);
    }
    const subgraphOpen = await pusher.subscriptionsOpen();
    log(`${count} open after ${(opened.ms / 1000).toFixed(1)} s (router CPU ${((openCpuMs * 1000) / count).toFixed(0)} µs per subscribe); upstream subscriptions ${counts.upstreams} on ${counts.upstreamConnections} connection(s), ${subgraphOpen} at the subgraph, for ${productIds.length} products`);
    if (counts.upstreams !== productIds.length || subgraphOpen !== productIds.length) {
      throw new Error(`${transport}: expected one upstream subscription per product (${productIds.length}); the router holds ${counts.upstreams}, the subgraph ${subgraphOpen}`);
    }

    // 2. Every client gets a whole event.
    await Promise.all(processes.map((p) => p.call('POST', '/clear')));
    pusher.clear();
    await Promise.all(productIds.map((id) => pusher.push(id)));
    const reached = await until(async () => {
      fleet = await statuses(processes);
      return fleet.clientsWithEvents === count || fleet.malformed > 0 || fleet.ended > 0;
    }, 30_000);
    if (!reached.ok || fleet.malformed > 0 || fleet.ended > 0 || pusher.failures.length > 0) {
      throw new Error(`${transport}: after one push per product, ${fleet.clientsWithEvents} of ${count} clients had an event (malformed ${fleet.malformed}, ended ${fleet.ended}, push failures ${pusher.failures.join('; ') || 0})${fleet.firstProblem ? `; first problem: ${fleet.firstProblem}` : ''}`);
    }
    log(`every client received a whole event ${(reached.ms / 1000).toFixed(1)} s after one push per product`);

    // 3. Memory with every subscription open.
    const open = await router.reading();
    log(`before: ${describeReading(before)}, ${before.sockets} sockets; all open: ${describeReading(open)}, ${open.sockets} sockets (${open.clientConnections} client connections)`);

    // 4. The measured window.
    let window: WindowResult | undefined;
    if (measure) window = await measureWindow(setup, transport, processes, productIds, subscribersOf, log);

    // 5. Everyone leaves.
    const leaveStarted = performance.now();
    await Promise.all(processes.map((p) => p.call('POST', '/close')));
    let left = { subscriptions: 0, upstreams: 0, subgraphOpen: 0, clientConnections: 0 };
    const drained = await until(async () => {
      const now = await router.counts();
      left = { subscriptions: now.subscriptions, upstreams: now.upstreams, subgraphOpen: await pusher.subscriptionsOpen(), clientConnections: 0 };
      return left.subscriptions === 0 && left.upstreams === 0 && left.subgraphOpen === 0;
    }, 60_000);
    const drainSeconds = (performance.now() - leaveStarted) / 1000;
    await Promise.all(loadHandles.map((h) => h.stop()));
    // A second for sockets in their closing handshake, then the reading (its collection included).
    await delay(1_000);
    const after = await router.reading();
    // Client connections the router still holds once every client process has exited: none may be left.
    left.clientConnections = after.clientConnections;
    log(`every client left: ${drained.ok ? `nothing open after ${drainSeconds.toFixed(1)} s` : `STILL OPEN after ${drainSeconds.toFixed(1)} s`} (router subscriptions ${left.subscriptions}, upstream ${left.upstreams}, at the subgraph ${left.subgraphOpen}, client connections ${left.clientConnections}; sockets ${before.sockets} before, ${after.sockets} after); ${describeReading(after)}`);
    return {
      transport,
      subscriptions: count,
      products: productIds.length,
      loadProcesses: processes.length,
      openSeconds: opened.ms / 1000,
      openCpuUsPerSubscription: (openCpuMs * 1000) / count,
      before,
      open,
      after,
      rssKbPerSubscription: ((open.rssMb - before.rssMb) * 1024) / count,
      heapKbPerSubscription: ((open.heapUsedMb - before.heapUsedMb) * 1024) / count,
      ...(window ? { window } : {}),
      drainSeconds,
      leftOpen: left,
    };
  } finally {
    await Promise.all(loadHandles.map((h) => h.stop()));
  }
}

async function measureWindow(setup: Setup, transport: SubscriptionTransport, processes: readonly ClientProcess[], productIds: readonly string[], subscribersOf: ReadonlyMap<string, number>, log: (line: string) => void): Promise<WindowResult> {
  const { context, router, pusher, subgraphs, windowMs, pushesPerSecond } = setup;
  const loadHandles = processes.map((p) => p.handle);
  await Promise.all(processes.map((p) => p.call('POST', '/clear')));
  pusher.clear();
  const metrics0 = await router.metrics();
  const cpu0 = { router: router.gateway.process.cpuMs() ?? 0, load: cpuOf(loadHandles), subgraphs: cpuOf(subgraphs.map((s) => s.process)), core: readCoreBusyMs(context.cores.load), routerCore: readCoreTimesMs(context.cores.gateway) };
  const from = wallClockMs();
  const started = performance.now();
  const pushing = () => pusher.run(productIds, pushesPerSecond, windowMs);
  const profiled = setup.profileDir ? (await router.profile(pushing)).profile : (await pushing(), undefined);
  const to = wallClockMs();
  const elapsedMs = performance.now() - started;
  const cpu1 = { router: router.gateway.process.cpuMs() ?? 0, load: cpuOf(loadHandles), subgraphs: cpuOf(subgraphs.map((s) => s.process)), core: readCoreBusyMs(context.cores.load), routerCore: readCoreTimesMs(context.cores.gateway) };
  const metrics1 = await router.metrics();
  const delta = (name: string) => sumOfMetric(metrics1, name) - sumOfMetric(metrics0, name);
  const majorDelta = (name: string, bucket?: string) => labelled(metrics1, name, 'major', bucket) - labelled(metrics0, name, 'major', bucket);

  const pushes = pusher.pushes;
  const expectedDeliveries = pushes.reduce((total, push) => total + (subscribersOf.get(push.productId) ?? 0), 0);
  // Events pushed near the end are still on their way: wait for them (or for the straggler time).
  await until(async () => (await statuses(processes)).events >= expectedDeliveries, STRAGGLER_MS);
  const reports = await Promise.all(processes.map((p) => p.call<FleetReport>('POST', '/report', { from, to, pushes })));
  const { firstProblem } = await statuses(processes);
  const latencies = reports.flatMap((r) => r.latenciesMs);
  const arrivedInWindow = reports.reduce((total, r) => total + r.arrivedInWindow, 0);
  const matched = reports.reduce((total, r) => total + r.matched, 0);
  const routerCpuMs = cpu1.router - cpu0.router;
  const window: WindowResult = {
    seconds: elapsedMs / 1000,
    pushes: pushes.length,
    subgraphDeliveriesPerPush: pushes.length ? pusher.subgraphDeliveries / pushes.length : Number.NaN,
    expectedDeliveries,
    matched,
    lost: expectedDeliveries - matched,
    unmatched: reports.reduce((total, r) => total + r.unmatched, 0),
    malformed: reports.reduce((total, r) => total + r.malformed, 0),
    eventsPerSecond: arrivedInWindow / (elapsedMs / 1000),
    routerCpuPct: (routerCpuMs / elapsedMs) * 100,
    eventsPerCpuSecond: arrivedInWindow / (routerCpuMs / 1000),
    eventsIn: delta('switchyard_subscription_events_in_total'),
    eventsOut: delta('switchyard_subscription_events_out_total'),
    eventsDropped: delta('switchyard_subscription_events_dropped_total'),
    eventCompletionMeanMs: (delta('switchyard_subscription_event_seconds_sum') / delta('switchyard_subscription_event_seconds_count')) * 1000,
    eventLoopDelayP99Ms: sumOfMetric(metrics1, 'switchyard_nodejs_eventloop_lag_p99_seconds') * 1000,
    eventLoopDelayMaxMs: sumOfMetric(metrics1, 'switchyard_nodejs_eventloop_lag_max_seconds') * 1000,
    gc: {
      major: majorDelta('switchyard_nodejs_gc_duration_seconds_count'),
      majorMs: majorDelta('switchyard_nodejs_gc_duration_seconds_sum') * 1000,
      majorOver100Ms: majorDelta('switchyard_nodejs_gc_duration_seconds_bucket', '+Inf') - majorDelta('switchyard_nodejs_gc_duration_seconds_bucket', '0.1'),
      totalMs: delta('switchyard_nodejs_gc_duration_seconds_sum') * 1000,
    },
    latencyMs: summariseLatencies(latencies),
    loadGeneratorCpuPct: ((cpu1.load - cpu0.load) / elapsedMs) * 100,
    subgraphsCpuPct: ((cpu1.subgraphs - cpu0.subgraphs) / elapsedMs) * 100,
    loadCoreBusyPct: cpu0.core === undefined || cpu1.core === undefined ? undefined : ((cpu1.core - cpu0.core) / elapsedMs) * 100,
    // Without pinning the router has no core of its own, and "others" means nothing.
    ...(firstProblem ? { firstProblem } : {}),
    othersOnRouterCorePct: context.cores.gateway === undefined || !cpu0.routerCore || !cpu1.routerCore ? undefined : Math.max(0, ((cpu1.routerCore.processes + cpu1.routerCore.steal - cpu0.routerCore.processes - cpu0.routerCore.steal - routerCpuMs) / elapsedMs) * 100),
    interruptsOnRouterCorePct: context.cores.gateway === undefined || !cpu0.routerCore || !cpu1.routerCore ? undefined : ((cpu1.routerCore.interrupts - cpu0.routerCore.interrupts) / elapsedMs) * 100,
  };
  if (profiled && setup.profileDir) {
    const file = path.join(setup.profileDir, `subscriptions-${transport}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profiled));
    window.profile = summariseProfile(profiled, arrivedInWindow, file);
  }
  const l = window.latencyMs;
  log(
    `${pushes.length} pushes in ${window.seconds.toFixed(1)} s → ${window.eventsPerSecond.toFixed(0)} events/s delivered, router CPU ${window.routerCpuPct.toFixed(0)}% (${window.eventsPerCpuSecond.toFixed(0)} events per CPU-second); latency p50 ${l.p50.toFixed(1)} ms, p99 ${l.p99.toFixed(1)} ms, max ${l.max.toFixed(1)} ms; lost ${window.lost}, malformed ${window.malformed}; router event-loop delay p99 ${window.eventLoopDelayP99Ms.toFixed(0)} ms, max ${window.eventLoopDelayMaxMs.toFixed(0)} ms, ${window.gc.major} major collections (${window.gc.majorMs.toFixed(0)} ms, ${window.gc.majorOver100Ms} over 100 ms), all collections ${window.gc.totalMs.toFixed(0)} ms; others on the router's core ${window.othersOnRouterCorePct?.toFixed(0) ?? '?'}% (interrupts ${window.interruptsOnRouterCorePct?.toFixed(0) ?? '?'}%); load core ${window.loadCoreBusyPct?.toFixed(0) ?? '?'}% busy (clients ${window.loadGeneratorCpuPct.toFixed(0)}%, subgraphs ${window.subgraphsCpuPct.toFixed(0)}%)`,
  );
  if (pusher.failures.length) log(`${pusher.failures.length} pushes failed, first: ${pusher.failures[0]}`);
  if (firstProblem) log(`first problem a client saw: ${firstProblem}`);
  return window;
}

const f1 = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(1));
const f0 = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(0));
const NAMES: Record<SubscriptionTransport, string> = { ws: 'graphql-ws', sse: 'SSE' };

function formatResult(result: SubscriptionsResult): string {
  const { idle, passes, targets } = result;
  const rows = passes.map((p) => {
    const w = p.window;
    return [
      NAMES[p.transport],
      String(p.subscriptions),
      f1(p.openSeconds),
      f0(p.openCpuUsPerSubscription),
      f1(p.before.rssMb),
      f1(p.open.rssMb),
      f1(p.rssKbPerSubscription),
      f1(p.heapKbPerSubscription),
      f0(w?.eventsPerSecond),
      w ? `${f0(w.routerCpuPct)}%` : '-',
      f0(w?.eventsPerCpuSecond),
      f1(w?.latencyMs.p50),
      f1(w?.latencyMs.p99),
      f1(w?.latencyMs.max),
      w ? `${w.lost}${w.malformed ? ` (${w.malformed} with errors)` : ''}` : '-',
      `${p.leftOpen.subscriptions}/${p.leftOpen.upstreams}/${p.leftOpen.subgraphOpen}/${p.leftOpen.clientConnections}`,
      f1(p.drainSeconds),
      f1(p.after.rssMb),
    ];
  });
  const header = ['transport', 'open', 'opened in s', 'µs CPU/subscribe', 'RSS before MB', 'RSS open MB', 'KB/sub RSS', 'KB/sub heap', 'events/s', 'router CPU', 'events/CPU-s', 'p50 ms', 'p99 ms', 'max ms', 'lost', 'left open', 'drained in s', 'RSS after MB'];
  const lines = [
    `subscriptions: ${result.subscriptions} subscriptions per transport over ${result.products} products (ids 1..${result.products}, ${Math.round(result.subscriptions / result.products)} clients each), ${result.pushesPerSecond} pushes/s for ${(result.windowMs / 1000).toFixed(0)} s`,
    `  one router (auth off, subgraph tokens on) alone on the gateway core; the real demo subgraphs (INVENTORY_TICK_MS=0), the clients (${passes[0]?.loadProcesses ?? '?'} process(es), at most ${CLIENTS_PER_PROCESS} clients each) and the pusher on the load core`,
    `  router idle after a warm-up of ${WARMUP_SUBSCRIPTIONS} subscriptions per transport: RSS ${f1(idle.rssMb)} MB, heap used ${f1(idle.heapUsedMb)} MB, ${idle.sockets} sockets`,
    ...table(header, rows).map((line) => `  ${line}`),
    '  (readings after a full collection through the inspector; KB/sub = (open − before) / N; events/s: events that reached the clients inside the window; router CPU: % of one core, /proc;',
    '   latency: from just before the push to the inventory admin API to the client reading the event; lost: deliveries expected from the pushes that never arrived; left open: router subscriptions/upstream subscriptions/subgraph subscriptions/client connections after the clients left)',
  ];
  for (const p of passes) {
    const w = p.window;
    if (!w) continue;
    lines.push(
      `  ${NAMES[p.transport]}: latency p90 ${f1(w.latencyMs.p90)} ms, p99.9 ${f1(w.latencyMs.p999)} ms, mean ${f1(w.latencyMs.mean)} ms over ${w.latencyMs.count} events; router: ${w.eventsIn} events in, ${w.eventsOut} out, ${w.eventsDropped} dropped, ${f1(w.eventCompletionMeanMs)} ms mean completion (entity fetch); event-loop delay p99 ${f0(w.eventLoopDelayP99Ms)} ms, max ${f0(w.eventLoopDelayMaxMs)} ms; ${w.gc.major} major collections, ${f0(w.gc.majorMs)} ms of pauses (${w.gc.majorOver100Ms} over 100 ms), all collections ${f0(w.gc.totalMs)} ms; others on the router's core ${f0(w.othersOnRouterCorePct)}% (kernel interrupts ${f0(w.interruptsOnRouterCorePct)}%)${(w.othersOnRouterCorePct ?? 0) > DISTURBED_PCT ? ' (DISTURBED: read its latency and events/s with care)' : ''}; subgraph reached ${w.subgraphDeliveriesPerPush.toFixed(2)} subscriptions per push; load core ${f0(w.loadCoreBusyPct)}% busy (clients ${f0(w.loadGeneratorCpuPct)}%, subgraphs ${f0(w.subgraphsCpuPct)}%)`,
    );
  }
  const kb = Object.entries(targets.kbPerSubscription).map(([t, v]) => `${NAMES[t as SubscriptionTransport]} ${f1(v)} KB`).join(', ');
  lines.push(`  target: an open subscription costs the router under ${MAX_KB_PER_SUBSCRIPTION} KB of RSS: ${kb}: ${targets.kbMet ? 'MET' : 'NOT MET'}`);
  lines.push(
    `  target: RSS after every client left within ${Math.round((MAX_RSS_AFTER_RATIO - 1) * 100)}% of idle: ${f1(result.settled.rssMb)} MB ${SETTLE_MS / 1000} s after the last pass (${f1(result.final.rssMb)} MB right after it) against ${f1(idle.rssMb)} MB (× ${targets.rssAfterRatio.toFixed(3)}): ${targets.rssAfterMet ? 'MET' : 'NOT MET'}; heap used ${f1(result.settled.heapUsedMb)} MB against ${f1(idle.heapUsedMb)} MB; RSS by mapping: malloc heap ${f1(idle.rssBrkMb)} → ${f1(result.settled.rssBrkMb)} MB, anonymous (V8's heap pages among it) ${f1(idle.rssAnonymousMb)} → ${f1(result.settled.rssAnonymousMb)} MB`,
  );
  lines.push(`  target: nothing left open once the clients left (router subscriptions, upstream subscriptions, the subgraph's subscriptions, client connections): ${targets.nothingLeftOpen ? 'MET' : 'NOT MET'}`);
  for (const p of passes) {
    const profile = p.window?.profile;
    if (!profile) continue;
    lines.push(`  router CPU profile of the ${NAMES[p.transport]} window (${profile.file}): ${f0(profile.busyUsPerEvent)} µs busy per delivered event; self µs per event by category: ${profile.categories.map(([c, us]) => `${c} ${us}`).join(', ')}`);
    lines.push(`    heaviest functions: ${profile.functions.map(([fn, us]) => `${fn} ${us}`).join('; ')}`);
  }
  return lines.join('\n');
}

export const subscriptionsMeasurement: Measurement = {
  name: 'subscriptions',
  summary: 'N subscriptions (--subscriptions, default 10,000) through one router over graphql-ws, then SSE: KB per open subscription, events/s and per CPU-second, push-to-client p50/p99, RSS after leave (issue 27)',
  async run(context) {
    const limit = openFileLimit();
    const requested = context.options.subscriptions;
    // The router holds one socket per client (its own limit is this process's): leave room for everything else it opens.
    const count = Math.min(requested, limit - 1_000);
    if (count < 1) throw new Error(`subscriptions: the open-file limit (${limit}) allows too few sockets`);
    if (count < requested) context.log(`  open-file limit ${limit}: measuring ${count} subscriptions instead of ${requested}`);
    const productCount = Math.min(context.options.products, count);
    const productIds = Array.from({ length: productCount }, (_, i) => String(i + 1));
    const pushesPerSecond = context.options.pushRate ?? productCount;
    const windowMs = Math.max(context.options.durationMs, MIN_WINDOW_MS);

    const workDir = mkdtempSync(path.join(tmpdir(), 'switchyard-bench-subscriptions-'));
    let pusher: InventoryPusher | undefined;
    try {
      const subgraphs = await startDemoSubgraphProcesses(context.supervisor, context.cores.load, { INVENTORY_TICK_MS: '0' });
      const supergraphFile = writeSupergraph(workDir, 'demo', subgraphs);
      const inspectPort = await freePort();
      const variant = switchyardVariant({
        name: 'subscriptions',
        description: 'one router, auth off, per-subgraph tokens on (the default), inspector on loopback for full collections',
        env: { SWITCHYARD_MAX_SUBSCRIPTIONS: String(Math.max(20_000, count * 2)) },
        nodeArgs: [`--inspect=127.0.0.1:${inspectPort}`],
      });
      const gateway = await variant.start({ supervisor: context.supervisor, cores: context.cores, workDir }, { supergraphFile, processes: subgraphs.map((s) => s.process), subgraphs });
      const router = new RouterProbe(gateway, inspectPort);
      pusher = new InventoryPusher(subgraphs.find((s) => s.name === 'inventory')!.url);
      const profileDir = context.options.cpuProf ? path.join(PACKAGE_ROOT, 'bench', 'results', `profiles-${new Date().toISOString().replace(/[:.]/g, '-')}`) : undefined;
      if (profileDir) mkdirSync(profileDir, { recursive: true });
      const setup: Setup = { context, router, pusher, subgraphs, productIds, windowMs, pushesPerSecond, ...(profileDir ? { profileDir } : {}) };

      context.log(`  router ${gateway.url} (pid ${gateway.process.pid}); ${count} subscriptions per transport over ${productCount} products, ${pushesPerSecond} pushes/s for ${windowMs / 1000} s`);
      for (const transport of ['ws', 'sse'] as const) await runPass(setup, transport, Math.min(WARMUP_SUBSCRIPTIONS, count), false);
      const idle = await router.reading();
      context.log(`  idle after the warm-up: ${describeReading(idle)}, ${idle.sockets} sockets`);
      const passes: PassResult[] = [];
      for (const transport of ['ws', 'sse'] as const) passes.push(await runPass(setup, transport, count, true));
      const final = passes[passes.length - 1].after;
      context.log(`  idling ${SETTLE_MS / 1000} s for a last reading`);
      await delay(SETTLE_MS);
      const settled = await router.reading();
      context.log(`  ${SETTLE_MS / 1000} s after the last client left: ${describeReading(settled)}, ${settled.sockets} sockets`);
      const kbPerSubscription = Object.fromEntries(passes.map((p) => [p.transport, p.rssKbPerSubscription]));
      const result: SubscriptionsResult = {
        subscriptions: count,
        products: productCount,
        pushesPerSecond,
        windowMs,
        openFileLimit: limit,
        idle,
        passes,
        final,
        settled,
        targets: {
          kbPerSubscription,
          kbMet: passes.every((p) => p.rssKbPerSubscription < MAX_KB_PER_SUBSCRIPTION),
          rssAfterRatio: settled.rssMb / idle.rssMb,
          rssAfterMet: settled.rssMb <= idle.rssMb * MAX_RSS_AFTER_RATIO,
          nothingLeftOpen: passes.every((p) => p.leftOpen.subscriptions === 0 && p.leftOpen.upstreams === 0 && p.leftOpen.subgraphOpen === 0 && p.leftOpen.clientConnections === 0),
        },
      };
      return { result, table: formatResult(result) };
    } finally {
      await pusher?.close().catch(() => undefined);
      await context.supervisor.stopAll();
      rmSync(workDir, { recursive: true, force: true });
    }
  },
};
