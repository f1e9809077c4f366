// The bench's command-line flags: parsed and checked once, with --quick as a preset that explicit flags override.
import { parseArgs } from 'node:util';

export interface BenchOptions {
  /** Scenario names to run; empty means all. */
  scenarios: string[];
  /** Backend to use instead of each scenario's default (must be one the scenario offers). */
  backend: string | undefined;
  connections: number;
  durationMs: number;
  warmupMs: number;
  primeMs: number;
  rounds: number;
  quick: boolean;
  /** Write a V8 CPU profile of every gateway to bench/results/profiles-<timestamp>/<scenario>/ (slows them a little, all alike). */
  cpuProf: boolean;
  list: boolean;
  help: boolean;
}

export const USAGE = `Usage: npm run bench -- [options]

  --quick            2 rounds of 3 s after 1 s warm-up, 5 s priming (about a minute for today's two scenarios)
  --scenario NAME    run only this scenario (repeatable); --list shows them
  --backend NAME     serve the scenarios from this backend instead of their default (fast-demo; demo = the real demo subgraphs)
  --connections N    concurrent connections (default 50)
  --duration S       measured seconds per measurement (default 10)
  --warmup S         warm-up seconds before each measurement (default 3)
  --prime S          load each fresh gateway gets once before round 1, unmeasured (default 8)
  --rounds N         rounds; every variant is measured once per round, A B A B (default 3)
  --cpu-prof         write a CPU profile per gateway to bench/results/profiles-<timestamp>/ (open in Chrome DevTools)
  --list             list the scenarios and exit
  --help             this text`;

export class UsageError extends Error {}

const DEFAULTS = { connections: 50, duration: 10, warmup: 3, prime: 8, rounds: 3 };
const QUICK = { duration: 3, warmup: 1, prime: 5, rounds: 2 };

export function parseBenchArgs(argv: readonly string[]): BenchOptions {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: {
        quick: { type: 'boolean', default: false },
        scenario: { type: 'string', multiple: true, default: [] },
        backend: { type: 'string' },
        connections: { type: 'string' },
        duration: { type: 'string' },
        warmup: { type: 'string' },
        prime: { type: 'string' },
        rounds: { type: 'string' },
        'cpu-prof': { type: 'boolean', default: false },
        list: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values } = parsed;
  const preset = values.quick ? { ...DEFAULTS, ...QUICK } : DEFAULTS;
  const problems: string[] = [];
  const number = (name: string, raw: string | undefined, fallback: number, min: number, integer: boolean) => {
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min || (integer && !Number.isInteger(n))) problems.push(`--${name} must be ${integer ? 'an integer' : 'a number'} >= ${min} (got ${JSON.stringify(raw)})`);
    return n;
  };
  const options: BenchOptions = {
    scenarios: values.scenario,
    backend: values.backend,
    connections: number('connections', values.connections, preset.connections, 1, true),
    durationMs: number('duration', values.duration, preset.duration, 0.5, false) * 1000,
    warmupMs: number('warmup', values.warmup, preset.warmup, 0, false) * 1000,
    primeMs: number('prime', values.prime, preset.prime, 0, false) * 1000,
    rounds: number('rounds', values.rounds, preset.rounds, 1, true),
    quick: values.quick,
    cpuProf: values['cpu-prof'],
    list: values.list,
    help: values.help,
  };
  if (problems.length) throw new UsageError(problems.join('\n'));
  return options;
}
