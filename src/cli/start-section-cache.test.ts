// The section cache a router starts: it keeps the registry's purge log to the horizon it reads.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { useTestDatabase } from '../../test/helpers/database.js';
import { loadConfig } from '../config/load-config.js';
import type { Database } from '../registry/database.js';
import { PURGE_HORIZON_SECONDS, recordPurge } from '../registry/cache-store.js';
import { createLogger } from '../telemetry/logger.js';
import { createMetrics } from '../telemetry/metrics.js';
import { startSectionCache } from './start-section-cache.js';

describe('the section cache of a running router', () => {
  let db: Database;
  useTestDatabase((opened) => (db = opened));
  afterEach(() => {
    vi.useRealTimers();
  });

  async function purgeAged(seconds: number): Promise<number> {
    const seq = await recordPurge(db, { typeName: 'Product' });
    await db.query('update cache_purges set purged_at = now() - make_interval(secs => $2::double precision) where seq = $1', [seq, seconds]);
    return seq;
  }
  async function storedSeqs(): Promise<number[]> {
    const { rows } = await db.query<{ seq: string }>('select seq from cache_purges order by seq');
    return rows.map((row) => Number(row.seq));
  }

  it('deletes the purges past the horizon from the registry on a timer, and stops the timer when it closes', async () => {
    // Only the interval is faked: the database keeps its own timers.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const old = await purgeAged(PURGE_HORIZON_SECONDS + 3600);
    const recent = await purgeAged(PURGE_HORIZON_SECONDS - 3600);
    const config = loadConfig({ sectionCache: true, logLevel: 'silent' }, {});
    const cache = await startSectionCache({ config, metrics: createMetrics(), logger: createLogger({ level: 'silent' }), perUserTokens: false, database: db });
    expect(vi.getTimerCount()).toBe(1);
    vi.runOnlyPendingTimers(); // the trim's tick, the one interval there is
    // Closing waits for the delete in flight.
    await cache.close();
    expect(vi.getTimerCount()).toBe(0);
    const seqs = await storedSeqs();
    expect(seqs).not.toContain(old);
    expect(seqs).toContain(recent);
  });

  it('starts no timer without a registry (a supergraph file)', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const config = loadConfig({ sectionCache: true, logLevel: 'silent' }, {});
    const cache = await startSectionCache({ config, metrics: createMetrics(), logger: createLogger({ level: 'silent' }), perUserTokens: false });
    expect(vi.getTimerCount()).toBe(0);
    await cache.close();
  });
});
