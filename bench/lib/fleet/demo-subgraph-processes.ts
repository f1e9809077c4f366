// The demo subgraphs as their own processes (`switchyard subgraph serve NAME`), each with its fault switch at POST /admin/faults.
import path from 'node:path';
import { PACKAGE_ROOT } from '../../../src/config/paths.js';
import { FAST_DEMO_SUBGRAPH_NAMES, readDemoSdl, type FastDemoSubgraphName } from '../../backends/fast-demo-subgraphs.js';
import type { ChildHandle, ProcessSupervisor } from '../processes.js';

export interface DemoSubgraphProcess {
  name: FastDemoSubgraphName;
  /** The GraphQL endpoint. */
  url: string;
  sdl: string;
  /** Its process (CPU time, memory). */
  process: ChildHandle;
  /** Changes the subgraph's fault settings (a partial object: latencyMs, errorRate, errorStatus, slowRate, slowMs, mode). */
  setFaults(patch: Record<string, unknown>): Promise<void>;
}

/**
 * Starts product, reviews and inventory, one process each, and waits for their ready lines. Out of the
 * caller's process, so that a drill's or soak's own load generator and proxies do not slow them down
 * (nor they the proxies). The supervisor stops them. `env` is added to each one's environment
 * (`INVENTORY_TICK_MS=0`: the inventory's stock moves only when pushed).
 */
export async function startDemoSubgraphProcesses(supervisor: ProcessSupervisor, core?: number | readonly number[], env: Record<string, string> = {}): Promise<DemoSubgraphProcess[]> {
  return Promise.all(
    FAST_DEMO_SUBGRAPH_NAMES.map(async (name) => {
      const child = await supervisor.start({
        name: `${name} subgraph`,
        command: process.execPath,
        args: [path.join(PACKAGE_ROOT, 'bin', 'switchyard.js'), 'subgraph', 'serve', name, '--port', '0'],
        env: { LOG_LEVEL: 'silent', NODE_ENV: 'production', ...env },
        core,
        cwd: PACKAGE_ROOT,
        ready: /subgraph on (http:\/\/\S+)/,
      });
      const url = child.announced;
      return {
        name,
        url,
        sdl: readDemoSdl(name),
        process: child,
        async setFaults(patch: Record<string, unknown>) {
          const response = await fetch(new URL('/admin/faults', url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(patch) });
          if (!response.ok) throw new Error(`${name} subgraph refused the fault settings ${JSON.stringify(patch)}: ${response.status} ${await response.text()}`);
        },
      };
    }),
  );
}
