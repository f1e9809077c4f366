// Long-lived resilience state per subgraph (breaker, latency, budgets): survives graph swaps.
import type { RouteMetadata } from '../registry/route.js';
import type { RouterMetrics } from '../telemetry/metrics.js';
import { CircuitBreaker, type CircuitState } from './circuit-breaker.js';
import { LatencyTracker } from './latency-tracker.js';
import { RetryBudget } from './retry-budget.js';

/** Route metadata with every default filled in. */
export interface ResolvedRoute {
  timeoutMs: number;
  deduplicate: boolean;
  breaker: { enabled: boolean; failureRatio: number; slowCallRatio: number; slowCallMs: number; minRequests: number; windowMs: number; openMs: number };
  retry: { enabled: boolean; maxRetries: number };
  hedge: { enabled: boolean; floorMs: number };
  /** Whether the section cache's stale copies may stand in for this subgraph's failures. */
  fallback: { enabled: boolean };
}

export function resolveRoute(route: RouteMetadata, defaults: { timeoutMs: number }): ResolvedRoute {
  const timeoutMs = route.timeoutMs ?? defaults.timeoutMs;
  return {
    timeoutMs,
    deduplicate: route.deduplicate ?? true,
    // A call slower than the subgraph's own timeout is cut by it (a failure), so by default only the
    // calls cut by the request deadline are slow; `slowCallMs` below the timeout counts slow answers too.
    breaker: { enabled: true, failureRatio: 0.5, slowCallRatio: 0.5, slowCallMs: timeoutMs, minRequests: 20, windowMs: 10_000, openMs: 5_000, ...route.breaker },
    retry: { enabled: true, maxRetries: 2, ...route.retry },
    hedge: { enabled: true, floorMs: 20, ...route.hedge },
    fallback: { enabled: route.fallback?.enabled ?? true },
  };
}

export interface SubgraphHealth {
  readonly breaker: CircuitBreaker;
  /** Latencies of successful attempts: p50 paces retries, p95 triggers hedges. */
  readonly latency: LatencyTracker;
  /** ~10% extra calls, shared by retries and hedges. */
  readonly extra: RetryBudget;
  /** ~5% extra calls for hedges. */
  readonly hedges: RetryBudget;
}

const STATE_VALUE: Record<CircuitState, number> = { closed: 0, open: 1, half_open: 2 };

/**
 * One SubgraphHealth per subgraph name, kept across graph swaps so that a publish does not reset
 * a breaker that protects a failing subgraph. Replaced only when its own settings change.
 */
export class SubgraphHealthBook {
  readonly #entries = new Map<string, { key: string; health: SubgraphHealth }>();
  readonly #metrics: RouterMetrics | undefined;

  constructor(metrics?: RouterMetrics) {
    this.#metrics = metrics;
  }

  get(subgraph: string, route: ResolvedRoute): SubgraphHealth {
    const key = JSON.stringify(route.breaker);
    const entry = this.#entries.get(subgraph);
    if (entry?.key === key) return entry.health;
    const gauge = this.#metrics?.circuitState.labels(subgraph);
    gauge?.set(0);
    const health: SubgraphHealth = {
      breaker: new CircuitBreaker({ ...route.breaker, onStateChange: (state) => gauge?.set(STATE_VALUE[state]) }),
      // Keep what was learnt about latency when only thresholds change.
      // Percentiles are re-sorted every 64 answers: fresh enough for hedge and retry pacing, cheap per call.
      latency: entry?.health.latency ?? new LatencyTracker({ recomputeEvery: 64 }),
      extra: entry?.health.extra ?? new RetryBudget({ ratio: 0.1 }),
      hedges: entry?.health.hedges ?? new RetryBudget({ ratio: 0.05, maxTokens: 5 }),
    };
    this.#entries.set(subgraph, { key, health });
    return health;
  }
}
