// Turns a scenario's raw measurements into what the report shows: medians per variant, paired ratios, the target's verdict, warnings.
import type { Measurement, ScenarioResult } from './run-scenario.js';
import { median, pairedRatios } from './stats.js';
import type { ThroughputTarget } from './types.js';

export interface VariantSummary {
  name: string;
  /** Medians over the rounds. */
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** Throughput / the baseline's, one per round (same round = measured side by side). */
  rpsRatios: number[];
  rpsRatioMedian: number;
  /** p99 / the baseline's p99, median of the per-round ratios (above 1: slower tail). */
  p99RatioMedian: number;
  /** Non-2xx, network and GraphQL errors over all rounds. */
  errors: number;
  /** The largest peak RSS seen, in KiB. */
  peakRssKb: number | undefined;
  fetchesPerOperation: number | undefined;
  /** Medians, in % of one core (see CpuShare). */
  cpu: { gateway: number | undefined; subgraphs: number | undefined; loadGenerator: number; otherOnGatewayCore: number | undefined; otherOnLoadCore: number | undefined };
}

export interface TargetVerdict extends ThroughputTarget {
  baseline: string;
  /** Median of the per-round ratios. */
  ratio: number;
  /** Rounds whose ratio reached minRatio, out of `rounds`. */
  roundsMet: number;
  rounds: number;
  /**
   * `met` / `missed` when every round agrees; `inconclusive` when the rounds fall on both sides of the
   * threshold: the difference is within this run's noise, and the median alone would pick a side by chance.
   */
  outcome: 'met' | 'missed' | 'inconclusive';
  /** Measurements (of any variant) where other processes took a noticeable share of the gateway's core. */
  disturbedMeasurements: number;
}

export interface ScenarioSummary {
  variants: VariantSummary[];
  target?: TargetVerdict;
  warnings: string[];
}

/** CPU shares above this (in % of one core) mean that side is saturated. */
const SATURATED_PCT = 90;
/** Above this share of their core (in %), the subgraphs and the load generator leave too little headroom. */
const LOAD_SIDE_MARGIN_PCT = 70;
/** Other processes taking more than this (in % of the gateway's core) disturbed a measurement enough to name it. */
const DISTURBED_PCT = 10;

export function summarise(result: ScenarioResult, target: ThroughputTarget | undefined): ScenarioSummary {
  const byVariant = (name: string) => result.measurements.filter((m) => m.variant === name).sort((a, b) => a.round - b.round);
  const baseline = byVariant(result.baseline);
  const values = (ms: Measurement[], pick: (m: Measurement) => number | undefined) => ms.map(pick).filter((v): v is number => v !== undefined);
  const medianOrUndefined = (list: number[]) => (list.length ? median(list) : undefined);

  const variants = result.variants.map(({ name }): VariantSummary => {
    const own = byVariant(name);
    const rpsRatios = pairedRatios(values(own, (m) => m.load.rps), values(baseline, (m) => m.load.rps));
    return {
      name,
      rps: median(values(own, (m) => m.load.rps)),
      p50Ms: median(values(own, (m) => m.load.p50Ms)),
      p99Ms: median(values(own, (m) => m.load.p99Ms)),
      rpsRatios,
      rpsRatioMedian: median(rpsRatios),
      p99RatioMedian: median(pairedRatios(values(own, (m) => m.load.p99Ms), values(baseline, (m) => m.load.p99Ms))),
      errors: own.reduce((sum, m) => sum + m.load.non2xx + m.load.networkErrors + m.load.graphqlErrors, 0),
      peakRssKb: values(own, (m) => m.peakRssKb).reduce<number | undefined>((max, v) => Math.max(max ?? 0, v), undefined),
      fetchesPerOperation: medianOrUndefined(values(own, (m) => m.fetchesPerOperation)),
      cpu: {
        gateway: medianOrUndefined(values(own, (m) => m.cpu.gateway)),
        subgraphs: medianOrUndefined(values(own, (m) => m.cpu.subgraphs)),
        loadGenerator: median(values(own, (m) => m.cpu.loadGenerator)),
        otherOnGatewayCore: medianOrUndefined(values(own, (m) => m.cpu.otherOnGatewayCore)),
        otherOnLoadCore: medianOrUndefined(values(own, (m) => m.cpu.otherOnLoadCore)),
      },
    };
  });

  const warnings: string[] = [];
  for (const v of variants) {
    if (v.errors > 0) warnings.push(`${v.name}: ${v.errors} errors during the measurements: its throughput is not comparable`);
    const ours = (v.cpu.subgraphs ?? 0) + v.cpu.loadGenerator;
    const loadCore = `the load core: subgraphs ${pctText(v.cpu.subgraphs)}, load generator ${pctText(v.cpu.loadGenerator)}, other processes ${pctText(v.cpu.otherOnLoadCore)}`;
    // A gateway below saturation was waiting for something: say what the other core was doing meanwhile.
    if (v.cpu.gateway !== undefined && v.cpu.gateway < SATURATED_PCT) {
      warnings.push(`${v.name}: the gateway used only ${v.cpu.gateway.toFixed(0)}% of its core, so something else limited it (${loadCore})`);
    } else if (ours > LOAD_SIDE_MARGIN_PCT) {
      // Not the bottleneck yet, but another tenant on the load core would make it one.
      warnings.push(`${v.name}: subgraphs and load generator need ${ours.toFixed(0)}% of their core: close to becoming the bottleneck`);
    }
  }
  for (const m of result.measurements) {
    const other = m.cpu.otherOnGatewayCore;
    if (other !== undefined && other > DISTURBED_PCT) warnings.push(`round ${m.round} ${m.variant}: other processes took ${other.toFixed(0)}% of the gateway's core: a disturbed measurement`);
  }

  let verdict: TargetVerdict | undefined;
  const targeted = target && variants.find((v) => v.name === target.variant);
  if (target && targeted) {
    const roundsMet = targeted.rpsRatios.filter((r) => r >= target.minRatio).length;
    const rounds = targeted.rpsRatios.length;
    verdict = {
      ...target,
      baseline: result.baseline,
      ratio: targeted.rpsRatioMedian,
      roundsMet,
      rounds,
      outcome: roundsMet === rounds ? 'met' : roundsMet === 0 ? 'missed' : 'inconclusive',
      disturbedMeasurements: result.measurements.filter((m) => (m.cpu.otherOnGatewayCore ?? 0) > DISTURBED_PCT).length,
    };
  }
  return { variants, target: verdict, warnings };
}

function pctText(value: number | undefined): string {
  return value === undefined ? '?' : `${value.toFixed(0)}%`;
}
