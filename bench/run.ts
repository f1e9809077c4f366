// `npm run bench`: runs the scenarios side by side on this machine and reports ratios (see bench/README.md).
import path from 'node:path';
import { PACKAGE_ROOT } from '../src/config/paths.js';
import { BeforeBuild, resolveRevision } from './gateways/before-build.js';
import { parseBenchArgs, USAGE, UsageError, type BenchOptions } from './lib/args.js';
import { RequestNumbers } from './lib/load.js';
import { describeMachine } from './lib/machine.js';
import { canPin, pinSelf, ProcessSupervisor } from './lib/processes.js';
import { breakdownProfiles, formatBreakdowns } from './lib/profile-summary.js';
import { runScenario } from './lib/run-scenario.js';
import { summarise } from './lib/summary.js';
import type { CoreLayout, OlderBuild, Scenario, Variant } from './lib/types.js';
import { formatScenario, writeReport, type BenchReport } from './report.js';
import { MEASUREMENTS, QUICK_SCENARIOS, SCENARIOS } from './scenario-list.js';

/** Core 0 for the gateway under test, core 1 for everything that feeds it (subgraphs, this process). */
const GATEWAY_CORE = 0;
const LOAD_CORE = 1;

function selectScenarios(names: readonly string[], backendName: string | undefined, quick: boolean): Scenario[] {
  const known = [...SCENARIOS.map((s) => s.name), ...MEASUREMENTS.map((m) => m.name)];
  const unknown = names.filter((name) => !known.includes(name));
  if (unknown.length) throw new UsageError(`unknown scenario ${unknown.join(', ')}; known: ${known.join(', ')}`);
  // Measurements (MEASUREMENTS) run only when named; a run that names only measurements runs no throughput scenario.
  const selected = names.length > 0 ? SCENARIOS.filter((s) => names.includes(s.name)) : quick ? SCENARIOS.filter((s) => QUICK_SCENARIOS.includes(s.name)) : SCENARIOS.filter((s) => !s.onlyWhenNamed);
  if (backendName === undefined) return selected;
  return selected.map((scenario) => {
    const offered = [scenario.backend, ...(scenario.alternativeBackends ?? [])];
    const backend = offered.find((b) => b.name === backendName);
    if (!backend) throw new UsageError(`scenario ${scenario.name} offers no backend ${backendName}; it offers ${offered.map((b) => b.name).join(', ')}`);
    return { ...scenario, backend };
  });
}

/**
 * --before: each variant that offers it (Variant.before) is followed by its twin from the older build. One
 * twin per variant object, shared by every scenario that has the variant, so it is prepared once.
 */
function withBeforeVariants(scenarios: readonly Scenario[], build: OlderBuild): Scenario[] {
  const twins = new Map<Variant, Variant>();
  const twinOf = (variant: Variant) => {
    if (!twins.has(variant)) twins.set(variant, variant.before!(build));
    return twins.get(variant)!;
  };
  return scenarios.map((scenario) =>
    scenario.variants.some((v) => v.before) ? { ...scenario, variants: scenario.variants.flatMap((v) => (v.before ? [v, twinOf(v)] : [v])) } : scenario,
  );
}

function setUpCores(): { cores: CoreLayout; pinned: boolean } {
  // Pinning needs two cores and taskset; without it the figures still pair, but gateway and load compete for cores.
  if (canPin(2) && pinSelf(LOAD_CORE)) return { cores: { gateway: GATEWAY_CORE, load: LOAD_CORE }, pinned: true };
  console.warn('warning: no taskset or fewer than 2 cores: processes are not pinned, so the gateway shares cores with the load');
  return { cores: { gateway: undefined, load: undefined }, pinned: false };
}

/**
 * Stops every child on Ctrl-C or SIGTERM (a second signal kills them at once), and kills any child still
 * running when this process exits for any other reason; returns the function that removes the handlers.
 */
function stopChildrenOnExit(supervisor: ProcessSupervisor): () => void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      supervisor.killAllSync();
      process.exit(130);
    }
    stopping = true;
    console.error(`\nreceived ${signal}: stopping the benchmark's processes`);
    void supervisor.stopAll(2_000).finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  const onExit = () => supervisor.killAllSync();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', onExit);
  return () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('exit', onExit);
  };
}

async function main(options: BenchOptions): Promise<number> {
  // --json: stdout carries the report alone, so that it can be redirected to a file; everything else goes to stderr.
  const say = options.json ? (line: string) => console.error(line) : (line: string) => console.log(line);
  const selected = selectScenarios(options.scenarios, options.backend, options.quick);
  // Resolved before anything starts: a REF that names no commit is a bad flag (exit 2).
  const before = options.before === undefined ? undefined : new BeforeBuild(options.before, resolveRevision(options.before));
  const scenarios = before ? withBeforeVariants(selected, before) : selected;
  const startedAt = new Date().toISOString();
  const machine = describeMachine();
  const { cores, pinned } = setUpCores();
  const supervisor = new ProcessSupervisor({ pinning: pinned });
  const removeHandlers = stopChildrenOnExit(supervisor);
  const numbers = new RequestNumbers();
  const profileRoot = options.cpuProf ? path.join(PACKAGE_ROOT, 'bench', 'results', `profiles-${startedAt.replace(/[:.]/g, '-')}`) : undefined;
  const report: BenchReport = {
    startedAt,
    finishedAt: '',
    command: `node dist/bench/run.js ${process.argv.slice(2).join(' ')}`.trim(),
    machine,
    pinned,
    options: { scenarios: options.scenarios, backend: options.backend, connections: options.connections, durationMs: options.durationMs, warmupMs: options.warmupMs, primeMs: options.primeMs, rounds: options.rounds, quick: options.quick, identical: options.identical, control: options.control, replicas: options.replicas, cpuProf: options.cpuProf, before: options.before, soakMinutes: options.soakMinutes, subscriptions: options.subscriptions, products: options.products, pushRate: options.pushRate, json: options.json },
    ...(before ? { before: { ref: before.ref, sha: before.sha, root: before.root } } : {}),
    scenarios: [],
    failures: [],
  };

  say(`Switchyard bench ${startedAt} · ${machine.commit} · node ${machine.node} · ${machine.cores} cores (${machine.cpuModel}) · load average ${machine.loadAverage.join(' ')}`);
  if (before) {
    const pairs = scenarios.flatMap((s) => s.variants.filter((v) => v.before).map((v) => `${s.name} ${v.name}`));
    say(`--before ${before.ref} = ${before.sha}: ${pairs.length ? `measured from ${before.folder} next to ${pairs.join(', ')}` : 'no selected scenario has a variant of Switchyard as shipped, nothing to compare'}`);
  }
  say(pinned ? `gateways pinned to core ${GATEWAY_CORE}; subgraphs and load generator to core ${LOAD_CORE}` : 'processes not pinned');
  // Slow preparations (the peers' first install) overlap the scenarios measured before theirs.
  for (const variant of new Set(scenarios.flatMap((s) => s.variants))) variant.prepare?.(say);
  try {
    for (const scenario of scenarios) {
      say(`\n${scenario.name}: starting ${scenario.backend.description} and ${scenario.variants.length} variants`);
      try {
        const result = await runScenario(scenario, options, { supervisor, cores, numbers, profileRoot, log: say });
        const summary = summarise(result, scenario.target);
        report.scenarios.push({ result, summary });
        say(`\n${formatScenario(result, summary, options)}`);
      } catch (error) {
        // One broken scenario must not hide the figures of the others; the exit code still says it failed.
        const message = error instanceof Error ? error.message : String(error);
        report.failures.push({ scenario: scenario.name, error: message });
        console.error(`\n${scenario.name} FAILED: ${message}`);
      } finally {
        await supervisor.stopAll();
      }
    }
    for (const measurement of MEASUREMENTS.filter((m) => options.scenarios.includes(m.name))) {
      say(`\n${measurement.name}: ${measurement.summary}`);
      try {
        const { result, table } = await measurement.run({ supervisor, cores, numbers, options, log: say });
        (report.measurements ??= []).push({ name: measurement.name, result });
        say(`\n${table}`);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        report.failures.push({ scenario: measurement.name, error: message });
        console.error(`\n${measurement.name} FAILED: ${message}`);
      } finally {
        await supervisor.stopAll();
      }
    }
  } finally {
    await supervisor.stopAll();
    removeHandlers();
  }
  report.finishedAt = new Date().toISOString();
  const file = writeReport(report);
  if (options.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  const minutes = (Date.parse(report.finishedAt) - Date.parse(startedAt)) / 60_000;
  say(`\nraw measurements: ${file} (run took ${minutes.toFixed(1)} min)`);
  if (profileRoot && report.scenarios.length > 0) {
    // The gateways write their profiles when they stop, after their scenario: read them all at the end.
    for (const { result } of report.scenarios) say(`\n${formatBreakdowns(result.name, breakdownProfiles(result, path.join(profileRoot, result.name)))}`);
    say(`\nCPU profiles: ${profileRoot}/<scenario>/<variant>.cpuprofile (open in Chrome DevTools)`);
  }
  return report.failures.length ? 1 : 0;
}

let options: BenchOptions;
try {
  options = parseBenchArgs(process.argv.slice(2));
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  console.error(`${error.message}\n\n${USAGE}`);
  process.exit(2);
}
if (options.help) {
  console.log(USAGE);
} else if (options.list) {
  for (const scenario of SCENARIOS) console.log(`${scenario.name.padEnd(22)} ${scenario.summary}`);
  for (const measurement of MEASUREMENTS) console.log(`${measurement.name.padEnd(22)} ${measurement.summary} (only when named)`);
} else {
  main(options).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      console.error(error instanceof UsageError ? `${error.message}\n\n${USAGE}` : error);
      process.exitCode = error instanceof UsageError ? 2 : 1;
    },
  );
}
