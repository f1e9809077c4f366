// The public federation benchmark's subgraphs (accounts, products, inventory, reviews) as a benchmark backend, on the lean server.
import path from 'node:path';
import { PACKAGE_ROOT } from '../../src/config/paths.js';
import { countSubgraphRequests, writeSupergraph } from '../lib/supergraph.js';
import type { Backend, RunningBackend, StartContext } from '../lib/types.js';
import { FEDERATION_BENCHMARK_SUBGRAPH_NAMES, readWorkloadSdl } from './federation-benchmark-subgraphs.js';

/**
 * bench/backends/federation-benchmark-subgraphs-main.ts: the four subgraphs in one process on the load
 * core, documents parsed once, data in memory (bench/workloads/federation-benchmark/data.json), so that
 * even the heavy query's entity batches cost the subgraphs a small share of what they cost a gateway.
 */
export const federationBenchmarkBackend: Backend = {
  name: 'federation-benchmark',
  description: 'the public federation benchmark subgraphs (accounts, products, inventory, reviews) on lean graphql-js servers, one process',
  async start(context: StartContext): Promise<RunningBackend> {
    const child = await context.supervisor.start({
      name: 'federation benchmark subgraphs',
      command: process.execPath,
      args: [path.join(PACKAGE_ROOT, 'dist', 'bench', 'backends', 'federation-benchmark-subgraphs-main.js')],
      core: context.cores.load,
      cwd: PACKAGE_ROOT,
      ready: /^federation benchmark subgraphs (\{.*\})$/,
    });
    const urls = JSON.parse(child.announced) as Record<(typeof FEDERATION_BENCHMARK_SUBGRAPH_NAMES)[number], string>;
    const subgraphs = FEDERATION_BENCHMARK_SUBGRAPH_NAMES.map((name) => ({ name, url: urls[name], sdl: readWorkloadSdl(name) }));
    const supergraphFile = writeSupergraph(context.workDir, 'federation-benchmark', subgraphs);
    return { supergraphFile, subgraphs, processes: [child], subgraphRequests: () => countSubgraphRequests(Object.values(urls)) };
  },
};
