// With --cpu-prof: where each variant's CPU goes per request, counted only inside its measured windows.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { ScenarioResult } from './run-scenario.js';

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string }; children?: number[] }[];
  /** µs on the monotonic clock that `process.hrtime` reads. */
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** CPU µs per answered request, by where the time was spent (self time). */
export interface ProfileBreakdown {
  variant: string;
  requests: number;
  /** Busy µs per request inside the measured windows (idle excluded). */
  busyUsPerRequest: number;
  /** Category → µs per request. */
  categories: Record<string, number>;
}

/**
 * The category of a frame: a package (`graphql`, `@graphql-tools/delegate`), a file of Switchyard's own
 * (`src/security/subgraph-tokens.js`), `node internals`, the embedded database's WebAssembly, or V8's
 * own entries (`(garbage collector)`, `(program)`); anything else native is `(native)`.
 */
export function categoryOf(frame: { functionName: string; url: string }): string {
  const { url, functionName } = frame;
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (inPackage) return inPackage[1]!;
  if (url.startsWith('node:')) return 'node internals';
  if (url.startsWith('wasm')) return 'WebAssembly (embedded database)';
  // The path below dist/ alone, so that an older build's files (--before: bench/results/before/<sha>/dist/src/...)
  // go by the same names as this checkout's and the two line up file by file.
  const own = /\/dist\/((?:src|bench)\/.+)$/.exec(url);
  return own ? own[1]! : path.basename(url);
}

/** Self time per category of the samples whose time falls inside one of `windows` ([start, end] µs). */
function sliceProfile(profile: CpuProfile, windows: readonly (readonly [number, number])[]): { busyUs: number; categories: Map<string, number> } {
  const categoryById = new Map(profile.nodes.map((node) => [node.id, categoryOf(node.callFrame)]));
  const categories = new Map<string, number>();
  let busyUs = 0;
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (!windows.some(([start, end]) => at >= start && at <= end)) continue;
    const category = categoryById.get(profile.samples[i]!)!;
    if (category === '(idle)') continue;
    busyUs += delta;
    categories.set(category, (categories.get(category) ?? 0) + delta);
  }
  return { busyUs, categories };
}

/** Per variant of a scenario whose profiles exist: the breakdown of its measured windows, all rounds together. */
export function breakdownProfiles(result: ScenarioResult, profileDir: string): ProfileBreakdown[] {
  const breakdowns: ProfileBreakdown[] = [];
  for (const { name: variant } of result.variants) {
    // One profile per process: replica 1 is `<variant>.cpuprofile`, replica k `<variant>.r<k>.cpuprofile`.
    const measurements = result.measurements.filter((m) => m.variant === variant && m.windowUs);
    const replicas = [...new Set(measurements.map((m) => m.replica ?? 1))];
    let requests = 0;
    let busyUs = 0;
    const categories = new Map<string, number>();
    for (const replica of replicas) {
      const file = path.join(profileDir, replica === 1 ? `${variant}.cpuprofile` : `${variant}.r${replica}.cpuprofile`);
      const own = measurements.filter((m) => (m.replica ?? 1) === replica);
      if (!existsSync(file) || own.length === 0) continue;
      const slice = sliceProfile(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, own.map((m) => m.windowUs!));
      requests += own.reduce((sum, m) => sum + m.load.requests, 0);
      busyUs += slice.busyUs;
      for (const [name, us] of slice.categories) categories.set(name, (categories.get(name) ?? 0) + us);
    }
    if (requests === 0) continue;
    breakdowns.push({
      variant,
      requests,
      busyUsPerRequest: busyUs / requests,
      categories: Object.fromEntries([...categories].sort((a, b) => b[1] - a[1]).map(([name, us]) => [name, us / requests])),
    });
  }
  return breakdowns;
}

/**
 * A table per scenario: each variant's CPU µs per request and, for every variant after the first, the
 * categories that differ most from the first variant's (what the variant adds, or saves, per request).
 * With --before, each `<name>-before` is also set against `<name>`: `<name> − <name>-before` is what the
 * current build adds, or saves, per request over the older one, file by file.
 */
export function formatBreakdowns(scenario: string, breakdowns: readonly ProfileBreakdown[], top = 12): string {
  if (breakdowns.length === 0) return `${scenario}: no profile covers a measured window`;
  const [base, ...others] = breakdowns as [ProfileBreakdown, ...ProfileBreakdown[]];
  const lines = [`${scenario}: CPU per request inside the measured windows (V8 profile, self time, µs; the profiler itself adds a little to every variant)`];
  for (const b of breakdowns) {
    const heaviest = Object.entries(b.categories).slice(0, 6).map(([name, us]) => `${name} ${us.toFixed(0)}`).join(', ');
    lines.push(`  ${b.variant}: ${b.busyUsPerRequest.toFixed(0)} µs per request over ${b.requests} requests; heaviest: ${heaviest}`);
  }
  for (const other of others) lines.push(...formatDifference(other, base, top));
  for (const older of breakdowns.filter((b) => b.variant.endsWith(BEFORE_SUFFIX))) {
    const current = breakdowns.find((b) => b.variant === older.variant.slice(0, -BEFORE_SUFFIX.length));
    if (current && current !== base) lines.push(...formatDifference(current, older, top));
  }
  return lines.join('\n');
}

/** The name suffix of a variant run from the --before build (bench/gateways/switchyard.ts). */
const BEFORE_SUFFIX = '-before';

/** `other − base`: the total µs per request, then the categories that differ most. */
function formatDifference(other: ProfileBreakdown, base: ProfileBreakdown, top: number): string[] {
  const names = new Set([...Object.keys(base.categories), ...Object.keys(other.categories)]);
  const diffs = [...names].map((name) => [name, (other.categories[name] ?? 0) - (base.categories[name] ?? 0)] as const).sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]));
  const total = other.busyUsPerRequest - base.busyUsPerRequest;
  const lines = [`  ${other.variant} − ${base.variant}: ${total >= 0 ? '+' : ''}${total.toFixed(0)} µs per request (${((100 * total) / base.busyUsPerRequest).toFixed(1)}%); largest differences:`];
  for (const [name, us] of diffs.slice(0, top)) lines.push(`    ${(us >= 0 ? '+' : '') + us.toFixed(1).padStart(7)}  ${name}`);
  return lines;
}
