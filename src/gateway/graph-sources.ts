// Where the served graph comes from: the live registry (composed here) or a supergraph file composed elsewhere.
import { readFile, stat } from 'node:fs/promises';
import { watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { parse, type GraphQLSchema } from 'graphql';
import type { Executor } from '@graphql-tools/utils';
import { configDefaults } from '../config/schema.js';
import type { Database } from '../registry/database.js';
import { listSubgraphs } from '../registry/subgraph-store.js';
import { mostUsedOperations } from '../registry/operation-log.js';
import { createDocumentText, type DocumentText } from '../cache/document-text.js';
import type { RouteMetadata } from '../registry/route.js';
import type { RouterMetrics } from '../telemetry/metrics.js';
import type { Logger } from '../telemetry/logger.js';
import { buildGatewaySchema, type SubgraphEndpoint } from './gateway-schema.js';
import { createPlanningExecutor, type PlanningExecutor, type PlanningExecutorOptions } from './execute/planning-executor.js';
import type { CacheRuleBook } from '../cache/cache-hints.js';
import { Supergraph } from './supergraph/supergraph.js';
import type { GraphHolder, ServedGraph } from './served-graph.js';

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
  /** Query plans for every query and mutation (decision 007; false: stitching runs everything). Default true. */
  queryPlans?: boolean;
  /** How planned answers are shaped (PlanningExecutorOptions.projection). Default compiled. */
  answerProjection?: PlanningExecutorOptions['projection'];
  /** The router's section cache: each graph's plans read and store their parts through it. */
  sectionCache?: RouterSectionCache;
}

/** What the router shares with every graph's section cache; the graph adds its hints, hash and routes. */
export type RouterSectionCache = Omit<NonNullable<PlanningExecutorOptions['sectionCache']>, 'hints' | 'graphHash' | 'staleAllowed'> & { rules: CacheRuleBook };

interface PreparedGraph {
  next: Omit<ServedGraph, 'generation' | 'loadedAt'>;
}

/**
 * Builds a graph (supergraph facts, schema, executors, planner) without serving it yet. The SDL is
 * parsed here, once: the stitched schema, the planner, the section cache's hints and the plugins
 * (`served.supergraph`) all read the same `Supergraph` (decision 014).
 */
function prepareGraph(deps: SourceDeps, source: string, supergraphSdl: string, routes: Map<string, RouteMetadata>, documentText?: DocumentText): PreparedGraph {
  const supergraph = Supergraph.fromSdl(supergraphSdl);
  const built = buildGatewaySchema(supergraph, {
    executorFor: (endpoint) => deps.executorFor(endpoint, routes.get(endpoint.name) ?? {}),
    overrideLabels: deps.overrideLabels,
  });
  deps.decorateSchema?.(built.schema);
  const planner =
    deps.queryPlans === false
      ? undefined
      : createPlanningExecutor({
          supergraph,
          apiSchema: built.schema,
          executors: built.executors,
          overrideLabels: deps.overrideLabels,
          documentText,
          projection: deps.answerProjection,
          onProjectionMismatch: (operation, difference) => {
            deps.metrics?.projectionMismatches.inc();
            deps.logger.error({ operation, difference }, 'compiled projection differs from graphql-js: a bug; answered with graphql-js');
          },
          sectionCache: deps.sectionCache && sectionCacheOf(deps.sectionCache, supergraph, routes),
          onPlanned: (outcome, reason, operation) => {
            deps.metrics?.plans.inc({ outcome });
            if (outcome === 'unsupported') deps.logger.debug({ operation, reason }, 'operation runs by stitching');
            else if (outcome === 'unsatisfiable') deps.logger.info({ operation, reason }, 'operation cannot be planned on this supergraph; refused');
            else if (outcome !== 'planned') deps.logger.error({ operation, reason, outcome }, 'query planner bug; the operation runs by stitching');
          },
        });
  return { next: { schema: built.schema, supergraph, subgraphs: built.subgraphs, routes, source, planner } };
}

/** One graph's section cache: its SDL hints under the live rules, its hash, and its routes' fallback switches. */
function sectionCacheOf(shared: RouterSectionCache, supergraph: Supergraph, routes: Map<string, RouteMetadata>): PlanningExecutorOptions['sectionCache'] {
  const { rules, ...rest } = shared;
  return {
    ...rest,
    hints: rules.hintsFor(supergraph.cacheHints),
    graphHash: supergraph.hash,
    staleAllowed: (subgraph) => routes.get(subgraph)?.fallback?.enabled !== false,
  };
}

/** Serves a prepared graph: requests that start from now on use it. */
function swapIn(deps: SourceDeps, prepared: PreparedGraph): void {
  const { source } = prepared.next;
  const graph = deps.holder.swap(prepared.next);
  deps.metrics?.schemaReloads.inc({ result: 'swapped' });
  deps.metrics?.schemaVersion.set(graph?.generation ?? 0);
  deps.metrics?.schemaLastReload.set(Date.now() / 1000);
  deps.logger.info({ generation: graph?.generation, subgraphs: prepared.next.subgraphs.map((s) => s.name), source }, 'serving a new graph');
}

export interface RegistryGraphSourceOptions extends SourceDeps {
  db: Database;
  /**
   * Operations whose plans are built before a new graph is swapped in (decision 009): the most
   * executed of the last day in the operation registry, at most this many. Default: the config's
   * `warmOperations`; 0 turns warming off.
   */
  warmOperations?: number;
}

/** Window of the operations warmed, in ms: the last day. */
const WARM_WINDOW_MS = 24 * 60 * 60 * 1000;
/** Longest stretch of planning, in ms, before warming lets requests in flight run (planning is synchronous). */
const WARM_SLICE_MS = 5;

/**
 * Plans the most used operations on a graph not yet served (decision 009):
 * 1. Read the top `limit` documents of the last day from the operation registry (one query per swap).
 * 2. Parse each normalised text and plan it on the new planner, which keeps the plan by that text too,
 *    so the first request with any document object of the same text finds it ready.
 * 3. Planning is synchronous: after each `WARM_SLICE_MS` of it, yield to the event loop, so requests
 *    still served by the old graph do not wait behind the warm-up (that would be the spike it avoids).
 * A registry that cannot be read, or a document that no longer parses, only costs its warm plan.
 */
async function warmPlanner(deps: RegistryGraphSourceOptions, planner: PlanningExecutor, limit: number): Promise<void> {
  const started = Date.now();
  let operations;
  try {
    operations = await mostUsedOperations(deps.db, { since: new Date(Date.now() - WARM_WINDOW_MS), limit });
  } catch (error) {
    deps.logger.warn({ err: error }, 'cannot read the operation registry; the new graph serves without warm plans');
    return;
  }
  let planned = 0;
  let slice = performance.now();
  for (const operation of operations) {
    try {
      if (planner.warm(parse(operation.normalised, { noLocation: true }), operation.operationName)) planned += 1;
    } catch (error) {
      deps.logger.debug({ err: error, hash: operation.hash }, 'a recorded operation could not be warmed');
    }
    if (performance.now() - slice > WARM_SLICE_MS) {
      await nextTurn();
      slice = performance.now();
    }
  }
  deps.logger.info({ operations: operations.length, planned, ms: Date.now() - started }, 'plans warmed before the swap');
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
  const warmOperations = options.warmOperations ?? configDefaults.warmOperations;
  // One printed text per document object across every graph this source serves.
  const documentText = createDocumentText();
  return {
    async reload() {
      const records = await listSubgraphs(options.db);
      if (records.length === 0) {
        if (options.holder.current) options.logger.warn('the registry is empty: no graph to serve');
        lastKey = undefined;
        options.holder.swap(undefined);
        return;
      }
      // Loaded on the first registry reload: a router serving a supergraph file never composes (30 MB of resident memory).
      const { composeSupergraph } = await import('./compose.js');
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
      const prepared = prepareGraph(options, 'registry', outcome.supergraphSdl, routes, documentText);
      if (prepared.next.planner && warmOperations > 0) await warmPlanner(options, prepared.next.planner, warmOperations);
      swapIn(options, prepared);
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
    swapIn(options, prepareGraph(options, file, text, new Map()));
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
