// The router's configuration schema: every setting, its default and its unit, validated once at start.
import { z } from 'zod';

const port = z.coerce.number().int().min(0).max(65535);
const positiveMs = z.coerce.number().int().positive();
const booleanLike = z.union([z.boolean(), z.enum(['true', 'false', '1', '0', 'yes', 'no']).transform((v) => v === 'true' || v === '1' || v === 'yes')]);

export const configSchema = z
  .object({
    /** HTTP port of the router (0 picks a free one). Default 4000. */
    port: port.default(4000),
    /** Interface to bind. Default 127.0.0.1; containers set 0.0.0.0. */
    host: z.string().min(1).default('127.0.0.1'),
    /** PostgreSQL connection string. Unset: the embedded PGlite database in `dataDir`. */
    databaseUrl: z
      .string()
      .refine((v) => /^postgres(ql)?:\/\//.test(v), 'must be a postgres:// or postgresql:// URL')
      .optional(),
    /** Folder of the embedded database and local state. Default `.switchyard`. */
    dataDir: z.string().min(1).default('.switchyard'),
    /** `production` turns off GraphiQL, introspection and field suggestions. */
    nodeEnv: z.enum(['development', 'production', 'test']).default('development'),
    /** pino log level. Default `info`. */
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /** Serve this supergraph file (composed elsewhere) instead of composing the registry. Reloaded on change. */
    supergraphFile: z.string().min(1).optional(),
    /** Serve GraphiQL on GET /graphql from a browser. Default: on unless production. */
    graphiql: booleanLike.optional(),
    /** How often the registry's change versions are re-checked, in ms (LISTEN/NOTIFY makes it faster on PostgreSQL). Default 250. */
    registryPollMs: positiveMs.default(250),
    /** Progressive-override labels switched on, comma-separated (`percent(x)` labels need none). Default: none. */
    overrideLabels: z
      .union([z.string(), z.array(z.string())])
      .transform((v) => (Array.isArray(v) ? v : v.split(',')).map((s) => s.trim()).filter(Boolean))
      .default([]),
    /**
     * The aggregation resilience layer: request deadline, completeness, retries, hedging, breakers,
     * fallbacks. Default on; off leaves each subgraph call with its timeout only (benchmarks compare both).
     */
    resilience: booleanLike.default(true),
    /** Request deadline when no policy sets one, in ms: every subgraph call of a request must end within it. Default 2000. */
    defaultDeadlineMs: positiveMs.default(2_000),
    /** Default timeout of one attempt to a subgraph, in ms, when its route metadata sets none (the deadline usually cuts sooner). Default 10000. */
    subgraphTimeoutMs: positiveMs.default(10_000),
  })
  .strict();

export type ConfigInput = z.input<typeof configSchema>;
type ParsedConfig = z.output<typeof configSchema>;
export type Config = Readonly<Omit<ParsedConfig, 'graphiql'> & { graphiql: boolean }>;
