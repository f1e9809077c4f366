// The bench's output: one table per scenario on stdout, and every raw measurement in bench/results/<timestamp>.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from '../src/config/paths.js';
import type { BenchOptions } from './lib/args.js';
import type { MachineInfo } from './lib/machine.js';
import type { ScenarioResult } from './lib/run-scenario.js';
import type { ScenarioSummary } from './lib/summary.js';

export interface BenchReport {
  startedAt: string;
  finishedAt: string;
  command: string;
  machine: MachineInfo;
  /** Whether gateways ran on one core and subgraphs + load generator on the other. */
  pinned: boolean;
  options: Omit<BenchOptions, 'list' | 'help'>;
  /** With --before: the commit the `-before` variants ran from, and the folder it was built in. */
  before?: { ref: string; sha: string; root: string };
  scenarios: { result: ScenarioResult; summary: ScenarioSummary }[];
  failures: { scenario: string; error: string }[];
  /** Results of the measurements that ran (bench/measurements/), e.g. queue-memory. */
  measurements?: { name: string; result: unknown }[];
}

const fixed = (digits: number) => (value: number | undefined) => (value === undefined || !Number.isFinite(value) ? '-' : value.toFixed(digits));
const ratio = fixed(3);
const pct = (value: number | undefined) => (value === undefined ? '?' : `${value.toFixed(0)}%`);

/** Columns right-aligned except the first, two spaces apart. */
export function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ');
  return [line(header), ...rows.map(line)];
}

export function formatScenario(result: ScenarioResult, summary: ScenarioSummary, options: BenchOptions): string {
  const requests = result.identicalRequests
    ? 'identical requests (same body and headers every time)'
    : 'every request with its own Authorization (and its own variables where the query has any)';
  const lines = [
    `${result.name}: ${result.summary}`,
    `  ${options.connections} connections, ${(result.durationMs ?? options.durationMs) / 1000} s measured after ${options.warmupMs / 1000} s warm-up, primed ${options.primeMs / 1000} s, ${options.rounds} rounds (${result.variants.map((v) => v.name).join(' ')} in turn)${options.replicas > 1 ? `, ${options.replicas} processes per variant (each round measures every replica: ${options.rounds * options.replicas} pairs, counted as rounds below)` : ''}; ratios against ${result.baseline}, paired per round`,
    `  ${requests}; the scenario took ${(result.elapsedMs / 60_000).toFixed(1)} min`,
  ];
  const header = ['variant', 'rps', 'rps × base per round', 'rps × base', 'p50 ms', 'p99 ms', 'p99 × base', 'errors', 'peak RSS MB', 'fetches/op', 'cpu gw', 'cpu subgraphs', 'cpu loadgen', 'cpu others'];
  const rows = summary.variants.map((v) => [
    v.name,
    fixed(0)(v.rps),
    v.rpsRatios.map(ratio).join(' '),
    ratio(v.rpsRatioMedian),
    fixed(1)(v.p50Ms),
    fixed(1)(v.p99Ms),
    ratio(v.p99RatioMedian),
    String(v.errors),
    v.peakRssKb === undefined ? '?' : (v.peakRssKb / 1024).toFixed(0),
    fixed(2)(v.fetchesPerOperation),
    pct(v.cpu.gateway),
    pct(v.cpu.subgraphs),
    pct(v.cpu.loadGenerator),
    pct(v.cpu.otherOnGatewayCore),
  ]);
  lines.push(...table(header, rows).map((line) => `  ${line}`));
  lines.push('  (rps, p50, p99, cpu: medians over the rounds; × base: median of the per-round ratios; cpu: % of one core during the measured window, "others" = anything else on the gateway\'s core)');
  if (summary.target) {
    const t = summary.target;
    const outcome = verdictText(t.rounds, t.roundsMet);
    const disturbed = t.disturbedMeasurements ? `; ${t.disturbedMeasurements} disturbed measurements` : '';
    lines.push(`  target: ${t.statement}: ${t.variant} / ${t.baseline} throughput = ${ratio(t.ratio)} (median), needs >= ${t.minRatio}, reached in ${t.roundsMet} of ${t.rounds} rounds${disturbed}: ${outcome}`);
  }
  if (result.firstRequestRps) {
    const base = result.firstRequestRps[result.baseline];
    const passes = Object.entries(result.firstRequestRps).map(([name, rps]) => `${name} ${rps.toFixed(0)} rps${base ? ` (${ratio(rps / base)})` : ''}`);
    lines.push(`  first request of every header value (each cache keyed on it cold; one pass per variant before round 1, not paired): ${passes.join(', ')}`);
  }
  for (const skipped of result.skipped) lines.push(`  NOT MEASURED: ${skipped.name} (${skipped.description}): ${firstLines(skipped.reason)}`);
  for (const warning of summary.warnings) lines.push(`  warning: ${warning}`);
  return lines.join('\n');
}

/**
 * A target's verdict from its rounds: MET when every round reaches it, NOT MET when none does, INCONCLUSIVE
 * when they fall on both sides. One pair is a look, not a verdict: single rounds move by ±15% on a shared machine.
 */
export function verdictText(rounds: number, roundsMet: number): string {
  if (rounds < 2) return 'NO VERDICT from one round (a look: run without --quick)';
  return roundsMet === rounds ? 'MET' : roundsMet === 0 ? 'NOT MET' : 'INCONCLUSIVE (within the noise of this run: run more rounds)';
}

/** A skip reason in one line: its first line and the first error line of the output below it (the JSON keeps it all). */
function firstLines(reason: string): string {
  const [first, ...rest] = reason.split('\n');
  const error = rest.map((line) => line.replace(/^\s*(stderr:)?\s*/, '')).find((line) => /error/i.test(line));
  return error ? `${first} (${error})` : first;
}

/** Writes the JSON next to earlier runs (bench/results/ is git-ignored) and returns its path. */
export function writeReport(report: BenchReport): string {
  const dir = path.join(PACKAGE_ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${report.startedAt.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}
