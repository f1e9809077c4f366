// A benchmark backend whose subgraphs run on the lean server, all in one process on the load core (see serveFastSubgraphs).
import path from 'node:path';
import { PACKAGE_ROOT } from '../../src/config/paths.js';
import { countSubgraphRequests, writeSupergraph } from '../lib/supergraph.js';
import type { Backend, RunningBackend, StartContext } from '../lib/types.js';

export interface FastSubgraphsBackendOptions<Name extends string> {
  name: string;
  description: string;
  /** The entry under dist/bench/backends/ that calls serveFastSubgraphs(label, ...). */
  entry: string;
  /** The line prefix that entry prints before its URLs. */
  label: string;
  subgraphs: readonly Name[];
  sdlOf: (name: Name) => string;
}

/** Starts the entry, reads the URLs it announces, composes their SDL into the supergraph file every gateway serves. */
export function fastSubgraphsBackend<Name extends string>(options: FastSubgraphsBackendOptions<Name>): Backend {
  return {
    name: options.name,
    description: options.description,
    async start(context: StartContext): Promise<RunningBackend> {
      const child = await context.supervisor.start({
        name: options.label,
        command: process.execPath,
        args: [path.join(PACKAGE_ROOT, 'dist', 'bench', 'backends', options.entry)],
        core: context.cores.load,
        cwd: PACKAGE_ROOT,
        ready: new RegExp(`^${options.label} (\\{.*\\})$`),
      });
      const urls = JSON.parse(child.announced) as Record<Name, string>;
      const subgraphs = options.subgraphs.map((name) => ({ name, url: urls[name], sdl: options.sdlOf(name) }));
      const supergraphFile = writeSupergraph(context.workDir, options.name, subgraphs);
      return { supergraphFile, subgraphs, processes: [child], subgraphRequests: () => countSubgraphRequests(Object.values(urls)) };
    },
  };
}
