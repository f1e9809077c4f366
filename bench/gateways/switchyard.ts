// Switchyard itself as a gateway variant: `switchyard serve --supergraph FILE` with the environment that defines the variant.
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { PACKAGE_ROOT } from '../../src/config/paths.js';
import type { OlderBuild, RunningBackend, RunningGateway, StartContext, Variant } from '../lib/types.js';

const execFileAsync = promisify(execFile);

export interface SwitchyardVariantOptions {
  name: string;
  description: string;
  /** Settings that make this variant (e.g. SWITCHYARD_RESILIENCE), over the base settings (BASE_ENV); a function when they exist only at start. */
  env?: Record<string, string> | (() => Record<string, string>);
  /** Whether `--before REF` measures this variant from the older build too (`<name>-before`, right after it): Switchyard as shipped. Default false. */
  pairBefore?: boolean;
  /**
   * Router processes (`serve --workers N`, decision 012). Default 1: one process on the gateway core.
   * With 2, the workers are pinned to the gateway core and the load core, which the subgraphs and the
   * load generator also use: on a 2-core machine the variant shows what a second process buys when the
   * machine has no idle core, not a clean doubling.
   */
  workers?: 1 | 2;
  /** Node.js flags before the CLI, e.g. `--inspect=127.0.0.1:PORT` for a measurement that collects the router's garbage (bench/lib/inspector-gc.ts). Default none. */
  nodeArgs?: readonly string[];
}

/**
 * What every Switchyard variant runs with unless it says otherwise:
 * - LOG_LEVEL=silent: a log line per request would measure pino and the pipe to the bench, not the router;
 * - NODE_ENV=production: what a measured deployment runs;
 * - SWITCHYARD_AUTH_MODE=off: the bench's `Bearer bench-<n>` tokens make every request unique (so nothing can
 *   deduplicate them); they are not JWTs and would be refused. Token verification is a cost of its own,
 *   for a scenario that mints real tokens.
 * - SWITCHYARD_SECTION_CACHE=false: the demo schema's cache hints would answer most product pages without a
 *   subgraph call, which measures the cache, not the path a scenario is about; the section-cache scenarios
 *   switch it on (and the peers' workload carries no hints, so it would cache nothing there anyway).
 */
const BASE_ENV: Readonly<Record<string, string>> = { LOG_LEVEL: 'silent', NODE_ENV: 'production', SWITCHYARD_AUTH_MODE: 'off', SWITCHYARD_SECTION_CACHE: 'false' };

/**
 * Starts `switchyard serve --port 0 [extra args]` from the built CLI of the package at `root` (this
 * checkout, or an older build for `--before`) on the gateway core, with a CPU profile when asked for
 * (written when the bench stops the process after the last round).
 */
async function startRouterProcess(context: StartContext, root: string, name: string, extraArgs: string[], env: Record<string, string>, readyTimeoutMs?: number, workers = 1, nodeArgs: readonly string[] = []): Promise<RunningGateway> {
  const { gateway, load } = context.cores;
  const several = workers > 1;
  const child = await context.supervisor.start({
    name: `switchyard (${name})`,
    command: process.execPath,
    args: [
      ...nodeArgs,
      // Workers inherit the primary's Node.js flags, so N processes would write one profile file: no profile then.
      ...(context.profileDir && !several ? ['--cpu-prof', '--cpu-prof-dir', context.profileDir, '--cpu-prof-name', `${name}.cpuprofile`] : []),
      path.join(root, 'bin', 'switchyard.js'),
      'serve',
      '--port',
      '0',
      ...(several ? ['--workers', String(workers)] : []),
      ...extraArgs,
    ],
    env,
    // Several workers: the gateway core and the next one (a 2-worker variant on a 2-core machine takes both).
    core: several && gateway !== undefined && load !== undefined ? [gateway, load] : gateway,
    processTree: several,
    cwd: root,
    ready: /^Switchyard router on (\S+)/,
    ...(readyTimeoutMs !== undefined ? { readyTimeoutMs } : {}),
  });
  return { url: child.announced, process: child };
}

/** The built CLI (dist/), as users run it: `switchyard serve --port 0 --supergraph FILE`, ready when it prints its URL. */
export function switchyardVariant(options: SwitchyardVariantOptions): Variant {
  return {
    name: options.name,
    description: options.description,
    async start(context: StartContext, backend: RunningBackend): Promise<RunningGateway> {
      const env = typeof options.env === 'function' ? options.env() : options.env;
      return startRouterProcess(context, PACKAGE_ROOT, context.instanceName ?? options.name, ['--supergraph', backend.supergraphFile], { ...BASE_ENV, ...env }, undefined, options.workers, options.nodeArgs);
    },
    ...(options.pairBefore ? { before: (build: OlderBuild) => olderSwitchyardVariant(options, build) } : {}),
  };
}

/**
 * `--before REF`: the variant `<name>-before`, the same settings run from the older build. Optional, like a
 * peer: a build that fails, or an older router that answers the data check differently, is left out with
 * its reason (NOT MEASURED) and the run goes on.
 */
function olderSwitchyardVariant(options: SwitchyardVariantOptions, build: OlderBuild): Variant {
  const name = `${options.name}-before`;
  return {
    name,
    description: `${options.description}; the build of ${build.sha.slice(0, 7)} (--before ${build.ref})`,
    optional: true,
    prepare: (log) => build.prepare(log),
    async start(context: StartContext, backend: RunningBackend): Promise<RunningGateway> {
      await build.ready(context.log ?? console.log);
      const env = typeof options.env === 'function' ? options.env() : options.env;
      return startRouterProcess(context, build.root, context.instanceName ?? name, ['--supergraph', backend.supergraphFile], { ...BASE_ENV, ...env }, undefined, options.workers);
    },
  };
}

/** Baseline of the resilience scenarios: each subgraph call keeps its timeout, nothing else of the layer (completeness is always on, decision 021). */
export const resilienceOff = switchyardVariant({
  name: 'resilience-off',
  description: 'SWITCHYARD_RESILIENCE=false: subgraph timeout only',
  env: { SWITCHYARD_RESILIENCE: 'false' },
});

/** The default configuration: deadline, retry, hedging, breaker (fallback stays opt-in per subgraph). */
export const resilienceOn = switchyardVariant({
  name: 'resilience-on',
  description: 'SWITCHYARD_RESILIENCE=true (the default): deadline, retry, hedge, breaker',
  env: { SWITCHYARD_RESILIENCE: 'true' },
  pairBefore: true,
});

/**
 * Switchyard as shipped, for the comparison with other gateways: every default (resilience on, per-subgraph
 * tokens on, cost limits and queue defaults), auth off only because the bench's tokens are not JWTs (BASE_ENV).
 */
export const switchyardDefaults = switchyardVariant({
  name: 'switchyard',
  description: 'shipped defaults (resilience on, per-subgraph tokens on), SWITCHYARD_AUTH_MODE=off',
  pairBefore: true,
});

/** The shipped defaults in two router processes (`serve --workers 2`), on the gateway core and the load core. */
export const switchyardTwoWorkers = switchyardVariant({
  name: 'switchyard-2-workers',
  description: 'shipped defaults, serve --workers 2 (pinned to both cores)',
  workers: 2,
});

export interface SwitchyardRegistryVariantOptions {
  name: string;
  description: string;
  /** Settings over BASE_ENV; a function when they exist only at start (e.g. a public key generated by the scenario's setup). */
  env?: Record<string, string> | (() => Record<string, string>);
  /** `switchyard policy set` argument lists run before the router starts, e.g. [['*', '--max-concurrency', '10']]. */
  policies?: readonly (readonly string[])[];
}

/** Runs the built CLI against a data dir (the embedded database) and waits for it; throws with its output when it fails. */
export async function switchyardCli(dataDir: string, args: readonly string[]): Promise<void> {
  try {
    await execFileAsync(process.execPath, [path.join(PACKAGE_ROOT, 'bin', 'switchyard.js'), ...args], {
      cwd: PACKAGE_ROOT,
      env: { ...process.env, LOG_LEVEL: 'silent', SWITCHYARD_DATA_DIR: dataDir },
      timeout: 60_000,
    });
  } catch (error) {
    const failure = error as Error & { stdout?: string; stderr?: string };
    throw new Error(`switchyard ${args.join(' ')} failed: ${failure.message} ${failure.stderr ?? ''}`.trim());
  }
}

/**
 * Switchyard in registry mode, as deployed with a database: its own embedded database in
 * `<workDir>/<name>-data`, the backend's subgraphs published there (`switchyard subgraph publish`), the
 * variant's policies set, then `switchyard serve --port 0` (no --supergraph). Needs a backend that lists
 * its subgraphs (RunningBackend.subgraphs). Publishing composes each time: a few seconds per variant.
 */
export function switchyardRegistryVariant(options: SwitchyardRegistryVariantOptions): Variant {
  return {
    name: options.name,
    description: options.description,
    async start(context: StartContext, backend: RunningBackend): Promise<RunningGateway> {
      if (!backend.subgraphs) throw new Error(`${options.name}: the backend does not list its subgraphs, so they cannot be published to a registry`);
      const instance = context.instanceName ?? options.name;
      const dataDir = path.join(context.workDir, `${instance}-data`);
      const schemaDir = path.join(context.workDir, `${instance}-schemas`);
      mkdirSync(dataDir, { recursive: true });
      mkdirSync(schemaDir, { recursive: true });
      // One at a time: each publish composes with those already registered.
      for (const subgraph of backend.subgraphs) {
        const file = path.join(schemaDir, `${subgraph.name}.graphql`);
        writeFileSync(file, subgraph.sdl);
        await switchyardCli(dataDir, ['subgraph', 'publish', subgraph.name, '--url', subgraph.url, '--schema', file]);
      }
      for (const policy of options.policies ?? []) await switchyardCli(dataDir, ['policy', 'set', ...policy]);
      const env = typeof options.env === 'function' ? options.env() : options.env;
      // Registry mode opens the embedded database first: allow it more time to be ready.
      return startRouterProcess(context, PACKAGE_ROOT, instance, [], { ...BASE_ENV, SWITCHYARD_DATA_DIR: dataDir, ...env }, 60_000);
    },
  };
}
