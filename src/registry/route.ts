// Route metadata of a subgraph (the `route` column): per-subgraph settings that ops change without a deploy.
import { z } from 'zod';

const ms = z.number().int().positive();

/**
 * Every key is optional; the router fills the defaults documented here. Published with
 * `switchyard subgraph publish --route JSON` (or `--timeout-ms`) or `switchyard config apply`
 * (whose file schema embeds this one), read through `readRoute`.
 */
export const routeSchema = z
  .object({
    /** Timeout of one attempt to this subgraph, in ms. Default: the router's `subgraphTimeoutMs`. */
    timeoutMs: ms.optional(),
    /**
     * Largest share of a request's estimated cost this subgraph may take. Over it, only this
     * subgraph's sections are skipped (null with SUBGRAPH_COST_EXCEEDED). Default: no budget.
     */
    costBudget: z.number().int().positive().optional(),
    /**
     * Header rules for services that want another header than `Authorization: Bearer <subgraph token>`
     * or an API key: applied in order rename, drop, add (header names are case-insensitive).
     */
    headers: z
      .object({
        /** e.g. `{ "authorization": "x-subgraph-token" }`. */
        rename: z.record(z.string().min(1), z.string().min(1)),
        /** e.g. `["authorization"]` for a service that takes only an API key. */
        drop: z.array(z.string().min(1)),
        /** e.g. `{ "x-api-key": "..." }`. */
        add: z.record(z.string().min(1), z.string()),
      })
      .partial()
      .strict()
      .optional(),
    /** Circuit breaker over a rolling window of attempt outcomes. */
    breaker: z
      .object({
        /** Default true. */
        enabled: z.boolean(),
        /** Failure share that opens the circuit, 0..1. Default 0.5. */
        failureRatio: z.number().gt(0).lte(1),
        /** Slow-call share that opens the circuit, 0..1. Default 0.5. */
        slowCallRatio: z.number().gt(0).lte(1),
        /** A call slower than this, in ms, is slow; so is one cut by the request deadline after the subgraph's usual p95. Default: the subgraph's timeout. */
        slowCallMs: ms,
        /** Attempts in the window before the ratio counts. Default 20. */
        minRequests: z.number().int().positive(),
        /** Length of the rolling window, in ms. Default 10000. */
        windowMs: ms,
        /** How long the circuit stays open before a probe, in ms. Default 5000. */
        openMs: ms,
      })
      .partial()
      .strict()
      .optional(),
    /**
     * Identical queries in flight to this subgraph (same document, variables and headers, so the same
     * caller token) share one call. Default true; false for a subgraph whose queries have side effects.
     */
    deduplicate: z.boolean().optional(),
    /** Retries of queries on connection failures, 502/503/504 and timeouts, within a budget of about 10% extra calls. */
    retry: z
      .object({
        /** Default true. */
        enabled: z.boolean(),
        /** Retries after the first attempt. Default 2. */
        maxRetries: z.number().int().min(0).max(5),
      })
      .partial()
      .strict()
      .optional(),
    /** A backup call for queries slower than this subgraph's recent p95, within about 5% extra calls. */
    hedge: z
      .object({
        /** Default true. */
        enabled: z.boolean(),
        /** Never hedge sooner than this, in ms. Default 20. */
        floorMs: ms,
      })
      .partial()
      .strict()
      .optional(),
    /**
     * How the router subscribes to this subgraph (docs/subscriptions.md). Default: GraphQL over WebSocket
     * (`graphql-transport-ws`) at the subgraph's URL.
     */
    subscriptions: z
      .object({
        /** `ws`: GraphQL over WebSocket; `sse`: GraphQL over SSE (distinct connections). Default `ws`. */
        protocol: z.enum(['ws', 'sse']),
        /** Path (or absolute http(s)/ws(s) URL) of the subscription endpoint. Default: the subgraph's URL. */
        path: z.string().min(1),
        /** Reconnection after the subgraph drops a connection: attempts with exponential back-off and jitter. */
        reconnect: z
          .object({
            /** Attempts before the client gets SUBGRAPH_UNAVAILABLE. Default 5. */
            attempts: z.number().int().min(0).max(100),
            /** First wait, in ms, doubled each attempt. Default 250. */
            initialDelayMs: ms,
            /** Longest wait, in ms. Default 5000. */
            maxDelayMs: ms,
          })
          .partial()
          .strict(),
      })
      .partial()
      .strict()
      .optional(),
    /** Stale copies from the section cache stand in for this subgraph's parts while it fails (docs/caching.md). */
    fallback: z
      .object({
        /** Default true. */
        enabled: z.boolean(),
        /** Ignored since the section cache keeps stale copies (its `--stale-seconds`); accepted so older routes still read. */
        maxAgeMs: ms,
        /** Ignored, as maxAgeMs. */
        maxEntries: z.number().int().positive(),
      })
      .partial()
      .strict()
      .optional(),
  })
  .strict();

export type RouteMetadata = z.infer<typeof routeSchema>;

/** Validates route metadata from a user (CLI, API): every problem in one message, or the parsed value. */
export function parseRoute(value: unknown): { ok: true; route: RouteMetadata } | { ok: false; problems: string[] } {
  const parsed = routeSchema.safeParse(value);
  if (parsed.success) return { ok: true, route: parsed.data };
  return { ok: false, problems: parsed.error.issues.map((i) => `${i.path.join('.') || 'route'}: ${i.message}`) };
}

/**
 * Reads a stored route. A malformed value reads as empty, so one bad row never stops a reload
 * (writes are validated strictly by the store).
 */
export function readRoute(value: unknown): RouteMetadata {
  const parsed = routeSchema.safeParse(value ?? {});
  return parsed.success ? parsed.data : {};
}
