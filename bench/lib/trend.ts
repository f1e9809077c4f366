// The trend of a series sampled over time: least-squares slope per hour, its standard error, and whether it stands out from the series' own noise.

export interface TrendPoint {
  /** When, in ms (any origin). */
  t: number;
  y: number;
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
 * 1. Fits y = a + b·t by least squares.
 * 2. The slope's standard error is the residuals' standard deviation over √Σ(t − t̄)² (n − 2 degrees of freedom).
 * 3. The verdict is `flat` when the slope is within two standard errors of zero (about 95%: the samples do
 *    not show a slope at all), or when what it adds up to over the window is less than the samples'
 *    own scatter (a slope, but one the noise of a single sample hides: a sawtooth of garbage
 *    collections fitted over a few minutes). Otherwise `rising` or `falling`.
 * Fewer than 3 samples, or all at one time, give no slope (0) and `flat`.
 */
export function trendOf(points: readonly TrendPoint[]): Trend {
  const usable = points.filter((p) => Number.isFinite(p.t) && Number.isFinite(p.y));
  const n = usable.length;
  const mean = n ? usable.reduce((sum, p) => sum + p.y, 0) / n : Number.NaN;
  const tMean = n ? usable.reduce((sum, p) => sum + p.t, 0) / n : 0;
  const sxx = usable.reduce((sum, p) => sum + (p.t - tMean) ** 2, 0);
  if (n < 3 || sxx === 0) return { n, mean, slopePerHour: 0, slopeErrorPerHour: 0, driftOverWindow: 0, noise: 0, verdict: 'flat' };
  const slope = usable.reduce((sum, p) => sum + (p.t - tMean) * (p.y - mean), 0) / sxx;
  const intercept = mean - slope * tMean;
  const residualSquares = usable.reduce((sum, p) => sum + (p.y - (intercept + slope * p.t)) ** 2, 0);
  const noise = Math.sqrt(residualSquares / (n - 2));
  const slopeError = noise / Math.sqrt(sxx);
  const window = usable[n - 1]!.t - usable[0]!.t;
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
