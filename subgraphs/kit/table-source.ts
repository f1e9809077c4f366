// The demo "database": an in-memory table behind an async batch function that counts its calls.
import type { SubgraphStats } from './subgraph-stats.js';

/** Looks up many keys in one call (one "round trip"); answers `null` for a missing key, in key order. */
export type BatchSource<V> = (keys: readonly string[]) => Promise<(V | null)[]>;

/**
 * Wraps `table` as a batch source named `name`. Each call counts once in
 * `stats.dataSourceCalls[name]`, which is how tests prove that DataLoader batched a request's
 * lookups. The counter is registered at 0 here so the stats shape is known before any request.
 */
export function createTableSource<V>(name: string, table: ReadonlyMap<string, V>, stats: SubgraphStats): BatchSource<V> {
  stats.dataSourceCalls[name] = 0;
  return async function loadFromTable(keys) {
    stats.dataSourceCalls[name] += 1;
    return keys.map((key) => table.get(key) ?? null);
  };
}
