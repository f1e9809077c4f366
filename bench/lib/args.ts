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
  /** Every request the same (body and headers): what a gateway that deduplicates or caches identical requests makes of it. */
  identical: boolean;
  /** Measure the baseline twice, in two processes: the run's noise floor next to every ratio. */
  control: boolean;
  /** Processes started per variant; each round measures every one, and ratios pair replica k with replica k. */
  replicas: number;
  /** Write a V8 CPU profile of every gateway to bench/results/profiles-<timestamp>/<scenario>/ (slows them a little, all alike). */
  cpuProf: boolean;
  /** A git revision (commit, tag, `HEAD~3`): every variant of Switchyard as shipped is also measured from that commit's build (`<name>-before`). */
  before: string | undefined;
  /** Minutes of traffic of the soak (`--scenario soak`). Default 30. */
  soakMinutes: number;
  /** Subscriptions the subscriptions measurement opens per transport (`--scenario subscriptions`). Default 10000. */
  subscriptions: number;
  /** Products those subscriptions spread over, ids 1..P (each product's events fan out to N/P clients). Default 100. */
  products: number;
  /** Stock changes pushed to the inventory subgraph per second, over all products in turn; undefined: one per product per second. */
  pushRate: number | undefined;
  /** Print the run's report (every raw measurement, as in the JSON file) on stdout, and the tables and progress on stderr. */
  json: boolean;
  list: boolean;
  help: boolean;
}

export const USAGE = `Usage: npm run bench -- [options]

  --quick            a look in about 2.5 minutes: 1 round of 3 s after 1 s warm-up, 4 s priming, and without --scenario
                     only the headline comparisons (resilience-overhead and the three peers scenarios);
                     explicit flags override it (--quick --rounds 2, --quick --scenario security-overhead)
  --scenario NAME    run only this scenario (repeatable); --list shows them
  --backend NAME     serve the scenarios from this backend instead of their default (fast-demo; demo = the real demo subgraphs)
  --connections N    concurrent connections (default 50)
  --duration S       measured seconds per measurement (default 5)
  --warmup S         warm-up seconds before each measurement (default 2)
  --prime S          load each fresh gateway gets once before round 1, unmeasured (default 4)
  --rounds N         rounds; every variant is measured once per round, A B A B (default 3)
  --identical        send the same request every time (same body, same headers) instead of a unique
                     Authorization and varying variables: shows request deduplication and caching
  --control          also measure the baseline a second time, in its own process (<baseline>-again): its
                     ratio to the baseline is the noise floor of the run, what two identical gateways differ by
  --replicas N       start every variant N times, each in its own process (default 1); every round measures
                     each one (A1 B1 A2 B2 ...) and pairs replica k of a variant with replica k of the
                     baseline: a process's own luck (JIT, heap layout) then spreads over the pairs
  --cpu-prof         write a CPU profile per gateway to bench/results/profiles-<timestamp>/ (open in Chrome DevTools)
  --before REF       also measure Switchyard as it was at REF (a commit, a tag, HEAD~3, main): the variants of
                     Switchyard as shipped (switchyard in the peers scenarios, resilience-on) get a twin
                     <name>-before right after them, built from REF into bench/results/before/<sha>/ (kept
                     for the next run; overlaps the first scenarios); the ratio of the two is the before/after
  --soak-minutes M   how long the soak runs its traffic (--scenario soak), in minutes (default 30)
  --subscriptions N  subscriptions opened per transport by --scenario subscriptions (default 10000)
  --products P       products they spread over, ids 1..P: each pushed event reaches N/P clients (default 100)
  --push-rate R      stock changes pushed per second over all products (default: P, one per product per second)
  --json             print the run's report as JSON on stdout (tables and progress go to stderr):
                     npm run --silent bench -- --scenario subscriptions --json > report.json
  --list             list the scenarios and exit
  --help             this text`;

export class UsageError extends Error {}

/**
 * Sized so that a full run (every scenario, the peers' first install included) stays under 15 minutes on
 * 2 cores: 5 s windows in 3 paired rounds. Longer windows do not buy much here: the noise of a shared
 * machine is between rounds, not within a window (README, "Reading the table").
 */
const DEFAULTS = { connections: 50, duration: 5, warmup: 2, prime: 4, rounds: 3 };
const QUICK = { duration: 3, warmup: 1, prime: 4, rounds: 1 };

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
        before: { type: 'string' },
        identical: { type: 'boolean', default: false },
        control: { type: 'boolean', default: false },
        replicas: { type: 'string' },
        'soak-minutes': { type: 'string' },
        subscriptions: { type: 'string' },
        products: { type: 'string' },
        'push-rate': { type: 'string' },
        json: { type: 'boolean', default: false },
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
    identical: values.identical,
    control: values.control,
    replicas: number('replicas', values.replicas, 1, 1, true),
    cpuProf: values['cpu-prof'],
    before: values.before,
    soakMinutes: number('soak-minutes', values['soak-minutes'], 30, 0.5, false),
    subscriptions: number('subscriptions', values.subscriptions, 10_000, 1, true),
    // The demo catalogue holds ids 1..1000 (subgraphs/kit/catalog.ts).
    products: number('products', values.products, 100, 1, true),
    pushRate: values['push-rate'] === undefined ? undefined : number('push-rate', values['push-rate'], 0, 0.1, false),
    json: values.json,
    list: values.list,
    help: values.help,
  };
  if (options.products > 1000) problems.push(`--products must be at most 1000, the demo catalogue's size (got ${options.products})`);
  if (options.before !== undefined && options.before.trim() === '') problems.push('--before needs a git revision (a commit, a tag, HEAD~3)');
  if (problems.length) throw new UsageError(problems.join('\n'));
  return options;
}
