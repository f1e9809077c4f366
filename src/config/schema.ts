// The router's configuration schema: every setting, its default and its unit, validated once at start.
import { z } from 'zod';
import { corsOriginProblem } from './cors-origins.js';

const port = z.coerce.number().int().min(0).max(65535);
const positiveMs = z.coerce.number().int().positive();
const TRUE_WORDS = ['true', '1', 'on', 'yes'];
const FALSE_WORDS = ['false', '0', 'off', 'no'];
/** A switch: a boolean, or (from the environment) true/false, 1/0, on/off, yes/no in any case. */
const booleanLike = z.union([z.boolean(), z.string()]).transform((value, context) => {
  if (typeof value === 'boolean') return value;
  const word = value.trim().toLowerCase();
  if (TRUE_WORDS.includes(word)) return true;
  if (FALSE_WORDS.includes(word)) return false;
  context.addIssue({ code: 'custom', message: 'must be true/false, 1/0, on/off or yes/no' });
  return z.NEVER;
});

/** More router processes than this on one machine is a typo, not a deployment. */
export const MAX_WORKERS = 256;

export const configSchema = z
  .object({
    /** HTTP port of the router (0 picks a free one). Default 4000. */
    port: port.default(4000),
    /** Interface to bind. Default 127.0.0.1; containers set 0.0.0.0. */
    host: z.string().min(1).default('127.0.0.1'),
    /**
     * Router processes of `switchyard serve` sharing its port (decision 012): an integer, or `auto` for
     * one per core the process may use. Default 1: one process, no primary. Several need a database
     * they can share (`databaseUrl`) or a supergraph file: the embedded database lives in one process.
     */
    workers: z
      .union([z.number(), z.string()])
      .transform((value, context) => {
        if (value === 'auto') return 'auto' as const;
        const n = Number(value);
        if (Number.isInteger(n) && n >= 1 && n <= MAX_WORKERS) return n;
        context.addIssue({ code: 'custom', message: `must be "auto" or an integer from 1 to ${MAX_WORKERS}` });
        return z.NEVER;
      })
      .default(1),
    /** PostgreSQL connection string. Unset: the embedded PGlite database in `dataDir`. */
    databaseUrl: z
      .string()
      .refine((v) => /^postgres(ql)?:\/\//.test(v), 'must be a postgres:// or postgresql:// URL')
      .optional(),
    /**
     * Redis shared by every router (`redis://` or `rediss://`): rate-limit buckets and the section cache
     * live there, so N routers give one budget and fetch a part once, not N times. Unset: each router
     * instance keeps its own. A Redis that does not answer never fails a request (the router falls back
     * to its own buckets and memory until Redis is back).
     */
    redisUrl: z
      .string()
      .refine((v) => /^rediss?:\/\/[^/]/.test(v), 'must be a redis:// or rediss:// URL')
      .optional(),
    /**
     * How long the router keeps an idle client connection open after its last answer, in ms (Node's
     * `keepAliveTimeout`). Default 65000: above the idle timeout of the load balancer in front (60 s on
     * AWS's ALB and nginx's upstream keep-alive), so the balancer, not the router, closes idle
     * connections; the other way round, a request the balancer sends on a connection the router is
     * closing fails with a 502. Node's own 5000 is below every balancer's. Answers advertise it
     * (`Keep-Alive: timeout=65`); Node 20 closes the connection a second later still.
     * docs/operations.md lists the values to match.
     */
    keepAliveTimeoutMs: positiveMs.default(65_000),
    /**
     * Longest a client may take to send a request's headers, in ms (Node's `headersTimeout`): a
     * client that sends them slower (a slow-loris attack) gets 408 and its connection is closed.
     * Counted from the request's first byte, not from the idle time before it (Node 18 and later), so
     * it need not exceed the keep-alive timeout; the default still does, as older advice asks. At most
     * `requestTimeoutMs` (Node refuses the pair otherwise). Default 66000.
     */
    headersTimeoutMs: positiveMs.default(66_000),
    /**
     * Longest a client may take to send a whole request, headers and body, in ms (Node's
     * `requestTimeout`): a slower client gets 408 and its connection is closed. It bounds receiving the
     * request only, never the answer: a streamed answer (`@defer`) or a subscription may last longer.
     * Default 300000 (Node's own).
     */
    requestTimeoutMs: positiveMs.default(300_000),
    /** Folder of the embedded database and local state. Default `.switchyard`. */
    dataDir: z.string().min(1).default('.switchyard'),
    /** `production` turns off GraphiQL and field suggestions, and introspection but for callers an `introspection` permission rule names (decision 036). */
    nodeEnv: z.enum(['development', 'production', 'test']).default('development'),
    /** pino log level. Default `info`. */
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /** Serve this supergraph file (composed elsewhere) instead of composing the registry. Reloaded on change. */
    supergraphFile: z.string().min(1).optional(),
    /** Serve GraphiQL on GET /graphql from a browser. Default: on unless production. */
    graphiql: booleanLike.optional(),
    /** Serve the ops page at GET /dashboard (live charts read from /metrics). Default: on unless production. */
    dashboard: booleanLike.optional(),
    /** How often the registry's change versions are re-checked, in ms (LISTEN/NOTIFY makes it faster on PostgreSQL). Default 250. */
    registryPollMs: positiveMs.default(250),
    /** `required`: no or bad token is 401. `optional`: anonymous requests reach what rules allow (a bad token is still 401). `off`: no authentication. Default `optional`. */
    authMode: z.enum(['required', 'optional', 'off']).default('optional'),
    /** JWKS of the identity provider that signs user tokens (cached, refetched on an unknown kid at most every 30 s). */
    jwksUrl: z
      .string()
      .url()
      .refine((v) => /^https?:\/\//i.test(v), 'must be an http:// or https:// URL')
      .optional(),
    /** A static public key (PEM, SPKI or X.509) verifying user tokens instead of a JWKS. */
    jwtPublicKey: z.string().min(1).optional(),
    /** Expected `iss` of user tokens. Unset: not checked. */
    jwtIssuer: z.string().min(1).optional(),
    /** Expected `aud` of user tokens. Unset: not checked. */
    jwtAudience: z.string().min(1).optional(),
    /** Accept tokens of the built-in development issuer (`switchyard token mint`). Default: on unless production. */
    devIssuer: booleanLike.optional(),
    /** RFC 8693 token endpoint that issues per-subgraph tokens. Unset: the router mints them with its own keys. */
    tokenExchangeUrl: z.string().url().optional(),
    tokenExchangeClientId: z.string().min(1).optional(),
    tokenExchangeClientSecret: z.string().min(1).optional(),
    /**
     * Send every subgraph a token made for it (minted or exchanged). Default on. Off while a subgraph
     * fleet cannot verify the router's tokens yet: subgraphs then get only the headers their route's
     * rules add (an API key, say). The bench also turns it off to measure its cost.
     */
    subgraphTokens: booleanLike.default(true),
    /**
     * Write an audit row per request (needs the database). Default on. Off for a graph whose requests
     * need no audit trail (public, anonymous data), or one whose trail another layer already keeps:
     * the database is spared a write per request. The bench also turns it off to measure its cost.
     */
    audit: booleanLike.default(true),
    /**
     * Days an audit row is kept (decision 030): the log is partitioned by UTC day and a day is dropped
     * whole once all of it is older than this, so a row lives this long and less than a day more.
     * Default 30; at most 3660 (a partition a day: longer trails belong in an archive).
     */
    auditRetentionDays: z.coerce.number().int().min(1).max(3660).default(30),
    /** Record every executed operation and its client in the operation registry (needs the database). Default on. */
    operationRegistry: booleanLike.default(true),
    /**
     * Days an operation stays in the registry after it was last seen, and daily counts are kept
     * (decision 030). Trusted documents are never pruned. Default 30.
     */
    operationRetentionDays: z.coerce.number().int().min(1).max(3660).default(30),
    /**
     * New documents the operation registry records per client per UTC hour (a new hash, client name and
     * version; counted by when each was first seen, across every router). Beyond it they are served but
     * not recorded, and counted in `switchyard_operations_unrecorded_total`. A release of a client app
     * brings tens of new documents; free text sent by a script, without limit. Default 1000.
     */
    operationDiscoveryLimitPerHour: z.coerce.number().int().min(1).default(1_000),
    /**
     * New documents the operation registry records per UTC hour, all clients together: client names come
     * from headers a caller can make up, so this is what bounds the registry's growth. Default 10000.
     */
    operationDiscoveryTotalLimitPerHour: z.coerce.number().int().min(1).default(10_000),
    /**
     * Plans built before a published graph is swapped in: the most executed operations of the last day
     * in the operation registry, at most this many (decision 009). Default 500; 0 turns warming off.
     */
    warmOperations: z.coerce.number().int().min(0).max(100_000).default(500),
    /**
     * Trusted documents (`switchyard operations publish`): `off` ignores document ids; `allow` runs a
     * registered document by `documentId` or `extensions.persistedQuery.sha256Hash`, and free text too;
     * `enforce` runs registered documents only. Default `off`, `allow` in production.
     */
    trustedDocuments: z.enum(['off', 'allow', 'enforce']).optional(),
    /** Lifetime of a per-subgraph token minted by the router, in seconds (never beyond the user token). Default 300. */
    subgraphTokenTtlSeconds: z.coerce.number().int().min(5).max(3600).default(300),
    /** Coordinates without any permission rule: `open` (allowed) or `closed` (denied). Default `open`. */
    authorizationDefault: z.enum(['open', 'closed']).default('open'),
    /** Largest accepted request body, in bytes (413 beyond). Default 1 MiB. */
    maxBodyBytes: positiveMs.default(1_048_576),
    /**
     * The CORS allow-list the router starts with (decision 037), comma-separated: exact origins
     * (`https://app.example.com`) or patterns (`https://*.example.com`, `http://localhost:*`, `*`), each
     * with the default methods (GET, POST), the request's headers, no credentials, no max age. The
     * registry's rules (`switchyard cors set`) are added to it live and win for the same entry. `none`:
     * no origin. Default `*` (any origin) in development and test, none in production.
     */
    corsOrigins: z
      .union([z.string(), z.array(z.string())])
      .transform((value, context) => {
        const list = (Array.isArray(value) ? value : value.trim() === 'none' ? [] : value.split(',')).map((s) => s.trim()).filter(Boolean);
        for (const origin of list) {
          const problem = corsOriginProblem(origin);
          if (problem) context.addIssue({ code: 'custom', message: problem });
        }
        return [...new Set(list)];
      })
      .optional(),
    /** Deepest selection nesting accepted. Default 12. */
    maxDepth: positiveMs.default(12),
    /** Most aliases in one document. Default 30. */
    maxAliases: positiveMs.default(30),
    /** Most directives in one document. Default 50. */
    maxDirectives: positiveMs.default(50),
    /** Most tokens in one document. Default 2000. */
    maxTokens: positiveMs.default(2_000),
    /** Deepest nesting of objects and arrays in a JSON request body (or a GET's JSON parameters): deeper is 400 before it is parsed. Default 64. */
    maxJsonDepth: positiveMs.default(64),
    /** Progressive-override labels switched on, comma-separated (`percent(x)` labels need none). Default: none. */
    overrideLabels: z
      .union([z.string(), z.array(z.string())])
      .transform((v) => (Array.isArray(v) ? v : v.split(',')).map((s) => s.trim()).filter(Boolean))
      .default([]),
    /**
     * The aggregation resilience layer: request deadline, completeness, retries, hedging, breakers,
     * fallbacks. Default on. Off when a service mesh in front of the subgraphs already retries and
     * breaks circuits (two layers would multiply the retries): each subgraph call keeps its timeout
     * only (answers still say whether they are complete). The bench compares both.
     */
    resilience: booleanLike.default(true),
    /**
     * Query plans (decision 007): queries and mutations run from a plan made once per document and
     * authorization decision. Default on. Off runs every operation by stitching: the way around a plan
     * that answers a schema wrongly until the planner is fixed (it also turns the section cache off);
     * the differential tests run both engines and compare them.
     */
    queryPlans: booleanLike.default(true),
    /**
     * How a planned answer is shaped from the subgraphs' merged answers (decision 013): `compiled`
     * (the default) walks them with the projection compiled once per document; `graphql-js` runs
     * graphql-js `execute` over them (the reference, slower); `verify` runs both, answers with
     * graphql-js's, and logs and counts every difference (`switchyard_projection_mismatches_total`).
     * The tests run `verify`.
     */
    answerProjection: z.enum(['compiled', 'graphql-js', 'verify']).default('compiled'),
    /**
     * When the body carries `extensions.completeness`: `partial` (the default) only on answers that
     * are not complete, `always` on every executed answer. The `Switchyard-Completed` header is
     * always set; a complete answer's body stays as small as the data.
     */
    completenessExtension: z.enum(['partial', 'always']).default('partial'),
    /**
     * The section cache (docs/caching.md): parts of planned queries whose `@cacheControl` hints or
     * `switchyard cache set` rules give a max age are kept and shared. Default on (it caches nothing
     * without hints). Off fetches every part every time and serves no stale copies: for a router
     * that must never answer from a copy whatever the hints say, or to rule the cache out while
     * looking into an answer that seems old. Tests and the bench run without it unless they test it.
     */
    sectionCache: booleanLike.default(true),
    /** Bytes of cached parts one router process keeps in memory (least recently used go first). Default 64 MiB. */
    cacheMaxBytes: z.coerce.number().int().min(0).default(64 * 1024 * 1024),
    /** How long an expired part is kept as the fallback for a failing subgraph, in seconds, where no rule says. Default 300. */
    cacheStaleSeconds: z.coerce.number().int().min(0).max(86_400).default(300),
    /** Prefix of the section cache's Redis keys (the graph's hash follows it). Default `switchyard:cache:`. */
    cacheRedisPrefix: z.string().min(1).default('switchyard:cache:'),
    /** Request deadline when no policy sets one, in ms: every subgraph call of a request must end within it. Default 2000. */
    defaultDeadlineMs: positiveMs.default(2_000),
    /** Budget of a query's deferred parts (`@defer`) when no policy sets one, in ms: the request's deadline bounds the first payload, this the rest. Default 10000. */
    deferDeadlineMs: positiveMs.default(10_000),
    /**
     * Most subscriptions open on this router at once, whatever their operation (the ceiling over the
     * policies' `maxSubscriptions`); over it a new subscription is refused with SUBSCRIPTION_LIMIT.
     * Default 20000. Queries and mutations never count.
     */
    maxSubscriptions: z.coerce.number().int().min(0).default(20_000),
    /** Heartbeat of client subscriptions, in ms: WebSocket pings (a client that misses two is closed), SSE comments, multipart `{}` parts. Default 12000 (5000 for multipart, as its protocol asks). */
    subscriptionHeartbeatMs: positiveMs.default(12_000),
    /** Default timeout of one attempt to a subgraph, in ms, when its route metadata sets none (the deadline usually cuts sooner). Default 10000. */
    subgraphTimeoutMs: positiveMs.default(10_000),
    /** OTLP/HTTP collector base URL (`/v1/traces` is appended). Set: spans are exported; unset: tracing is off and costs nothing. */
    otlpEndpoint: z.string().url().optional(),
    /** `service.name` of the router's spans. Default `switchyard`. */
    serviceName: z.string().min(1).default('switchyard'),
    /** Share of new traces recorded when tracing is on, 0..1 (a caller's sampling decision is followed). Default 1. */
    traceSampleRatio: z.coerce.number().min(0).max(1).default(1),
  })
  .strict();

export type ConfigInput = z.input<typeof configSchema>;
type ParsedConfig = z.output<typeof configSchema>;

/**
 * Every setting's default, read from the schema above (nothing set): a module that takes a setting as
 * an option falls back to this, so each default is written once, in the schema.
 */
export const configDefaults: Readonly<ParsedConfig> = Object.freeze(configSchema.parse({}));
/** The validated settings; `workers: 'auto'` is resolved to a number of processes by then. */
export type Config = Readonly<
  Omit<ParsedConfig, 'graphiql' | 'dashboard' | 'devIssuer' | 'trustedDocuments' | 'workers' | 'corsOrigins'> & {
    graphiql: boolean;
    dashboard: boolean;
    devIssuer: boolean;
    trustedDocuments: 'off' | 'allow' | 'enforce';
    workers: number;
    corsOrigins: readonly string[];
  }
>;
