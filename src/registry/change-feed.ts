// Watches the registry's change versions: LISTEN/NOTIFY on PostgreSQL, polling as the safety net (and on the embedded database).
import { configDefaults } from '../config/schema.js';
import type { Database } from './database.js';

const CHANGES_CHANNEL = 'switchyard_changes';

export interface ChangeFeedOptions {
  /** Re-check interval when NOTIFY is not available (embedded database), in ms. Default: the config's `registryPollMs`. */
  pollMs?: number;
  /** Re-check interval on PostgreSQL, where NOTIFY carries changes and polling is only a safety net, in ms. Default 5000. */
  safetyNetMs?: number;
  /** Told about a failed check or a lost LISTEN connection; the feed keeps going. */
  onError?: (error: Error) => void;
}

export interface ChangeFeed {
  /** Checks now (after a local write, say) instead of waiting for the next tick. */
  check(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The topics of `registry_changes`: one per live table, each bumped by a trigger its migration adds
 * (schema/db/*.sql). A router reloads each one into memory when its version moves. The feed still
 * passes on any topic it reads, so a router meets the topic of a newer migration without failing.
 */
const REGISTRY_TOPICS = ['subgraphs', 'policies', 'signing_keys', 'permissions', 'trusted_documents', 'cache_rules', 'cache_purges', 'cors'] as const;

export type RegistryTopic = (typeof REGISTRY_TOPICS)[number];

const KNOWN_TOPICS: ReadonlySet<string> = new Set(REGISTRY_TOPICS);

/** Whether this version of the router knows the topic. */
export function isRegistryTopic(topic: string): topic is RegistryTopic {
  return KNOWN_TOPICS.has(topic);
}

export type ChangeHandler = (topic: string, version: number) => Promise<void> | void;

/**
 * Calls `onChange(topic, version)` once for every topic at start and again whenever the topic's
 * version moves.
 *
 * 1. A check reads all `registry_changes` rows (one tiny query) and compares with the last versions seen.
 * 2. Checks run one at a time; a check asked for while one runs is folded into one more run after it.
 * 3. Handlers of one check run in order and are awaited, so a slow reload is never overlapped by the
 *    next; a handler that throws is reported and retried at the next version change or tick.
 * 4. On PostgreSQL a NOTIFY on `switchyard_changes` triggers a check at once; a lost LISTEN connection
 *    is re-opened with backoff while polling continues at the fast rate.
 */
export async function watchChanges(db: Database, onChange: ChangeHandler, options: ChangeFeedOptions = {}): Promise<ChangeFeed> {
  const pollMs = options.pollMs ?? configDefaults.registryPollMs;
  const safetyNetMs = options.safetyNetMs ?? 5_000;
  const seen = new Map<string, number>();
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let unlisten: (() => Promise<void>) | undefined;
  let listening = false;

  async function runCheck(): Promise<void> {
    const { rows } = await db.query<{ topic: string; version: string }>('select topic, version from registry_changes order by topic');
    for (const row of rows) {
      const version = Number(row.version);
      if (seen.get(row.topic) === version) continue;
      try {
        await onChange(row.topic, version);
        seen.set(row.topic, version);
      } catch (error) {
        options.onError?.(error as Error);
      }
    }
  }

  function check(): Promise<void> {
    if (stopped) return Promise.resolve();
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      try {
        do {
          again = false;
          await runCheck().catch((error: Error) => options.onError?.(error));
        } while (again && !stopped);
      } finally {
        running = undefined;
      }
    })();
    return running;
  }

  function schedule(): void {
    if (stopped) return;
    const delay = db.kind === 'postgres' && listening ? safetyNetMs : pollMs;
    timer = setTimeout(function tick() {
      void check().finally(schedule);
    }, delay);
    timer.unref();
  }

  async function startListening(attempt = 0): Promise<void> {
    if (stopped || db.kind !== 'postgres') return;
    try {
      unlisten = await db.listen(CHANGES_CHANNEL, () => void check(), function onListenError(error) {
        listening = false;
        options.onError?.(error);
        void unlisten?.();
        unlisten = undefined;
        const retry = setTimeout(() => void startListening(attempt + 1), Math.min(30_000, 500 * 2 ** attempt));
        retry.unref();
      });
      listening = true;
      // A change may have landed between the last check and LISTEN taking effect.
      void check();
    } catch (error) {
      options.onError?.(error as Error);
      const retry = setTimeout(() => void startListening(attempt + 1), Math.min(30_000, 500 * 2 ** attempt));
      retry.unref();
    }
  }

  await check();
  await startListening();
  schedule();

  return {
    check,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
      await unlisten?.();
    },
  };
}
