// Parts the section cache answered, as spans beside the subgraph attempts (resilience/attempt-telemetry.ts) of the request.
import { getCurrentOtelContext } from '@envelop/opentelemetry';
import { SpanKind, type Tracer } from '@opentelemetry/api';
import { SPAN_ATTRIBUTE } from './tracing.js';

/** What the section cache did for one fetch step: fresh hits, or stale copies standing in for a failed call. */
export interface CacheSpanFacts {
  outcome: 'hit' | 'stale';
  /** Entities (or root parts) answered from the cache. */
  hits: number;
  /** Those the call still had to fetch (fresh hits only). */
  misses?: number;
  /** The oldest copy's age, in ms. */
  ageMs: number;
  /** The failure stale copies stand in for. */
  failureCode?: string;
}

/** Parts answered by the section cache: a zero-length span under the request, beside the calls that did go out. */
export function recordCacheSpan(tracer: Tracer, subgraph: string, context: unknown, facts: CacheSpanFacts): void {
  const span = tracer.startSpan(
    facts.outcome === 'stale' ? `subgraph ${subgraph} stale copy` : `subgraph ${subgraph} cache`,
    {
      kind: SpanKind.INTERNAL,
      attributes: {
        [SPAN_ATTRIBUTE.subgraph]: subgraph,
        [SPAN_ATTRIBUTE.cacheHit]: true,
        [SPAN_ATTRIBUTE.cacheAgeMs]: Math.round(facts.ageMs),
        [SPAN_ATTRIBUTE.cacheHits]: facts.hits,
        ...(facts.misses !== undefined ? { [SPAN_ATTRIBUTE.cacheMisses]: facts.misses } : {}),
        ...(facts.failureCode ? { [SPAN_ATTRIBUTE.errorCode]: facts.failureCode } : {}),
        [SPAN_ATTRIBUTE.outcome]: facts.outcome,
      },
    },
    getCurrentOtelContext((context as object | undefined) ?? {}),
  );
  span.end();
}
