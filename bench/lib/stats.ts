// Small statistics for the benchmark: percentiles, medians and the per-round paired ratios every comparison rests on.

/** Nearest-rank percentile of an ascending array (NaN when empty). */
export function percentile(sortedAscending: readonly number[], p: number): number {
  if (sortedAscending.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sortedAscending.length);
  return sortedAscending[Math.min(sortedAscending.length, Math.max(1, rank)) - 1];
}

/** Median (mean of the middle two for an even count; NaN when empty). Robust to one noisy round, unlike the mean. */
export function median(values: readonly number[]): number {
  const finite = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (finite.length === 0) return Number.NaN;
  const middle = finite.length >> 1;
  return finite.length % 2 === 1 ? finite[middle] : (finite[middle - 1] + finite[middle]) / 2;
}

/**
 * Ratios of a variant to the baseline, round by round: `variant[i] / baseline[i]`.
 * Pairing measurements taken minutes apart in the same round cancels most of the drift of a shared
 * machine (another tenant's load, thermal state), which comparing two medians of absolute numbers would not.
 */
export function pairedRatios(variant: readonly number[], baseline: readonly number[]): number[] {
  return variant.map((value, round) => value / baseline[round]);
}
