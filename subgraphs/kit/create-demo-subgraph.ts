// Builds a demo subgraph from its name, resolvers and per-request context: schema, yoga, faults, stats, listen().
import { buildSubgraphSchema } from '@apollo/subgraph';
import { parse } from 'graphql';
import { createYoga, type Plugin } from 'graphql-yoga';
import { createFaultSwitch, faultSettingsFromEnv, validateFaultPatch } from './fault-switch.js';
import { readSchemaFile } from './schema-file.js';
import { startSubgraphServer } from './subgraph-server.js';
import { createSubgraphStats, type SubgraphStats } from './subgraph-stats.js';
import type { DemoSubgraph, SubgraphOptions } from './types.js';

/**
 * Resolvers by type, then field (plus `__resolveReference` for entities). Loosely typed because
 * @apollo/subgraph's own map type is not exported; graphql checks the names when the schema is built.
 */
export type ResolverMap = Record<string, Record<string, (...args: any[]) => unknown>>;

/** What `buildSubgraphSchema` accepts as resolvers (its `GraphQLResolverMap` is internal). */
type SubgraphResolvers = Extract<Parameters<typeof buildSubgraphSchema>[0], { typeDefs: unknown }>['resolvers'];

export interface DemoSubgraphSpec<TContext extends object> {
  /** Also names the schema file, `schema/<name>.graphql`. */
  name: string;
  defaultPort: number;
  /**
   * Runs once per subgraph instance: generates the tables, wraps them as counted data sources
   * (`createTableSource(..., stats)`) and returns the resolvers plus `createContext`, which yoga
   * calls per request so DataLoaders are never shared between requests.
   */
  setup(stats: SubgraphStats): { resolvers: ResolverMap; createContext(): TContext };
}

export function createDemoSubgraph<TContext extends object>(spec: DemoSubgraphSpec<TContext>, options: SubgraphOptions = {}): DemoSubgraph {
  // Options win over the environment; both are validated now, so a bad knob fails at start.
  const faults = createFaultSwitch({ ...faultSettingsFromEnv(options.env ?? process.env), ...validateFaultPatch(options.faults ?? {}) });
  const stats = createSubgraphStats();
  const sdl = readSchemaFile(spec.name);
  const { resolvers, createContext } = spec.setup(stats);
  const schema = buildSubgraphSchema({ typeDefs: parse(sdl), resolvers: resolvers as SubgraphResolvers });
  const yoga = createYoga({
    schema,
    graphqlEndpoint: '/graphql',
    // A subgraph serves the router, not people: no GraphiQL, no landing page, no per-request logs.
    graphiql: false,
    landingPage: false,
    logging: false,
    context: createContext,
    plugins: [useEntityRequestCounter(stats)],
  });

  return {
    name: spec.name,
    sdl,
    defaultPort: spec.defaultPort,
    faults,
    stats,
    listen: function listenSubgraph(port = spec.defaultPort, host = '127.0.0.1') {
      return startSubgraphServer(
        { name: spec.name, faults, stats, executeGraphql: yoga.requestListener, authenticate: options.authenticate },
        port,
        host,
      );
    },
  };
}

/** Counts requests that ask for `_entities`: how tests see that the router batched its entity lookups. */
function useEntityRequestCounter(stats: SubgraphStats): Plugin {
  return {
    onParams: function countEntityRequest({ params }) {
      if (params.query?.includes('_entities')) stats.entityRequests += 1;
    },
  };
}
