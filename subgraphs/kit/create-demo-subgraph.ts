// Builds a demo subgraph from its name, resolvers and per-request context: schema, yoga, faults, stats, subscriptions, listen().
import type { IncomingMessage } from 'node:http';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { parse } from 'graphql';
import { createYoga, isAsyncIterable, type Plugin } from 'graphql-yoga';
import { createAdminApi, kitAdminRoutes, type AdminRoute } from './admin-api.js';
import { createFaultSwitch, faultSettingsFromEnv, validateFaultPatch } from './fault-switch.js';
import { readSchemaFile } from './schema-file.js';
import { startSubgraphServer } from './subgraph-server.js';
import { createSubgraphStats, type SubgraphStats } from './subgraph-stats.js';
import { createTokenGate, tokenRequirementFromEnv, validateTokenRequirement, type TokenGate } from './token-gate.js';
import type { Authenticate, CallerContext, DemoSubgraph, SubgraphCaller, SubgraphOptions, TokenRequirement } from './types.js';
import { createWebSocketTransport } from './websocket-transport.js';

/** One field's resolver (or an entity's `__resolveReference`). */
export type FieldResolver = (...args: any[]) => unknown;

/** A `Subscription` field: `subscribe` returns the event stream (an AsyncIterable), `resolve` turns each event into the field's value. */
export interface SubscriptionResolver {
  subscribe: FieldResolver;
  resolve: FieldResolver;
}

/**
 * Resolvers by type, then field (plus `__resolveReference` for entities). Loosely typed because
 * @apollo/subgraph's own map type is not exported; graphql checks the names when the schema is built.
 */
export type ResolverMap = Record<string, Record<string, FieldResolver | SubscriptionResolver>>;

/** What `buildSubgraphSchema` accepts as resolvers (its `GraphQLResolverMap` is internal). */
type SubgraphResolvers = Extract<Parameters<typeof buildSubgraphSchema>[0], { typeDefs: unknown }>['resolvers'];

export interface DemoSubgraphSpec<TContext extends object> {
  /** Also names the schema file, `schema/<name>.graphql`. */
  name: string;
  defaultPort: number;
  /**
   * Runs once per subgraph instance: generates the tables, wraps them as counted data sources
   * (`createTableSource(..., stats)`) and returns the resolvers plus `createContext`, which yoga
   * calls per request so DataLoaders are never shared between requests. The kit adds `caller`
   * (`CallerContext`) to what it returns. `adminRoutes` are served next to the kit's own `/admin/*`
   * routes (a test hook such as `POST /admin/inventory`); default none.
   */
  setup(stats: SubgraphStats): { resolvers: ResolverMap; createContext(): TContext; adminRoutes?: readonly AdminRoute[] };
}

export function createDemoSubgraph<TContext extends object>(spec: DemoSubgraphSpec<TContext>, options: SubgraphOptions = {}): DemoSubgraph {
  const env = options.env ?? process.env;
  // Options win over the environment; both are validated now, so a bad knob fails at start.
  const faults = createFaultSwitch({ ...faultSettingsFromEnv(env), ...validateFaultPatch(options.faults ?? {}) });
  const initialTokens = options.requireTokens === undefined ? tokenRequirementFromEnv(env) : validateTokenRequirement(options.requireTokens);
  const keepAliveMs = options.webSocketKeepAliveMs;
  if (keepAliveMs !== undefined && !(Number.isInteger(keepAliveMs) && keepAliveMs >= 0)) {
    throw new RangeError(`webSocketKeepAliveMs must be a whole number of milliseconds, 0 or more (got ${JSON.stringify(keepAliveMs)})`);
  }
  const stats = createSubgraphStats();
  const sdl = readSchemaFile(spec.name);
  const { resolvers, createContext, adminRoutes = [] } = spec.setup(stats);
  const handleAdmin = createAdminApi([...kitAdminRoutes({ faults, stats }), ...adminRoutes]);
  const schema = buildSubgraphSchema({ typeDefs: parse(sdl), resolvers: resolvers as SubgraphResolvers });
  // Who each verified request is for: written by the token gate, read once when yoga builds the context.
  const callers = new WeakMap<IncomingMessage, SubgraphCaller>();
  const yoga = createYoga<{ req?: IncomingMessage }>({
    schema,
    graphqlEndpoint: '/graphql',
    // A subgraph serves the router, not people: no GraphiQL, no landing page, no per-request logs.
    graphiql: false,
    landingPage: false,
    logging: false,
    context: function createRequestContext({ req }): TContext & CallerContext {
      return { ...createContext(), caller: req === undefined ? undefined : callers.get(req) };
    },
    plugins: [useEntityRequestCounter(stats), useSubscriptionCounter(stats)],
  });

  const rememberCaller = (req: IncomingMessage, caller: SubgraphCaller): void => void callers.set(req, caller);
  let requiredTokens: Readonly<Required<TokenRequirement>> | undefined;
  // The gate WebSocket connections use at connection_init; `undefined` when tokens are not required.
  let tokenGate: TokenGate | undefined;
  // The hook `listen()`'s servers read per request: the token gate, then the caller's own hook.
  let authenticate: Authenticate | undefined = options.authenticate;
  function requireTokens(requirement: TokenRequirement | undefined): void {
    const next = requirement === undefined ? undefined : validateTokenRequirement(requirement);
    requiredTokens = next;
    tokenGate = next === undefined ? undefined : createTokenGate(spec.name, next, rememberCaller);
    authenticate = tokenGate === undefined ? options.authenticate : thenAuthenticate(tokenGate.authenticate, options.authenticate);
  }
  requireTokens(initialTokens);

  // Only a schema with a Subscription type gets the WebSocket side; its SSE side is yoga's own, on /graphql.
  const openWebSocket = schema.getSubscriptionType()
    ? createWebSocketTransport({ name: spec.name, stats, yoga, tokenGate: () => tokenGate, onCaller: rememberCaller, keepAliveMs })
    : undefined;

  return {
    name: spec.name,
    sdl,
    defaultPort: spec.defaultPort,
    faults,
    stats,
    requireTokens,
    get requiredTokens() {
      return requiredTokens;
    },
    listen: function listenSubgraph(port = spec.defaultPort, host = '127.0.0.1') {
      return startSubgraphServer(
        {
          name: spec.name,
          faults,
          stats,
          executeGraphql: yoga.requestListener,
          handleAdmin,
          authenticator: () => authenticate,
          openWebSocket,
          // The router token of a WebSocket comes at connection_init; the upgrade meets only the caller's own hook.
          upgradeAuthenticator: () => options.authenticate,
        },
        port,
        host,
      );
    },
  };
}

/** Runs `second` only after `first` let the request through; the first refusal answers. */
function thenAuthenticate(first: Authenticate, second: Authenticate | undefined): Authenticate {
  if (second === undefined) return first;
  return async function authenticateBoth(req) {
    const result = await first(req);
    return result === true ? second(req) : result;
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

/**
 * Counts subscriptions over both transports (yoga's SSE and the WebSocket endpoint run the same envelop):
 * one that started streaming is `started` and `open` until its stream ends (the client left, the server closed),
 * and each event it sends counts in `events`. A subscribe that failed (no stream) counts nowhere.
 */
function useSubscriptionCounter(stats: SubgraphStats): Plugin {
  const counters = stats.subscriptions;
  return {
    onSubscribe: function countSubscription() {
      return {
        onSubscribeResult: function countSubscriptionStream({ result }) {
          if (!isAsyncIterable(result)) return;
          counters.started += 1;
          counters.open += 1;
          return {
            onNext: function countEvent() {
              counters.events += 1;
            },
            onEnd: function countSubscriptionEnd() {
              counters.open -= 1;
            },
          };
        },
      };
    },
  };
}
