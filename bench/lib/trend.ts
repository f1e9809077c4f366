// The trend of a series sampled over time: least-squares slope per hour, its standard error, and whether it stands out from the series' own noise.

export interface TrendPoint {
  /** When, in ms (any origin). */
  t: number;
  y: number;
  /** What the sample's level depends on besides time (the fault switched on when it was taken): see `trendOf`. */
  group?: string;
}

export type TrendVerdict = 'flat' | 'rising' | 'falling';

export interface Trend {
  /** Samples fitted. */
  n: number;
  mean: number;
  /** Least-squares slope, in the series' unit per hour. */
  slopePerHour: number;
  /** Standard error of that slope, per hour. */
  slopeErrorPerHour: number;
  /** What the slope adds up to over the fitted window (slope × its length). */
  driftOverWindow: number;
  /** Standard deviation of the residuals: how much the samples scatter around the line. */
  noise: number;
  verdict: TrendVerdict;
}

const HOUR_MS = 3_600_000;

/**
 * 1. Fits y = a + b·t by least squares. With groups, y = a_group + b·t: each group its own level, one slope
 *    for all (the slope is then read from the differences within each group, so a group that sits higher,
 *    such as the samples taken while a subgraph hangs, does not pass for a trend when it comes late).
 * 2. The slope's standard error is the residuals' standard deviation over √Σ(t − t̄)², both taken within
 *    the groups (n − 2 degrees of freedom without groups, n − G − 1 with G groups).
 * 3. The verdict is `flat` when the slope is within two standard errors of zero (about 95%: the samples do
 *    not show a slope at all), or when what it adds up to over the window is less than the samples'
 *    own scatter (a slope, but one the noise of a single sample hides: a sawtooth of garbage
 *    collections fitted over a few minutes). Otherwise `rising` or `falling`.
 * Too few samples for the fit (n ≤ G + 1), or all at one time, give no slope (0) and `flat`.
 */
export function trendOf(points: readonly TrendPoint[]): Trend {
  const usable = points.filter((p) => Number.isFinite(p.t) && Number.isFinite(p.y));
  const n = usable.length;
  const mean = n ? usable.reduce((sum, p) => sum + p.y, 0) / n : Number.NaN;
  // Each point centred on its group's means (one group without groups).
  const groups = new Map<string, TrendPoint[]>();
  for (const p of usable) groups.set(p.group ?? '', [...(groups.get(p.group ?? '') ?? []), p]);
  const centred = [...groups.values()].flatMap((members) => {
    const tBar = members.reduce((sum, p) => sum + p.t, 0) / members.length;
    const yBar = members.reduce((sum, p) => sum + p.y, 0) / members.length;
    return members.map((p) => ({ t: p.t - tBar, y: p.y - yBar }));
  });
  const sxx = centred.reduce((sum, p) => sum + p.t ** 2, 0);
  const freedom = n - groups.size - 1;
  if (freedom < 1 || sxx === 0) return { n, mean, slopePerHour: 0, slopeErrorPerHour: 0, driftOverWindow: 0, noise: 0, verdict: 'flat' };
  const slope = centred.reduce((sum, p) => sum + p.t * p.y, 0) / sxx;
  const residualSquares = centred.reduce((sum, p) => sum + (p.y - slope * p.t) ** 2, 0);
  const noise = Math.sqrt(residualSquares / freedom);
  const slopeError = noise / Math.sqrt(sxx);
  const window = Math.max(...usable.map((p) => p.t)) - Math.min(...usable.map((p) => p.t));
  const drift = slope * window;
  const significant = Math.abs(slope) > 2 * slopeError && Math.abs(drift) > noise;
  return {
    n,
    mean,
    slopePerHour: slope * HOUR_MS,
    slopeErrorPerHour: slopeError * HOUR_MS,
    driftOverWindow: drift,
    noise,
    verdict: !significant ? 'flat' : slope > 0 ? 'rising' : 'falling',
  };
}

/**
 * The lowest sample of each window of `windowMs` (windows counted from the first sample), at its own
 * time: the floor a garbage-collected heap returns to, or the connections held when idle. A heap grows
 * between collections and drops at each, so a fit of every sample over a few cycles follows the
 * sawtooth; the fit of the floors follows what is retained.
 */
export function floorsOf(points: readonly TrendPoint[], windowMs: number): TrendPoint[] {
  if (points.length === 0) return [];
  const start = points[0]!.t;
  const lowest = new Map<number, TrendPoint>();
  for (const point of points) {
    const window = Math.floor((point.t - start) / windowMs);
    const held = lowest.get(window);
    if (!held || point.y < held.y) lowest.set(window, point);
  }
  return [...lowest.values()].sort((a, b) => a.t - b.t);
}
