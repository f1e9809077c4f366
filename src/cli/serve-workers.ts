// `switchyard serve --workers N`: a primary process that forks N routers on one port, replaces those that crash, reloads and stops them (decision 012).
import cluster, { type Worker } from 'node:cluster';
import { WORKER_SLOT_ENV, workerSlotFromEnv } from '../config/env.js';
import type { Logger } from '../telemetry/logger.js';
import { CliError } from './cli-kit.js';

/*
 * How the primary looks after its workers:
 *
 * 1. It forks one worker per slot (1..N). A worker runs the same `serve` as a single process; `node:cluster`
 *    shares the listening socket, and the primary hands each new connection to the workers in turn. The
 *    primary itself answers no request.
 * 2. A worker says it is ready (an IPC message) once its router listens. When every slot is ready the pool
 *    has started; a worker that dies before that fails the start, as a single process would.
 * 3. A worker that dies afterwards is replaced in its slot. Deaths soon after start (before it listened,
 *    or within STABLE_AFTER_MS of it) back off exponentially; GIVE_UP_AFTER of them in a row in one slot
 *    stop the pool, since a crash loop serves nothing and only burns CPU.
 * 4. reload() (SIGHUP) goes slot by slot: fork the new worker, wait until it listens, then stop the old
 *    one gracefully; the port never lacks a listener. A new worker that does not start ends the reload and
 *    the old ones keep serving.
 * 5. close() (SIGTERM, SIGINT) sends SIGTERM to every worker, which drains like a single process, and
 *    SIGKILLs any still running after stopTimeoutMs.
 */

/** A worker that served this long before dying was not crash-looping: its replacement starts at once, in ms. */
const STABLE_AFTER_MS = 10_000;
/** First delay before replacing a worker that died soon after start, doubled at each further such death, in ms. */
const RESTART_BACKOFF_MS = 250;
const RESTART_BACKOFF_MAX_MS = 8_000;
/** Consecutive deaths soon after start, in one slot, after which the pool stops. */
const GIVE_UP_AFTER = 5;
/** How long a new worker may take to listen (registry mode reads the database first), in ms. */
const READY_TIMEOUT_MS = 60_000;

const READY = 'switchyard:ready';

/** What a worker tells its primary once its router listens. */
interface ReadyMessage {
  type: typeof READY;
  url: string;
}

function isReadyMessage(message: unknown): message is ReadyMessage {
  return typeof message === 'object' && message !== null && (message as ReadyMessage).type === READY && typeof (message as ReadyMessage).url === 'string';
}

/** This process's slot (1..N) when a `serve --workers` primary forked it; undefined in a single process. */
export function workerSlot(): string | undefined {
  return cluster.isWorker ? workerSlotFromEnv() : undefined;
}

/** Tells the primary that this worker's router listens at `url`. */
export function announceReady(url: string): void {
  process.send?.({ type: READY, url } satisfies ReadyMessage);
}

/**
 * The last step of a worker's graceful stop, after its router has drained: a round trip to the primary.
 * The primary may have handed this worker a new connection just before it learnt that the worker's
 * server closed; that hand-off waits in the channel, and a worker that exited without reading it would
 * leave the client hanging (the primary keeps the socket until the worker answers). Messages arrive in
 * order, so once the primary's answer to the disconnect is here, every earlier hand-off has been read
 * and sent back to be given to another worker.
 */
export function leavePrimary(): Promise<void> {
  const worker = cluster.worker;
  if (!worker || !worker.isConnected()) return Promise.resolve();
  return new Promise((resolve) => {
    worker.once('disconnect', () => resolve());
    worker.disconnect();
  });
}

export interface WorkerPoolOptions {
  /** Router processes to run, at least 2 (1 is a single process, without a primary). */
  workers: number;
  logger: Logger;
  /** How long a worker may drain after SIGTERM before it is killed, in ms. Default 30000. */
  stopTimeoutMs?: number;
  /** Called once the pool has given up on a crash loop and stopped every worker; the caller exits non-zero. */
  onGiveUp(reason: string): void;
}

export interface WorkerPool {
  /** The router's URL, on the port every worker shares. */
  readonly url: string;
  /** Replaces the workers one by one; resolves when done (or stopped by a worker that did not start). */
  reload(): Promise<void>;
  /** Stops every worker gracefully; rejects when one had to be killed or exited with an error. */
  close(): Promise<void>;
}

interface Started {
  worker: Worker;
  /** Resolves with the worker's URL once it listens; rejects if it exits or times out first. */
  ready: Promise<string>;
}

/** What the pool knows about its workers, shared by its parts below. */
interface PoolState {
  readonly logger: Logger;
  readonly workers: number;
  /** How long a worker may drain after SIGTERM before it is killed, in ms. */
  readonly stopTimeoutMs: number;
  readonly slots: readonly number[];
  /** The worker serving each slot (or starting to, after a crash). */
  readonly current: Map<number, Worker>;
  readonly slotOf: WeakMap<Worker, number>;
  readonly readyAt: WeakMap<Worker, number>;
  /** Deaths soon after start, in a row, per slot. */
  readonly failures: Map<number, number>;
  /** Workers being stopped on purpose (reload, close): their exit is no crash. */
  readonly stopping: WeakSet<Worker>;
  /** Set once `close` (or a failed start) began stopping every worker. */
  closing: Promise<void> | undefined;
}

/** Forks the router for `slot`; its readiness settles when it listens, exits, or takes longer than READY_TIMEOUT_MS. */
function spawnWorker(state: PoolState, slot: number): Started {
  const { logger } = state;
  const worker = cluster.fork({ [WORKER_SLOT_ENV]: String(slot) });
  state.slotOf.set(worker, slot);
  const ready = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      done();
      logger.error({ worker: slot, pid: worker.process.pid }, `worker did not listen within ${READY_TIMEOUT_MS} ms; killing it`);
      worker.process.kill('SIGKILL');
      reject(new Error(`worker ${slot} did not listen within ${READY_TIMEOUT_MS} ms`));
    }, READY_TIMEOUT_MS);
    const onMessage = (message: unknown) => {
      if (!isReadyMessage(message)) return;
      done();
      state.readyAt.set(worker, Date.now());
      logger.info({ worker: slot, pid: worker.process.pid, url: message.url }, 'worker listening');
      resolve(message.url);
    };
    const onExit = (code: number | null, signal: string | null) => {
      done();
      reject(new Error(`worker ${slot} exited (${signal ?? `code ${code}`}) before it was listening`));
    };
    const done = () => {
      clearTimeout(timer);
      worker.off('message', onMessage);
      worker.off('exit', onExit);
    };
    worker.on('message', onMessage);
    worker.once('exit', onExit);
  });
  // Whoever awaits `ready` handles a failure; this keeps an unawaited one from being unhandled.
  ready.catch(() => {});
  return { worker, ready };
}

/** SIGTERM, then SIGKILL after stopTimeoutMs; resolves true when the worker drained and exited cleanly. */
function stopWorker(state: PoolState, worker: Worker): Promise<boolean> {
  state.stopping.add(worker);
  return new Promise((resolve) => {
    if (worker.isDead()) {
      resolve(true);
      return;
    }
    const timer = setTimeout(() => {
      state.logger.error({ worker: state.slotOf.get(worker), pid: worker.process.pid }, `worker still draining after ${state.stopTimeoutMs} ms; killing it`);
      worker.process.kill('SIGKILL');
    }, state.stopTimeoutMs);
    worker.once('exit', (code: number | null, signal: string | null) => {
      clearTimeout(timer);
      // A worker stopped before its router started has nothing to drain: the default SIGTERM action is clean too.
      resolve(code === 0 || signal === 'SIGTERM');
    });
    worker.process.kill('SIGTERM');
  });
}

/** A reload: each slot gets a new worker, and its old one is stopped once the new one listens. */
async function reloadSlots(state: PoolState): Promise<void> {
  const { logger } = state;
  logger.info({ workers: state.workers }, 'reload: replacing workers one by one');
  for (const slot of state.slots) {
    if (state.closing) return;
    const fresh = spawnWorker(state, slot);
    try {
      await fresh.ready;
    } catch (error) {
      logger.error({ worker: slot, err: error }, 'reload stopped: a new worker did not start; the others keep serving');
      return;
    }
    if (state.closing) return;
    const old = state.current.get(slot);
    state.current.set(slot, fresh.worker);
    state.failures.delete(slot);
    if (old) await stopWorker(state, old);
  }
  logger.info({ workers: state.workers }, 'reload complete');
}

/** Forks `options.workers` routers and resolves once all of them listen. */
export async function startWorkerPool(options: WorkerPoolOptions): Promise<WorkerPool> {
  const { logger } = options;
  const state: PoolState = {
    logger,
    workers: options.workers,
    stopTimeoutMs: options.stopTimeoutMs ?? 30_000,
    slots: Array.from({ length: options.workers }, (_, i) => i + 1),
    current: new Map(),
    slotOf: new WeakMap(),
    readyAt: new WeakMap(),
    failures: new Map(),
    stopping: new WeakSet(),
    closing: undefined,
  };
  const { current, failures } = state;
  const restartTimers = new Set<NodeJS.Timeout>();
  let started = false;
  let reloading: Promise<void> | undefined;

  const stopAll = async (): Promise<boolean> => {
    for (const timer of restartTimers) clearTimeout(timer);
    restartTimers.clear();
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    return (await Promise.all(workers.map((worker) => stopWorker(state, worker)))).every(Boolean);
  };

  function replace(slot: number, delayMs: number): void {
    const timer = setTimeout(() => {
      restartTimers.delete(timer);
      // A reload may have filled the slot meanwhile.
      if (state.closing || current.has(slot)) return;
      // Its readiness needs no waiter: if it dies too, onWorkerExit handles it like any crash.
      current.set(slot, spawnWorker(state, slot).worker);
    }, delayMs);
    restartTimers.add(timer);
  }

  function onWorkerExit(worker: Worker, code: number | null, signal: string | null): void {
    if (state.stopping.has(worker) || state.closing || !started) return;
    const slot = state.slotOf.get(worker);
    // A reload's new worker that failed before it served: the reload reports it.
    if (slot === undefined || current.get(slot) !== worker) return;
    current.delete(slot);
    const servedSince = state.readyAt.get(worker);
    const soon = servedSince === undefined || Date.now() - servedSince < STABLE_AFTER_MS;
    const count = soon ? (failures.get(slot) ?? 0) + 1 : 0;
    failures.set(slot, count);
    if (count >= GIVE_UP_AFTER) {
      const reason = `worker ${slot} died ${count} times in a row soon after starting (last: ${signal ?? `code ${code}`}); stopping every worker`;
      logger.fatal({ worker: slot, pid: worker.process.pid, code, signal }, reason);
      void stopAll().then(() => options.onGiveUp(reason));
      return;
    }
    const delayMs = count === 0 ? 0 : Math.min(RESTART_BACKOFF_MS * 2 ** (count - 1), RESTART_BACKOFF_MAX_MS);
    logger.error({ worker: slot, pid: worker.process.pid, code, signal, restartInMs: delayMs }, 'worker exited; replacing it');
    replace(slot, delayMs);
  }
  cluster.on('exit', onWorkerExit);

  // 2. Start every slot; any failure stops the others and fails the start.
  const first = state.slots.map((slot) => {
    const fresh = spawnWorker(state, slot);
    current.set(slot, fresh.worker);
    return fresh;
  });
  let urls: string[];
  try {
    urls = await Promise.all(first.map((f) => f.ready));
  } catch (error) {
    state.closing = stopAll().then(() => {});
    await state.closing;
    cluster.off('exit', onWorkerExit);
    throw new CliError(`${(error as Error).message}; the router did not start`);
  }
  started = true;
  const url = urls[0]!;
  const port = new URL(url).port;
  logger.info({ url, port: Number(port), workers: options.workers }, 'all workers listening');

  return {
    url,
    reload() {
      if (state.closing) return Promise.resolve();
      if (reloading) {
        logger.info('reload already under way');
        return reloading;
      }
      return (reloading = reloadSlots(state).finally(() => (reloading = undefined)));
    },
    close() {
      return (state.closing ??= stopAll().then((clean) => {
        cluster.off('exit', onWorkerExit);
        if (!clean) throw new Error('a worker did not stop cleanly (see the log above)');
      }));
    },
  };
}
