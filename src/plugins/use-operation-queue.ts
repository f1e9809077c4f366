// Per-operation capacity: beyond max_concurrency requests wait in FIFO order; a full queue answers with a waiting ticket.
import type { Plugin, YogaInitialContext } from 'graphql-yoga';
import { clientError, requestError } from '../errors/client-error.js';
import { DEFAULT_POLICY, type PolicyBook } from '../registry/policy-store.js';
import { executingOperation } from '../request/operation-analysis.js';
import { requestStateOf } from '../request/request-state.js';
import type { RouterMetrics } from '../telemetry/metrics.js';
import { OperationQueue, QueueRefused, type QueueLimits } from './queue/operation-queue.js';
import type { TicketStore } from './queue/ticket-store.js';

export interface OperationQueueOptions {
  policies: PolicyBook;
  tickets: TicketStore;
  metrics?: RouterMetrics;
  /** Limits used where no policy sets them. Default: unlimited concurrency, queue 100, wait 5000 ms. */
  defaults?: Partial<QueueLimits>;
}

const TICKET_HEADER = 'switchyard-queue-ticket';

/** How long a ticket stays valid beyond its suggested retry time, in ms. */
const TICKET_GRACE_MS = 30_000;

export interface OperationQueues {
  plugin: Plugin;
  /** Admits waiters after a policy change (a raised capacity takes effect at once). */
  pumpAll(): void;
}

/** The 503 of a refused request (3), counted by reason. */
function refusal(metrics: RouterMetrics | undefined, key: string, reason: 'full' | 'timeout', retryAfterMs: number, ticket?: string) {
  metrics?.queueRejected.inc({ operation: key, reason });
  const retryAfter = String(Math.max(1, Math.ceil(retryAfterMs / 1000)));
  if (reason === 'full') {
    return requestError('QUEUE_FULL', `Operation "${key}" is at capacity and its queue is full; retry after ${retryAfterMs} ms with the waiting ticket.`, {
      httpHeaders: { 'retry-after': retryAfter },
      extensions: { queue: { ticket, retryAfterMs } },
    });
  }
  return requestError('QUEUE_TIMEOUT', `Waited too long in the queue of operation "${key}"; retry after ${retryAfterMs} ms.`, {
    httpHeaders: { 'retry-after': retryAfter },
    extensions: { queue: { retryAfterMs } },
  });
}

/**
 * 1. The queue key is the operation name when it has a policy of its own, else `*`: unknown names
 *    share one queue, so inventing names does not buy capacity.
 * 2. A request with a valid `Switchyard-Queue-Ticket` (redeemed once, in the database) waits in the
 *    priority list, ahead of newcomers, even when the queue is full.
 * 3. Refusals are 503 with `Retry-After`: QUEUE_FULL carries `extensions.queue = { ticket,
 *    retryAfterMs }`, QUEUE_TIMEOUT the same advice without a ticket. A client that disconnects while
 *    waiting leaves at once and takes no slot.
 * 4. The slot is released exactly once when execution ends, however it ends (result, error, a later
 *    plugin stopping it, a throw).
 */
export function createOperationQueues(options: OperationQueueOptions): OperationQueues {
  const { policies, tickets, metrics } = options;
  const defaults: QueueLimits = { maxConcurrency: Infinity, queueLength: 100, maxWaitMs: 5_000, ...options.defaults };
  const queues = new Map<string, { queue: OperationQueue; averageMs: number }>();

  function limitsOf(key: string): QueueLimits {
    const policy = policies.resolve(key);
    return {
      maxConcurrency: policy.maxConcurrency ?? defaults.maxConcurrency,
      queueLength: policy.queueLength ?? defaults.queueLength,
      maxWaitMs: policy.maxWaitMs ?? defaults.maxWaitMs,
    };
  }

  function queueFor(key: string) {
    let entry = queues.get(key);
    if (!entry) {
      const inFlight = metrics?.queueInflight.labels(key);
      const waiting = metrics?.queueWaiting.labels(key);
      entry = {
        queue: new OperationQueue({
          limits: () => limitsOf(key),
          onChange(inFlightCount, waitingCount) {
            inFlight?.set(inFlightCount);
            waiting?.set(waitingCount);
          },
        }),
        averageMs: 50,
      };
      queues.set(key, entry);
    }
    return entry;
  }

  const plugin: Plugin = {
    async onExecute({ args, setExecuteFn, executeFn, setResultAndStopExecution }) {
      const operation = executingOperation(args.contextValue, args.document, args.operationName);
      if (operation?.operation === 'subscription') return;
      const name = operation?.name?.value;
      const key = policies.hasOwn(name) ? name! : DEFAULT_POLICY;
      const limits = limitsOf(key);
      if (limits.maxConcurrency === Infinity) return;
      const entry = queueFor(key);
      const request = (args.contextValue as Partial<YogaInitialContext>).request;
      const presented = request?.headers.get(TICKET_HEADER);
      const priority = presented ? await tickets.redeem(presented, key).catch(() => false) : false;
      let permit;
      try {
        permit = await entry.queue.acquire({ signal: request?.signal, priority });
      } catch (error) {
        if (!(error instanceof QueueRefused)) throw error;
        const retryAfterMs = Math.min(60_000, Math.max(100, Math.round((entry.averageMs * (entry.queue.waiting + 1)) / Math.max(1, limits.maxConcurrency))));
        if (error.reason === 'aborted') {
          metrics?.queueRejected.inc({ operation: key, reason: 'aborted' });
          // No HTTP status of its own (not the catalogue's 499): the client is gone and reads nothing; the code is for logs and metrics.
          setResultAndStopExecution({ errors: [clientError('REQUEST_CANCELLED', 'The client closed the connection while waiting.')] });
          return;
        }
        const ticket = error.reason === 'full' ? await tickets.issue(key, retryAfterMs + TICKET_GRACE_MS).then((t) => t.ticket, () => undefined) : undefined;
        setResultAndStopExecution({ errors: [refusal(metrics, key, error.reason, retryAfterMs, ticket)] });
        return;
      }
      metrics?.queueWait.observe({ operation: key }, permit.waitedMs / 1000);
      const started = performance.now();
      const done = () => {
        // An exponentially weighted average of execution time paces the Retry-After advice.
        entry.averageMs = entry.averageMs * 0.9 + (performance.now() - started) * 0.1;
        permit.release();
      };
      setExecuteFn(async function executeHoldingSlot(executionArgs) {
        try {
          return await executeFn(executionArgs);
        } finally {
          // A deferred query holds its place until its last payload, or until its client leaves.
          requestStateOf(executionArgs.contextValue).whenAnswered(done);
        }
      });
      return {
        onExecuteDone() {
          // Covers a later plugin replacing or stopping execution (the query plans do); release() is
          // idempotent. A deferred query's stream holds the place until its end.
          requestStateOf(args.contextValue).whenAnswered(() => permit.release());
        },
      };
    },
  };

  return {
    plugin,
    pumpAll() {
      for (const { queue } of queues.values()) queue.pump();
    },
  };
}
