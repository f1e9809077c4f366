// Stale fallback: a bounded last-good copy per entity and root field, served while the subgraph fails.
import type { ExecutionResult } from 'graphql';
import type { ExecutionRequest } from '@graphql-tools/utils';
import { argumentsOf, representationsOf, rootFieldsOf } from './operation-shape.js';
import { isUpstreamFailure, type CallWrapper, type UpstreamFailure } from './subgraph-call.js';

export interface LastGoodStoreOptions {
  /** Copies kept; the least recently used goes first. Default 10000. */
  maxEntries?: number;
  /** Oldest copy served, in ms. Default 300000. */
  maxAgeMs?: number;
  now?: () => number;
}

interface Copy {
  value: unknown;
  storedAt: number;
}

/** An LRU map of copies with a maximum age; a Map keeps insertion order, so re-inserting marks use. */
export class LastGoodStore {
  readonly #copies = new Map<string, Copy>();
  readonly #maxEntries: number;
  readonly #maxAgeMs: number;
  readonly #now: () => number;

  constructor(options: LastGoodStoreOptions = {}) {
    this.#maxEntries = options.maxEntries ?? 10_000;
    this.#maxAgeMs = options.maxAgeMs ?? 300_000;
    this.#now = options.now ?? Date.now;
  }

  get size(): number {
    return this.#copies.size;
  }

  set(key: string, value: unknown): void {
    this.#copies.delete(key);
    this.#copies.set(key, { value, storedAt: this.#now() });
    if (this.#copies.size > this.#maxEntries) this.#copies.delete(this.#copies.keys().next().value as string);
  }

  /** The copy and its age in ms, unless missing or too old. */
  get(key: string): { value: unknown; ageMs: number } | undefined {
    const copy = this.#copies.get(key);
    if (!copy) return undefined;
    const ageMs = this.#now() - copy.storedAt;
    if (ageMs > this.#maxAgeMs) {
      this.#copies.delete(key);
      return undefined;
    }
    this.#copies.delete(key);
    this.#copies.set(key, copy);
    return { value: copy.value, ageMs };
  }
}

/** One key per entity (selection + representation) or root field (selection + argument values). */
function* sectionKeys(request: ExecutionRequest): Generator<{ responseKey: string; index?: number; key: string }> {
  for (const field of rootFieldsOf(request.document)) {
    const representations = representationsOf(field, request.variables);
    if (representations) {
      for (const [index, representation] of representations.entries()) yield { responseKey: field.responseKey, index, key: `${field.selectionText}|${JSON.stringify(representation)}` };
    } else {
      yield { responseKey: field.responseKey, key: `${field.selectionText}|${JSON.stringify(argumentsOf(field, request.variables))}` };
    }
  }
}

export interface FallbackOptions {
  store: LastGoodStore;
  /** Told when stale copies answer a call: the oldest copy's age and the failure it replaced. */
  onStale?: (request: ExecutionRequest, ageMs: number, failure: UpstreamFailure) => void;
  /** Told when a failed call had no copy to stand in for it (the failure then stands). */
  onMiss?: (request: ExecutionRequest, failure: UpstreamFailure) => void;
}

/**
 * 1. A call that succeeds with no errors at all stores each entity and root field it returned
 *    (results with errors, being partial, are never stored).
 * 2. A call that fails (not one the client cancelled) is answered from the copies if every section
 *    it asked for has one; otherwise the failure stands. Each use is reported through `onStale`.
 */
export function withFallback(options: FallbackOptions): CallWrapper {
  const { store } = options;
  return (next) =>
    async function callWithFallback(call) {
      let result: ExecutionResult;
      try {
        result = await next(call);
      } catch (error) {
        if (!isUpstreamFailure(error) || error.kind === 'cancelled') throw error;
        const data: Record<string, unknown> = {};
        let oldest = 0;
        for (const { responseKey, index, key } of sectionKeys(call.request)) {
          const copy = store.get(key);
          if (!copy) {
            options.onMiss?.(call.request, error);
            throw error;
          }
          oldest = Math.max(oldest, copy.ageMs);
          if (index === undefined) data[responseKey] = copy.value;
          else ((data[responseKey] ??= []) as unknown[])[index] = copy.value;
        }
        options.onStale?.(call.request, oldest, error);
        return { data };
      }
      if (!result.errors?.length && result.data) {
        const data = result.data as Record<string, unknown>;
        for (const { responseKey, index, key } of sectionKeys(call.request)) {
          const value = index === undefined ? data[responseKey] : (data[responseKey] as unknown[] | undefined)?.[index];
          if (value !== undefined) store.set(key, value);
        }
      }
      return result;
    };
}
