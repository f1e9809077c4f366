// The cache in front of the per-subgraph token sources (subgraph-tokens.ts), and the one definition of the token holder it shares tokens by.
import { createHash } from 'node:crypto';
import type { Principal } from './authentication/principal.js';
import { tokenForFrom, type IssuedToken, type SubgraphTokenSource } from './subgraph-tokens.js';

export interface TokenCacheOptions {
  /** A cached token is replaced this long before it expires, in ms. Default 10 000. */
  refreshBeforeExpiryMs?: number;
  /** Most tokens kept; beyond it expired entries go first, then the least recently used. Default 10 000. */
  maxEntries?: number;
  /** Clock, ms since the epoch. Default `Date.now`. */
  now?: () => number;
}

export interface TokenCacheStats {
  /** Calls answered from the cache. */
  hits: number;
  /** Calls that started an exchange (or a mint). */
  misses: number;
  /** Calls that joined an exchange already in flight for the same key. */
  shared: number;
  /** Entries dropped to stay under `maxEntries`. */
  evictions: number;
  /** Entries held now. */
  size: number;
}

export interface CachedTokenSource extends SubgraphTokenSource {
  /** A snapshot of the counters, for metrics. */
  stats(): TokenCacheStats;
  clear(): void;
}

interface CacheEntry {
  readonly issued: IssuedToken;
  /** Reuse until then (ms since the epoch). */
  readonly refreshAt: number;
}

/** Waits for `promise` unless `signal` aborts first; the shared work itself is never cancelled by one waiter. */
function raceSignal<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Each principal's user token hash, made once (the exchange's cache key, `perUserToken`). */
const userTokenHashes = new WeakMap<Principal, string>();

function userTokenHash(principal: Principal): string {
  let hash = userTokenHashes.get(principal);
  if (hash === undefined) userTokenHashes.set(principal, (hash = createHash('sha256').update(principal.token).digest('base64url')));
  return hash;
}

/** Each principal's key, made once: a request that calls five subgraphs, or an event group, asks for it many times. */
const holderKeys = new WeakMap<Principal, string>();

/**
 * The token holder: who a subgraph token is made for, as one key. It is what a subgraph token says
 * of the caller (subject, scopes, client; decision 004), so callers with the same key get
 * interchangeable subgraph tokens, and what they may share. The one definition of it, read by the
 * token cache (below), the upstream hub (a connection and its subscriptions per holder) and the
 * event groups of subscriptions (one completion of each event per holder). Empty for no caller.
 */
export function tokenHolderKey(principal: Principal | undefined): string {
  if (!principal) return '';
  let key = holderKeys.get(principal);
  if (key === undefined) {
    key = JSON.stringify([principal.subject, [...principal.scopes].sort(), principal.clientId ?? null]);
    holderKeys.set(principal, key);
  }
  return key;
}

/**
 * Caches issued tokens per (token holder, audience).
 *
 * 1. The key is the caller's `tokenHolderKey` plus the audience: two user tokens of one holder (the
 *    next login, another tab) share the subgraph token. Where the source's tokens depend on the user
 *    token itself (`perUserToken`: an exchange), its hash joins the key, so each user token has its
 *    own; raw tokens are never map keys. Anonymous requests share one key per audience.
 * 2. A token is reused until `refreshBeforeExpiryMs` before its expiry, capped by the user token's
 *    `exp`: the caller's own, so a holder's token that ends sooner gets a token of its own rather
 *    than one used past its end; a token already inside that window when issued is used once and
 *    not stored.
 * 3. One issue in flight per key: concurrent callers share its promise. A caller's `signal` only ends
 *    its own wait. Failures are not stored, so the next call tries again.
 * 4. At `maxEntries`, expired entries are swept, then the least recently used go.
 */
export function withTokenCache(source: SubgraphTokenSource, options: TokenCacheOptions = {}): CachedTokenSource {
  const refreshBeforeExpiryMs = options.refreshBeforeExpiryMs ?? 10_000;
  const maxEntries = options.maxEntries ?? 10_000;
  const now = options.now ?? Date.now;
  if (!(maxEntries >= 1)) throw new TypeError('maxEntries must be at least 1');
  const entries = new Map<string, CacheEntry>();
  const inFlight = new Map<string, Promise<IssuedToken>>();
  const counters = { hits: 0, misses: 0, shared: 0, evictions: 0 };

  function keyOf(principal: Principal | undefined, audience: string): string {
    if (!principal) return `anonymous\n${audience}`;
    return source.perUserToken ? `${tokenHolderKey(principal)}\n${userTokenHash(principal)}\n${audience}` : `${tokenHolderKey(principal)}\n${audience}`;
  }

  function store(key: string, entry: CacheEntry): void {
    if (entries.size >= maxEntries) {
      const at = now();
      for (const [k, e] of entries) if (e.refreshAt <= at) entries.delete(k);
      for (const k of entries.keys()) {
        if (entries.size < maxEntries) break;
        entries.delete(k);
        counters.evictions++;
      }
    }
    entries.set(key, entry);
  }

  async function issue(principal: Principal | undefined, audience: string, signal?: AbortSignal): Promise<IssuedToken> {
    signal?.throwIfAborted();
    const key = keyOf(principal, audience);
    const cached = entries.get(key);
    const userExpiry = principal ? principal.expiresAt.getTime() : Number.POSITIVE_INFINITY;
    if (cached) {
      if (now() < Math.min(cached.refreshAt, userExpiry - refreshBeforeExpiryMs)) {
        counters.hits++;
        // Least recently used goes first: move this one to the end.
        entries.delete(key);
        entries.set(key, cached);
        return cached.issued;
      }
      // Stale, or fresh for the holder's other tokens but not for this one (it ends sooner): issued anew.
      if (now() >= cached.refreshAt) entries.delete(key);
    }
    const pending = inFlight.get(key);
    if (pending) {
      counters.shared++;
      return raceSignal(pending, signal);
    }
    counters.misses++;
    const flight: Promise<IssuedToken> = Promise.resolve()
      .then(() => source.issue(principal, audience))
      .then((issued) => {
        const refreshAt = Math.min(issued.expiresAt, userExpiry) - refreshBeforeExpiryMs;
        if (refreshAt > now()) store(key, { issued, refreshAt });
        return issued;
      })
      .finally(() => {
        if (inFlight.get(key) === flight) inFlight.delete(key);
      });
    // Every waiter may have gone (aborted) by the time it fails: the rejection is theirs, not unhandled.
    flight.catch(() => {});
    inFlight.set(key, flight);
    return raceSignal(flight, signal);
  }

  return {
    issue,
    tokenFor: tokenForFrom(issue),
    stats: () => ({ ...counters, size: entries.size }),
    clear() {
      entries.clear();
    },
  };
}
