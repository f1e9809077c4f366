// Measurement (issue 28, point 4): two routers under load through a Redis outage, a PostgreSQL restart, a SIGKILL and a publish; the long form of test/integration/fleet-faults.test.ts.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../src/config/paths.js';
import { LONG_TIMINGS, runFleetDrill } from '../lib/fleet/fleet-drill.js';
import { fleetVerdicts, formatFleetDrill } from '../lib/fleet/fleet-report.js';
import { assertServicesAnswer, postgresServerUrl, sharedRedisUrl } from '../lib/fleet/shared-services.js';
import type { Measurement } from './queue-memory.js';

/** Through the balancer: 300 requests/s at most (150 a router), 16 in flight at most. Both routers share the gateway core. */
const RATE_PER_SECOND = 300;
const CONNECTIONS = 16;

/**
 * The drill with outages long enough for every backoff to reach its ceiling (LONG_TIMINGS): Redis away
 * 20 s, PostgreSQL 30 s with router b killed 15 s into it. Routers on the gateway core, the demo
 * subgraphs and the drill (balancer, proxies) on the load core. The routers' logs are kept in
 * bench/results/fleet-faults-<time>/. Fails when a claim of the issue does not hold (the verdicts).
 */
export const fleetFaults: Measurement = {
  name: 'fleet-faults',
  summary: 'two routers under load through a Redis outage, a PostgreSQL restart, a SIGKILL and a publish: failures, audit rows lost, recovery times (issue 28)',
  async run(context) {
    const serverUrl = postgresServerUrl();
    const redisUrl = sharedRedisUrl();
    await assertServicesAnswer('fleet-faults', serverUrl, redisUrl);
    const logDir = path.join(PACKAGE_ROOT, 'bench', 'results', `fleet-faults-${new Date().toISOString().replace(/[:.]/g, '-')}`);
    mkdirSync(logDir, { recursive: true });
    const result = await runFleetDrill({
      serverUrl,
      redisUrl,
      supervisor: context.supervisor,
      routerCore: context.cores.gateway,
      subgraphCore: context.cores.load,
      connections: CONNECTIONS,
      ratePerSecond: RATE_PER_SECOND,
      timings: LONG_TIMINGS,
      log: context.log,
      logDir,
    });
    const verdicts = fleetVerdicts(result);
    const table = [formatFleetDrill(result), '', 'verdicts', ...verdicts.map((v) => `  ${v.holds ? 'PASS' : 'FAIL'}  ${v.claim}`), `routers' logs: ${logDir}`].join('\n');
    if (verdicts.some((v) => !v.holds)) throw new Error(`fleet-faults: a claim does not hold\n${table}`);
    return { result: { ...result, verdicts }, table };
  },
};
