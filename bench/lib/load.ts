// The load generator: a fixed number of keep-alive connections, each sending its next request as soon as the last one answered.
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { Pool } from 'undici';
import { percentile } from './stats.js';

/** One HTTP request of the load: a body and the headers that make it unique. */
export interface LoadRequest {
  body: string;
  headers: Record<string, string>;
}

export interface LoadOptions {
  /** The GraphQL endpoint, e.g. http://127.0.0.1:4000/graphql. */
  url: string;
  /** Concurrent connections, each with one request in flight (no pipelining). */
  connections: number;
  /** Warm-up before the measured window, in ms: answers in it are not counted (JIT, pools, caches settle). */
  warmupMs: number;
  /** The measured window, in ms. */
  durationMs: number;
  /** Builds request `n`; `n` is unique within the whole bench run (see RequestNumbers). */
  request: (n: number) => LoadRequest;
  numbers: RequestNumbers;
  /** Stop sending after this many requests (the window may end first). Default: no limit. */
  maxRequests?: number;
  /** Called every ~500 ms while the load runs (memory sampling). */
  onTick?: () => void;
  /** Called when the measured window opens and when it closes (CPU time snapshots). */
  onWindow?: (edge: 'start' | 'end') => void;
}

export interface LoadResult {
  /** Answers completed inside the measured window. */
  requests: number;
  /** Answers per second inside the measured window. */
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers with a status outside 200-299. */
  non2xx: number;
  /** Requests that got no HTTP answer (refused, reset, timeout). */
  networkErrors: number;
  /** 2xx answers whose body carries a GraphQL `errors` member. */
  graphqlErrors: number;
  /** Every request sent, warm-up included, for per-operation ratios such as subgraph fetches. */
  sentTotal: number;
  /** Answers completed, warm-up included. */
  completedTotal: number;
  /** CPU time this process (the load generator) used during the whole load, in ms. */
  loadgenCpuMs: number;
  /** Wall time of the whole load (warm-up included), in ms. */
  wallMs: number;
}

/** Hands out request numbers that never repeat within one bench run, so no two requests share an Authorization header. */
export class RequestNumbers {
  #next = 0;
  next(): number {
    return this.#next++;
  }
}

/**
 * Runs the load and measures it:
 * 1. opens `connections` keep-alive connections (an undici Pool, one request in flight per connection);
 * 2. each connection loops: take the next request number, send, read the whole body, record, repeat,
 *    until the window ends (a closed loop: throughput is what the server sustains at this concurrency);
 * 3. an answer counts when it completes inside [warm-up end, end]: its latency goes into the percentiles;
 * 4. every 2xx body is searched for `"errors"` (a plain substring search: cheap, and the bodies are small),
 *    so a gateway that answers fast with errors cannot look fast.
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const target = new URL(options.url);
  const pool = new Pool(target.origin, { connections: options.connections, pipelining: 1, keepAliveTimeout: 60_000 });
  const path = target.pathname + target.search;
  const latencies: number[] = [];
  let non2xx = 0;
  let networkErrors = 0;
  let graphqlErrors = 0;
  let sentTotal = 0;
  let completedTotal = 0;

  const cpuBefore = process.cpuUsage();
  const startedAt = performance.now();
  const measureFrom = startedAt + options.warmupMs;
  const endAt = measureFrom + options.durationMs;
  const ticker = options.onTick ? setInterval(options.onTick, 500) : undefined;
  const edgesSeen = new Set<'start' | 'end'>();
  const windowEdge = (edge: 'start' | 'end') => {
    if (edgesSeen.has(edge)) return;
    edgesSeen.add(edge);
    options.onWindow?.(edge);
  };
  const windowTimers = [setTimeout(windowEdge, options.warmupMs, 'start'), setTimeout(windowEdge, options.warmupMs + options.durationMs, 'end')];

  async function connectionLoop(): Promise<void> {
    while (performance.now() < endAt && sentTotal < (options.maxRequests ?? Number.POSITIVE_INFINITY)) {
      const { body, headers } = options.request(options.numbers.next());
      const sentAt = performance.now();
      sentTotal++;
      try {
        const response = await pool.request({ path, method: 'POST', headers, body });
        const text = await response.body.text();
        const doneAt = performance.now();
        completedTotal++;
        if (doneAt < measureFrom || doneAt > endAt) continue;
        latencies.push(doneAt - sentAt);
        if (response.statusCode < 200 || response.statusCode > 299) non2xx++;
        else if (text.includes('"errors"')) graphqlErrors++;
      } catch {
        const doneAt = performance.now();
        if (doneAt >= measureFrom && doneAt <= endAt) networkErrors++;
        // A refused connection fails at once: pause so a dead target does not turn the loop into a busy spin.
        await delay(10);
      }
    }
  }

  try {
    await Promise.all(Array.from({ length: options.connections }, connectionLoop));
  } finally {
    if (ticker) clearInterval(ticker);
    // The last answers can all arrive in the same turn of the event loop, before the 'end' timer runs: fire it here then.
    for (const timer of windowTimers) clearTimeout(timer);
    windowEdge('start');
    windowEdge('end');
    await pool.close();
  }
  const cpu = process.cpuUsage(cpuBefore);
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    rps: latencies.length / (options.durationMs / 1000),
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    non2xx,
    networkErrors,
    graphqlErrors,
    sentTotal,
    completedTotal,
    loadgenCpuMs: (cpu.user + cpu.system) / 1000,
    wallMs: performance.now() - startedAt,
  };
}
