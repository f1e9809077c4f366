// Where the served graph comes from: the live registry (composed here) or a supergraph file composed elsewhere.
import { readFile, stat } from 'node:fs/promises';
import { watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import type { GraphQLSchema } from 'graphql';
import type { Executor } from '@graphql-tools/utils';
import type { Database } from '../registry/database.js';
import { listSubgraphs } from '../registry/subgraph-store.js';
import type { RouteMetadata } from '../registry/route.js';
import type { RouterMetrics } from '../telemetry/metrics.js';
import type { Logger } from '../telemetry/logger.js';
import { composeSupergraph } from './compose.js';
import { buildGatewaySchema, type SubgraphEndpoint } from './gateway-schema.js';
import { createQueryPlanner } from './plan/query-planner.js';
import type { GraphHolder } from './served-graph.js';

/** Makes one subgraph's executor from its endpoint and its registry route metadata (empty for a file). */
export type ExecutorFactory = (endpoint: SubgraphEndpoint, route: RouteMetadata) => Executor;

export interface GraphSource {
  /** Loads the first graph and starts watching for changes. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

interface SourceDeps {
  holder: GraphHolder;
  executorFor: ExecutorFactory;
  logger: Logger;
  metrics?: RouterMetrics;
  /** Progressive-override labels switched on (see buildGatewaySchema). */
  overrideLabels?: ReadonlySet<string>;
  /** Changes a built schema before it serves (authorization guards). */
  decorateSchema?: (schema: GraphQLSchema) => void;
  /** Query plans for the operations they model (decision 005). Default true. */
  queryPlans?: boolean;
}

function recordSwap(deps: SourceDeps, source: string, supergraphSdl: string, routes: Map<string, RouteMetadata>): void {
  const built = buildGatewaySchema(supergraphSdl, {
    executorFor: (endpoint) => deps.executorFor(endpoint, routes.get(endpoint.name) ?? {}),
    overrideLabels: deps.overrideLabels,
  });
  deps.decorateSchema?.(built.schema);
  const planner =
    deps.queryPlans === false
      ? undefined
      : createQueryPlanner({
          supergraph: built.document,
          apiSchema: built.schema,
          executors: built.executors,
          overrideLabels: deps.overrideLabels,
          onPlanned: (outcome, reason, operation) => {
            deps.metrics?.plans.inc({ outcome });
            if (outcome === 'unsupported') deps.logger.debug({ operation, reason }, 'operation runs by stitching');
            else if (outcome !== 'planned') deps.logger.error({ operation, reason, outcome }, 'query planner bug; the operation runs by stitching');
          },
        });
  const graph = deps.holder.swap({ schema: built.schema, supergraphSdl, subgraphs: built.subgraphs, routes, source, planner });
  deps.metrics?.schemaReloads.inc({ result: 'swapped' });
  deps.metrics?.schemaVersion.set(graph?.generation ?? 0);
  deps.metrics?.schemaLastReload.set(Date.now() / 1000);
  deps.logger.info({ generation: graph?.generation, subgraphs: built.subgraphs.map((s) => s.name), source }, 'serving a new graph');
}

export interface RegistryGraphSourceOptions extends SourceDeps {
  db: Database;
}

export interface RegistryGraphSource {
  /** Re-reads the registry and swaps in a new graph if it changed; called by the change feed on every `subgraphs` change. */
  reload(): Promise<void>;
}

/**
 * Serves what the registry holds. On every reload: read the set, compose, build, swap. A set that
 * does not compose (the store refuses those, but a row may be edited by hand) is logged and the
 * previous graph keeps serving. An empty registry serves nothing.
 */
export function createRegistryGraphSource(options: RegistryGraphSourceOptions): RegistryGraphSource {
  let lastKey: string | undefined;
  return {
    async reload() {
      const records = await listSubgraphs(options.db);
      if (records.length === 0) {
        if (options.holder.current) options.logger.warn('the registry is empty: no graph to serve');
        lastKey = undefined;
        options.holder.swap(undefined);
        return;
      }
      const outcome = composeSupergraph(records);
      if (!outcome.ok) {
        options.metrics?.schemaReloads.inc({ result: 'failed' });
        options.logger.error({ errors: outcome.errors }, 'the registered subgraphs do not compose; keeping the current graph');
        return;
      }
      const routes = new Map(records.map((r) => [r.name, r.route]));
      const key = outcome.supergraphSdl + JSON.stringify([...routes]);
      if (key === lastKey) {
        options.metrics?.schemaReloads.inc({ result: 'unchanged' });
        return;
      }
      recordSwap(options, 'registry', outcome.supergraphSdl, routes);
      lastKey = key;
    },
  };
}

export interface FileGraphSourceOptions extends SourceDeps {
  file: string;
  /** Re-check interval of the file's modification time, in ms (file watchers miss some editors' renames). Default 1000. */
  pollMs?: number;
}

/**
 * Serves a supergraph SDL file composed by other federation tools, reloading it when it changes.
 * A file that cannot be read or built keeps the previous graph serving; at start it is an error.
 */
export function createFileGraphSource(options: FileGraphSourceOptions): GraphSource {
  const file = path.resolve(options.file);
  let lastText: string | undefined;
  let watcher: FSWatcher | undefined;
  let timer: NodeJS.Timeout | undefined;
  let lastMtime = 0;
  let loading: Promise<void> = Promise.resolve();

  async function load(): Promise<void> {
    const text = await readFile(file, 'utf8');
    if (text === lastText) return;
    recordSwap(options, file, text, new Map());
    lastText = text;
  }

  function reloadSoon(): void {
    loading = loading
      .then(load)
      .catch((error: Error) => {
        options.metrics?.schemaReloads.inc({ result: 'failed' });
        options.logger.error({ err: error, file }, 'cannot load the supergraph file; keeping the current graph');
      });
  }

  return {
    async start() {
      await load();
      lastMtime = (await stat(file)).mtimeMs;
      // Watch the folder, not the file: editors and deploy tools often replace the file by a rename.
      watcher = watch(path.dirname(file), (_event, changed) => {
        if (changed === null || changed === path.basename(file)) reloadSoon();
      });
      watcher.on('error', (error) => options.logger.warn({ err: error }, 'supergraph file watcher failed; polling continues'));
      timer = setInterval(() => {
        stat(file)
          .then((s) => {
            if (s.mtimeMs !== lastMtime) {
              lastMtime = s.mtimeMs;
              reloadSoon();
            }
          })
          .catch(() => {});
      }, options.pollMs ?? 1_000);
      timer.unref();
    },
    async stop() {
      watcher?.close();
      if (timer) clearInterval(timer);
      await loading;
    },
  };
}
