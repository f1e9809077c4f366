// Wires the section cache of a router process: its store (memory, Redis), the live rules and purges, and who the viewer is.
import type { Tracer } from '@opentelemetry/api';
import type { Config } from '../config/schema.js';
import { CacheRuleBook } from '../cache/cache-hints.js';
import { PurgeIndex, type Purge } from '../cache/purge-index.js';
import { createSectionStore, type SectionStore } from '../cache/section-store.js';
import { entityTag, subgraphTag, typeTag, withinSubgraph } from '../cache/tags.js';
import type { RouterSectionCache } from '../gateway/graph-sources.js';
import type { ReturnedEntity } from '../gateway/plan/section-cache.js';
import type { Database } from '../registry/database.js';
import { listCacheRules, listPurgesSince, PURGE_HORIZON_SECONDS, recordPurges, trimPurges, type PurgeRecord } from '../registry/cache-store.js';
import { principalOf } from '../request/request-state.js';
import type { Logger } from '../telemetry/logger.js';
import type { RouterMetrics } from '../telemetry/metrics.js';

/**
 * How often each router deletes the purges past the horizon from the registry, in ms: one indexed
 * delete, off the request path. Every router does it (no leader to elect: the delete is idempotent and
 * wakes no router), often enough that a fleet whose routers restart within the hour still trims.
 */
const PURGE_TRIM_EVERY_MS = 10 * 60_000;

export interface RouterSectionCacheHandle {
  readonly shared: RouterSectionCache;
  /** Reloads what a registry change topic names (`cache_rules`, `cache_purges`); false for other topics. */
  onRegistryChange(topic: string): Promise<boolean>;
  close(): Promise<void>;
}

export interface SectionCacheSetup {
  config: Config;
  metrics: RouterMetrics;
  logger: Logger;
  /** Whether subgraph calls carry a token made for the user (then parts without a scope are private). */
  perUserTokens: boolean;
  /** Tracing on: spans for parts the cache answered. */
  tracer?: Tracer;
  /** The registry: rules and purges are read from it, mutations' purges recorded in it. Absent: a supergraph file. */
  database?: Database;
}

/**
 * Who the viewer is comes from the request state (its principal). One store per process (survives graph swaps; keys carry the graph's hash). Purges reach it three
 * ways: a mutation's own (applied at once, before its answer), the registry feed (every router within
 * its poll), and the sequence check on read (a copy fetched before a purge is never served).
 */
export async function startSectionCache(setup: SectionCacheSetup): Promise<RouterSectionCacheHandle> {
  const { config, metrics, logger } = setup;
  const purges = new PurgeIndex();
  const rules = new CacheRuleBook();
  let redisWarned = false;
  const cacheRequestCounters = new Map<string, { inc(value: number): void }>();
  const store: SectionStore = createSectionStore({
    maxBytes: config.cacheMaxBytes,
    redis: config.redisUrl ? { url: config.redisUrl, prefix: config.cacheRedisPrefix } : undefined,
    onError(backend, error) {
      metrics.cacheErrors.inc({ backend });
      if (!redisWarned) logger.warn({ err: error, backend }, 'section cache: backend failed; the cache steps aside and subgraphs are called');
      redisWarned = true;
    },
  });
  metrics.watchSectionCache(() => store.bytes);
  // A read while the client still connects would count as a Redis failure: wait for it as the rate limiter does (2 s at most).
  if (config.redisUrl && !(await store.redisReady())) logger.warn('section cache: Redis does not answer; parts are cached in this process until it does');
  const database = setup.database;
  let localSeq = 0;
  // No router reads a purge past the horizon: the registry deletes them (migration 009), stopped by close().
  const trimmer = database && trimPurgesEvery(database, PURGE_TRIM_EVERY_MS, function onTrimFailed(error) {
    metrics.cacheErrors.inc({ backend: 'registry' });
    logger.warn({ err: error }, 'section cache: purges past the horizon could not be deleted; trying again later');
  });

  const shared: RouterSectionCache = {
    store,
    purges,
    rules,
    defaultStaleMs: config.cacheStaleSeconds * 1000,
    tracer: setup.tracer,
    viewerOf(context) {
      const principal = principalOf(context);
      if (!principal) return { id: undefined, perUserToken: false };
      const id = principal.clientId && principal.clientId !== principal.subject ? `${principal.subject}@${principal.clientId}` : principal.subject;
      return { id, perUserToken: setup.perUserTokens };
    },
    onResult(subgraph, type, result, count) {
      // The labelled child once per label set: prom-client hashes the labels object on every inc().
      const labels = `${subgraph}\u0000${type}\u0000${result}`;
      let counter = cacheRequestCounters.get(labels);
      if (!counter) cacheRequestCounters.set(labels, (counter = metrics.cacheRequests.labels({ subgraph, type, result })));
      counter.inc(count);
      if (result === 'stale') metrics.staleSections.inc({ subgraph }, count);
    },
    async purgeEntities(entities: ReturnedEntity[]) {
      const tagsOf = (entity: ReturnedEntity) => [entityTag(entity.typeName, entity.key)];
      if (!database) {
        // No registry (a supergraph file): the purge is this process's own.
        purges.apply(entities.map((entity) => ({ seq: (localSeq = Math.max(localSeq, purges.latestSeq) + 1), tags: tagsOf(entity) })));
        return;
      }
      try {
        const seqs = await recordPurges(
          database,
          entities.map((entity) => ({ typeName: entity.typeName, entityKey: entity.key })),
        );
        purges.apply(entities.map((entity, index) => ({ seq: seqs[index], tags: tagsOf(entity) })));
      } catch (error) {
        // The mutation happened: its answer stands. Its entities expire with their max age.
        metrics.cacheErrors.inc({ backend: 'registry' });
        logger.error({ err: error }, 'section cache: the purge of the entities a mutation returned could not be recorded');
      }
    },
  };

  /** Purges applied, oldest first, with when they were made: past the horizon they are forgotten (no part that old lives). */
  const applied: { seq: number; at: number }[] = [];
  async function reloadPurges(db: Database): Promise<void> {
    const records = await listPurgesSince(db, purges.latestSeq, { maxAgeSeconds: PURGE_HORIZON_SECONDS });
    purges.apply(records.map(purgeOf));
    for (const record of records) applied.push({ seq: record.seq, at: record.purgedAt.getTime() });
    const horizon = Date.now() - PURGE_HORIZON_SECONDS * 1000;
    let old = 0;
    while (old < applied.length && applied[old].at < horizon) old += 1;
    if (old > 0) {
      purges.forgetBefore(applied[old - 1].seq);
      applied.splice(0, old);
    }
  }

  return {
    shared,
    async onRegistryChange(topic) {
      if (!database) return false;
      if (topic === 'cache_rules') rules.replace(await listCacheRules(database));
      else if (topic === 'cache_purges') await reloadPurges(database);
      else return false;
      return true;
    },
    async close() {
      await trimmer?.stop();
      await store.close();
    },
  };
}

/**
 * Deletes the registry's purges older than PURGE_HORIZON_SECONDS every `everyMs` (a timer that keeps
 * no process alive). `stop` clears the timer and waits for a delete in flight, so the database can be
 * closed after it. A failed delete is reported and tried again at the next tick.
 */
function trimPurgesEvery(db: Database, everyMs: number, onError: (error: unknown) => void): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  const timer = setInterval(function trimOldPurges() {
    running ??= trimPurges(db, PURGE_HORIZON_SECONDS)
      .then(() => undefined, onError)
      .finally(() => (running = undefined));
  }, everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

/** A purge's tag: the entity or type it names, narrowed to its subgraph when it names one too. */
function purgeOf(record: PurgeRecord): Purge {
  if (record.all) return { seq: record.seq, tags: 'all' };
  const named = record.typeName ? (record.entityKey ? entityTag(record.typeName, JSON.parse(record.entityKey) as Record<string, unknown>) : typeTag(record.typeName)) : undefined;
  const subgraph = record.subgraph ? subgraphTag(record.subgraph) : undefined;
  const tag = subgraph && named ? withinSubgraph(subgraph, named) : (subgraph ?? named);
  return { seq: record.seq, tags: tag ? [tag] : 'all' };
}
