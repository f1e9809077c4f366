// The graph a router serves right now, swapped atomically: a request keeps the graph it started with.
import type { GraphQLSchema } from 'graphql';
import type { RouteMetadata } from '../registry/route.js';
import type { SubgraphEndpoint } from './gateway-schema.js';
import type { QueryPlan } from './plan/plan-types.js';
import type { PlanningExecutor } from './execute/planning-executor.js';
import type { Supergraph } from './supergraph/supergraph.js';

export interface ServedGraph {
  readonly schema: GraphQLSchema;
  /** The supergraph, parsed once: its SDL, and every fact the plugins read from it (decision 014). */
  readonly supergraph: Supergraph;
  readonly subgraphs: readonly SubgraphEndpoint[];
  /** Plans and runs every query and mutation (decision 007; absent when query plans are off): see execute/planning-executor.ts. */
  readonly planner?: PlanningExecutor;
  /** Route metadata per subgraph name (empty for a supergraph file). */
  readonly routes: ReadonlyMap<string, RouteMetadata>;
  /** Increments with every swap in this process. */
  readonly generation: number;
  /** Where it came from: `registry` or the supergraph file's path. */
  readonly source: string;
  readonly loadedAt: Date;
}

// What the gateway keeps on a request's state (src/request/request-state.ts, decisions 011 and 025): the
// request layer sits below the gateway and cannot name these types, so their owner adds the fields.
declare module '../request/request-state.js' {
  interface RequestState {
    /** The graph the request started on (`start()`, when the request is parsed): its schema serves the request, whatever swap happens meanwhile. */
    graph: ServedGraph;
    /** The query plan the request runs, once looked up (`planOfRequest`, by cost or query plans, whichever asks first); null: none, stitching runs it. */
    plan: QueryPlan | null | undefined;
  }
}

export type SwapListener = (graph: ServedGraph | undefined) => void;

/**
 * Holds the current graph. Requests read `current` once when they start (yoga's schema factory),
 * so a swap never changes the schema under a request in flight; the old schema and its executors
 * stay usable until the last request holding them finishes and the garbage collector takes them.
 */
export class GraphHolder {
  #current: ServedGraph | undefined;
  #generation = 0;
  readonly #listeners = new Set<SwapListener>();

  get current(): ServedGraph | undefined {
    return this.#current;
  }

  swap(next: Omit<ServedGraph, 'generation' | 'loadedAt'> | undefined): ServedGraph | undefined {
    this.#current = next === undefined ? undefined : { ...next, generation: ++this.#generation, loadedAt: new Date() };
    for (const listener of this.#listeners) listener(this.#current);
    return this.#current;
  }

  onSwap(listener: SwapListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
