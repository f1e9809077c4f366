// A load generator that times every payload of an answer: when the first one is complete (time to first payload) and when the last one is (total).
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { Pool } from 'undici';
import type { LoadRequest, RequestNumbers } from './load.js';
import { readPayloads } from './multipart-reader.js';
import { percentile } from './stats.js';

/** One payload as it arrived: its parsed JSON and when its last byte came (`performance.now()`). */
export interface ArrivedPayload {
  at: number;
  body: IncrementalPayload;
}

/**
 * The members of a payload the bench reads: a single result (`data`, `errors`), the initial payload of a
 * stream (`hasNext: true`), or a later one (`incremental`, and in graphql-js 17's format `pending` and `completed`).
 */
export interface IncrementalPayload {
  data?: Record<string, unknown> | null;
  errors?: unknown[];
  hasNext?: boolean;
  incremental?: { data?: Record<string, unknown> | null; items?: unknown[]; path?: (string | number)[]; errors?: unknown[] }[];
  completed?: { errors?: unknown[] }[];
}

export interface Answer {
  status: number;
  contentType: string;
  sentAt: number;
  payloads: ArrivedPayload[];
}

/** The errors a payload carries anywhere: its own, an incremental item's, a completed fragment's. */
export function payloadErrors(body: IncrementalPayload): number {
  let count = body.errors?.length ?? 0;
  for (const item of body.incremental ?? []) count += item.errors?.length ?? 0;
  for (const item of body.completed ?? []) count += item.errors?.length ?? 0;
  return count;
}

/** Whether an answer is whole: one JSON payload, or a stream whose last payload says `hasNext: false`. */
export function isComplete(answer: Answer): boolean {
  if (!/^\s*multipart\//i.test(answer.contentType)) return answer.payloads.length === 1;
  return answer.payloads.at(-1)?.body.hasNext === false;
}

/** Sends one request through `pool` and reads its answer to the end, every payload timed and parsed. */
export async function requestPayloads(pool: Pool, path: string, request: LoadRequest): Promise<Answer> {
  const sentAt = performance.now();
  const response = await pool.request({ path, method: 'POST', headers: request.headers, body: request.body });
  const header = response.headers['content-type'];
  const contentType = (Array.isArray(header) ? header[0] : header) ?? '';
  const payloads: ArrivedPayload[] = [];
  await readPayloads(contentType, response.body, (json, at) => {
    let body: IncrementalPayload;
    try {
      body = JSON.parse(json) as IncrementalPayload;
    } catch {
      // Not JSON (an error page): kept as one error, so it counts as a failed answer.
      body = { errors: [{ message: `not JSON: ${json.slice(0, 200)}` }] };
    }
    payloads.push({ at, body });
  });
  return { status: response.statusCode, contentType, sentAt, payloads };
}

export interface PayloadLoadOptions {
  /** The GraphQL endpoint. */
  url: string;
  /** Concurrent connections, each with one request in flight. */
  connections: number;
  /** Answers completed before this many ms are not counted. */
  warmupMs: number;
  /** The measured window, in ms. */
  durationMs: number;
  request: (n: number) => LoadRequest;
  numbers: RequestNumbers;
  /**
   * Spreads the connections' first requests evenly over this many ms. Default 0: all at once. When every
   * answer takes about as long (a subgraph made late on purpose), a closed loop keeps its connections in
   * step: started together, they would arrive in bursts of `connections` for the whole window, and the
   * first payload would be timed queueing behind its own burst.
   */
  staggerMs?: number;
  /** Called when the measured window opens and when it closes (CPU time snapshots). */
  onWindow?: (edge: 'start' | 'end') => void;
}

/** Percentiles of a latency, in ms. */
export interface Latency {
  p50: number;
  p95: number;
  p99: number;
}

export interface PayloadLoadResult {
  /** Answers whose last payload was read inside the measured window. */
  requests: number;
  /** Those answers per second. */
  rps: number;
  /** From sending the request to the first payload's last byte. */
  firstPayloadMs: Latency;
  /** From sending the request to the last payload's last byte. */
  totalMs: Latency;
  /** Mean payloads per counted answer (1 for a single result). */
  payloadsPerAnswer: number;
  /** Counted answers by Content-Type (without parameters): says whether the router streamed. */
  contentTypes: Record<string, number>;
  non2xx: number;
  networkErrors: number;
  /** 2xx answers with an error in any payload. */
  graphqlErrors: number;
  /** 2xx answers that ended without a last payload (a stream without `hasNext: false`). */
  incomplete: number;
  sentTotal: number;
  completedTotal: number;
  wallMs: number;
}

/**
 * Like runLoad (load.ts), a closed loop: each connection sends its next request as soon as the last answer
 * is read to its end. What differs is the clock: an answer counts when its last payload is complete, and it
 * also records when its first one was. For a single JSON result the two are the same moment.
 */
export async function runPayloadLoad(options: PayloadLoadOptions): Promise<PayloadLoadResult> {
  const target = new URL(options.url);
  const pool = new Pool(target.origin, { connections: options.connections, pipelining: 1, keepAliveTimeout: 60_000 });
  const path = target.pathname + target.search;
  const first: number[] = [];
  const total: number[] = [];
  const contentTypes: Record<string, number> = {};
  let payloads = 0;
  let non2xx = 0;
  let networkErrors = 0;
  let graphqlErrors = 0;
  let incomplete = 0;
  let sentTotal = 0;
  let completedTotal = 0;

  const startedAt = performance.now();
  const measureFrom = startedAt + options.warmupMs;
  const endAt = measureFrom + options.durationMs;
  const edgesSeen = new Set<'start' | 'end'>();
  const windowEdge = (edge: 'start' | 'end') => {
    if (edgesSeen.has(edge)) return;
    edgesSeen.add(edge);
    options.onWindow?.(edge);
  };
  const windowTimers = [setTimeout(windowEdge, options.warmupMs, 'start'), setTimeout(windowEdge, options.warmupMs + options.durationMs, 'end')];
  const inWindow = (at: number) => at >= measureFrom && at <= endAt;

  async function connectionLoop(_: unknown, index: number): Promise<void> {
    if (options.staggerMs) await delay((options.staggerMs * index) / options.connections);
    while (performance.now() < endAt) {
      const request = options.request(options.numbers.next());
      sentTotal++;
      let answer: Answer;
      try {
        answer = await requestPayloads(pool, path, request);
      } catch {
        if (inWindow(performance.now())) networkErrors++;
        // A refused connection fails at once: pause so a dead target does not turn the loop into a busy spin.
        await delay(10);
        continue;
      }
      completedTotal++;
      const last = answer.payloads.at(-1);
      if (!last || !inWindow(last.at)) continue;
      const type = answer.contentType.split(';')[0]!.trim().toLowerCase();
      contentTypes[type] = (contentTypes[type] ?? 0) + 1;
      if (answer.status < 200 || answer.status > 299) non2xx++;
      else if (!isComplete(answer)) incomplete++;
      else if (answer.payloads.some((p) => payloadErrors(p.body) > 0)) graphqlErrors++;
      first.push(answer.payloads[0]!.at - answer.sentAt);
      total.push(last.at - answer.sentAt);
      payloads += answer.payloads.length;
    }
  }

  try {
    await Promise.all(Array.from({ length: options.connections }, connectionLoop));
  } finally {
    for (const timer of windowTimers) clearTimeout(timer);
    windowEdge('start');
    windowEdge('end');
    await pool.close();
  }
  const latency = (values: number[]): Latency => {
    values.sort((a, b) => a - b);
    return { p50: percentile(values, 50), p95: percentile(values, 95), p99: percentile(values, 99) };
  };
  return {
    requests: total.length,
    rps: total.length / (options.durationMs / 1000),
    firstPayloadMs: latency(first),
    totalMs: latency(total),
    payloadsPerAnswer: total.length ? payloads / total.length : Number.NaN,
    contentTypes,
    non2xx,
    networkErrors,
    graphqlErrors,
    incomplete,
    sentTotal,
    completedTotal,
    wallMs: performance.now() - startedAt,
  };
}
