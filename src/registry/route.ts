// Route metadata of a subgraph (the `route` column): per-subgraph settings that ops change without a deploy.
import { z } from 'zod';

/**
 * Every key is optional; the router fills defaults from its config. Later capabilities (breaker,
 * retries, header rules, cache, fallback) add their keys here, so there is one accessor to read.
 */
export const routeSchema = z
  .object({
    /** Timeout of one call to this subgraph, in ms. Default: the router's `subgraphTimeoutMs`. */
    timeoutMs: z.number().int().positive().optional(),
  })
  .strict();

export type RouteMetadata = z.infer<typeof routeSchema>;

/**
 * Reads a stored route. Keys this version does not know are dropped and a malformed value reads as
 * empty, so one bad row never stops a reload (writes are validated strictly by the store).
 */
export function readRoute(value: unknown): RouteMetadata {
  const parsed = routeSchema.strip().safeParse(value ?? {});
  return parsed.success ? parsed.data : {};
}
