// Switchyard itself as a gateway variant: `switchyard serve --supergraph FILE` with the environment that defines the variant.
import path from 'node:path';
import { PACKAGE_ROOT } from '../../src/config/paths.js';
import type { RunningBackend, RunningGateway, StartContext, Variant } from '../lib/types.js';

export interface SwitchyardVariantOptions {
  name: string;
  description: string;
  /** Settings that make this variant (e.g. SWITCHYARD_RESILIENCE), over the base settings (BASE_ENV). */
  env?: Record<string, string>;
}

/**
 * What every Switchyard variant runs with unless it says otherwise:
 * - LOG_LEVEL=silent: a log line per request would measure pino and the pipe to the bench, not the router;
 * - NODE_ENV=production: what a measured deployment runs;
 * - SWITCHYARD_AUTH_MODE=off: the bench's `Bearer bench-<n>` tokens make every request unique (so nothing can
 *   deduplicate them); they are not JWTs and would be refused. Token verification is a cost of its own,
 *   for a scenario that mints real tokens.
 */
const BASE_ENV: Readonly<Record<string, string>> = { LOG_LEVEL: 'silent', NODE_ENV: 'production', SWITCHYARD_AUTH_MODE: 'off' };

/** The built CLI (dist/), as users run it: `switchyard serve --port 0 --supergraph FILE`, ready when it prints its URL. */
export function switchyardVariant(options: SwitchyardVariantOptions): Variant {
  return {
    name: options.name,
    description: options.description,
    async start(context: StartContext, backend: RunningBackend): Promise<RunningGateway> {
      const child = await context.supervisor.start({
        name: `switchyard (${options.name})`,
        command: process.execPath,
        args: [
          // The profile is written when the process exits, i.e. when the bench stops it after the last round.
          ...(context.profileDir ? ['--cpu-prof', '--cpu-prof-dir', context.profileDir, '--cpu-prof-name', `${options.name}.cpuprofile`] : []),
          path.join(PACKAGE_ROOT, 'bin', 'switchyard.js'),
          'serve',
          '--port',
          '0',
          '--supergraph',
          backend.supergraphFile,
        ],
        env: { ...BASE_ENV, ...options.env },
        core: context.cores.gateway,
        cwd: PACKAGE_ROOT,
        ready: /^Switchyard router on (\S+)/,
      });
      return { url: child.announced, process: child };
    },
  };
}

/** Baseline of the resilience scenarios: each subgraph call keeps its timeout, nothing else of the layer. */
export const resilienceOff = switchyardVariant({
  name: 'resilience-off',
  description: 'SWITCHYARD_RESILIENCE=false: subgraph timeout only',
  env: { SWITCHYARD_RESILIENCE: 'false' },
});

/** The default configuration: deadline, completeness, retry, hedging, breaker (fallback stays opt-in per subgraph). */
export const resilienceOn = switchyardVariant({
  name: 'resilience-on',
  description: 'SWITCHYARD_RESILIENCE=true (the default): deadline, completeness, retry, hedge, breaker',
  env: { SWITCHYARD_RESILIENCE: 'true' },
});
