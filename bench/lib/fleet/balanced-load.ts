// Paced load through a tiny round-robin balancer in front of several routers, recording every attempt: where it went, when, and how it ended.
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { Pool } from 'undici';

/**
 * How one attempt ended:
 * - `ok`: a 2xx answer without GraphQL errors;
 * - `graphql-errors`: a 2xx answer whose body carries `errors`;
 * - `http-error`: an answer outside 2xx;
 * - `refused`: the router refused the connection, so the request never reached it; the balancer sends it to the next router (not a failure, as behind any load balancer);
 * - `network`: the connection broke after the request was sent (reset, closed, timed out): no answer.
 */
export type AttemptOutcome = 'ok' | 'graphql-errors' | 'http-error' | 'refused' | 'network';

export interface Attempt {
  /** Index of the router in the balancer's list. */
  router: number;
  /** The `x-request-id` sent: the audit row's `request_id`. */
  requestId: string;
  /** What was asked (the operation's name), for the report. */
  label: string;
  /** `performance.now()` when sent and when it ended. */
  sentAt: number;
  doneAt: number;
  outcome: AttemptOutcome;
  status?: number;
  error?: string;
}

export interface BalancedRequest {
  label: string;
  body: string;
  headers?: Record<string, string>;
}

export interface BalancerOptions {
  /** The routers' GraphQL URLs; one keep-alive pool each. A router restarted on the same port is the same entry. */
  urls: readonly string[];
  /** Prefix of every request id, unique per run: `<prefix>-<n>`. */
  requestIdPrefix: string;
  /** How long a router that refused a connection is skipped, in ms. Default 250. */
  refusedBackoffMs?: number;
  /** Keep every attempt in `attempts` (a drill checks them one by one). Default true; a soak counts them in `onAttempt` instead. */
  keepAttempts?: boolean;
  /** Told of every attempt as it ends. */
  onAttempt?: (attempt: Attempt) => void;
}

export interface AnswerOf {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

const ACCEPT = 'application/graphql-response+json, application/json;q=0.9';

function errorCode(error: unknown): string {
  const e = error as { code?: string; cause?: { code?: string }; message?: string };
  return e.code ?? e.cause?.code ?? e.message ?? String(error);
}

/**
 * The balancer: round robin over the routers not marked down; a refused connection marks its router down
 * for `refusedBackoffMs` and the request goes to the next one, as a load balancer retries a failed connect.
 * Every attempt is recorded (`attempts`), probes included, so the audit log can be checked request by request.
 */
export class Balancer {
  readonly attempts: Attempt[] = [];
  readonly #urls: readonly URL[];
  readonly #pools: Pool[];
  readonly #downUntil: number[];
  readonly #prefix: string;
  readonly #backoffMs: number;
  readonly #keep: boolean;
  readonly #onAttempt: ((attempt: Attempt) => void) | undefined;
  #next = 0;
  #counter = 0;

  constructor(options: BalancerOptions) {
    this.#urls = options.urls.map((url) => new URL(url));
    this.#pools = this.#urls.map((url) => new Pool(url.origin, { connections: 64, pipelining: 1, connect: { timeout: 2_000 }, headersTimeout: 30_000, bodyTimeout: 30_000 }));
    this.#downUntil = this.#urls.map(() => 0);
    this.#prefix = options.requestIdPrefix;
    this.#backoffMs = options.refusedBackoffMs ?? 250;
    this.#keep = options.keepAttempts ?? true;
    this.#onAttempt = options.onAttempt;
  }

  /** Sends through the balancer: the next router in turn that is not marked down, moving on when one refuses. */
  async send(request: BalancedRequest): Promise<Attempt> {
    for (;;) {
      const router = this.#pick();
      if (router === undefined) {
        await delay(20);
        continue;
      }
      const attempt = await this.ask(router, request);
      if (attempt.outcome !== 'refused') return attempt;
      this.#downUntil[router] = performance.now() + this.#backoffMs;
    }
  }

  /** Sends to one router (a probe that must reach that router); recorded like any attempt. */
  async ask(router: number, request: BalancedRequest): Promise<Attempt & { answer?: AnswerOf }> {
    const requestId = `${this.#prefix}-${this.#counter++}`;
    const url = this.#urls[router]!;
    const sentAt = performance.now();
    const headers = { 'content-type': 'application/json', accept: ACCEPT, 'x-request-id': requestId, ...request.headers };
    let attempt: Attempt & { answer?: AnswerOf };
    try {
      const response = await this.#pools[router]!.request({ path: url.pathname, method: 'POST', headers, body: request.body });
      const text = await response.body.text();
      const ok = response.statusCode >= 200 && response.statusCode < 300;
      attempt = {
        router,
        requestId,
        label: request.label,
        sentAt,
        doneAt: performance.now(),
        outcome: !ok ? 'http-error' : text.includes('"errors"') ? 'graphql-errors' : 'ok',
        status: response.statusCode,
        answer: { status: response.statusCode, headers: response.headers, text },
      };
      if (attempt.outcome !== 'ok') attempt.error = text.slice(0, 300);
    } catch (error) {
      const code = errorCode(error);
      attempt = { router, requestId, label: request.label, sentAt, doneAt: performance.now(), outcome: code === 'ECONNREFUSED' ? 'refused' : 'network', error: code };
    }
    const { answer: _answer, ...recorded } = attempt;
    // The answer's text goes back to the caller only: a run keeps thousands of attempts.
    if (this.#keep) this.attempts.push(recorded);
    this.#onAttempt?.(recorded);
    return attempt;
  }

  #pick(): number | undefined {
    const now = performance.now();
    for (let i = 0; i < this.#urls.length; i++) {
      const router = (this.#next + i) % this.#urls.length;
      if (this.#downUntil[router]! <= now) {
        this.#next = router + 1;
        return router;
      }
    }
    return undefined;
  }

  async close(): Promise<void> {
    await Promise.all(this.#pools.map((pool) => pool.destroy().catch(() => undefined)));
  }
}

export interface PacedLoadOptions {
  /** Requests in flight at most (closed loop over this many workers). */
  connections: number;
  /** Requests started per second at most (request k is due at k / rate). */
  ratePerSecond: number;
  /** Request number n (from 0). */
  request(n: number): BalancedRequest;
  /** Sends one request (through a balancer, or to one router). */
  send(request: BalancedRequest): Promise<unknown>;
}

export interface RunningLoad {
  /** Requests started so far. */
  started(): number;
  /** Stops starting requests and waits for those in flight. */
  stop(): Promise<void>;
}

/**
 * Starts `connections` workers that take request numbers in turn, each waiting until its request is due
 * (a steady rate rather than as fast as the routers answer: a shared machine, and figures that do not
 * depend on how loaded it is), or sending at once when behind.
 */
export function startPacedLoad(options: PacedLoadOptions): RunningLoad {
  const startedAt = performance.now();
  let next = 0;
  let stopping = false;
  async function worker(): Promise<void> {
    while (!stopping) {
      const n = next++;
      const due = startedAt + (n * 1000) / options.ratePerSecond;
      const wait = due - performance.now();
      if (wait > 0) await delay(wait);
      if (stopping) return;
      await options.send(options.request(n)).catch(() => undefined);
    }
  }
  const workers = Array.from({ length: options.connections }, () => worker());
  return {
    started: () => next,
    async stop() {
      stopping = true;
      await Promise.all(workers);
    },
  };
}
