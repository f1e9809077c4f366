// The identity provider's keys from its JWKS URL: fetched by jose, kept fresh on our clock, with a stale-if-error fallback during outages.
import { createRemoteJWKSet, customFetch, errors, type FetchImplementation, type FlattenedJWSInput, type JWSHeaderParameters } from 'jose';
import { AuthConfigError } from './auth-result.js';
import { ASYMMETRIC_ALGORITHMS, refuseHmacWithPublicKeys, type KeyOnly } from './key-sources.js';
import { isTokenKeyError, KeySourceUnavailableError } from './verify-token.js';

/** Keys fetched from a JWKS URL (the identity provider's), cached and refreshed by jose. */
export interface JwksKeySource {
  kind: 'jwks';
  url: string;
  /** Timeout of one JWKS fetch, in ms. Default 3000. */
  timeoutMs?: number;
  /**
   * Least time between two fetches triggered by an unknown `kid`, in ms. Default 30 000. Bounds what
   * tokens with made-up `kid`s can make us send to the identity provider: at most one fetch per interval.
   */
  cooldownMs?: number;
  /** Age after which the cached JWKS is fetched again before use, in ms. Default 600 000 (10 min). */
  cacheMaxAgeMs?: number;
  /**
   * When a refetch fails (network, timeout, non-200, bad JSON), keep verifying with the last JWKS
   * fetched for up to this long past `cacheMaxAgeMs`, in ms, retrying the fetch at most once per
   * `cooldownMs`. Default 600 000 (10 min); `0` answers AUTH_UNAVAILABLE as soon as a refetch fails.
   * An identity-provider blip then does not turn every request into a 503, while a key the provider
   * removed stays trusted for at most `cacheMaxAgeMs + staleIfErrorMs`.
   */
  staleIfErrorMs?: number;
  /** Replaces global fetch (tests, a proxy dispatcher). */
  fetch?: FetchImplementation;
  /** The clock every duration above is measured on, in ms. Default `Date.now` (tests move a fake one). */
  now?: () => number;
}

/**
 * A jose remote JWKS with a stale-if-error fallback. jose fetches (one fetch shared by concurrent
 * callers, `timeoutMs` each) and matches keys; when to fetch is decided here, on `now`:
 * 1. The JWKS is fetched on first use and again when it is older than `cacheMaxAgeMs`; a `kid` it
 *    does not know triggers one refetch, unless the last fetch is younger than `cooldownMs`.
 * 2. A failed fetch (network error, timeout, non-200, not a JWKS) is a source failure. If a JWKS was
 *    fetched within `cacheMaxAgeMs + staleIfErrorMs`, its keys answer instead, and for the next
 *    `cooldownMs` they answer without trying the network again, so an outage costs one timeout per
 *    interval, not one per request.
 * 3. With no usable copy the failure becomes KeySourceUnavailableError → AUTH_UNAVAILABLE.
 */
export function jwksVerifier(source: JwksKeySource, algorithms: readonly string[] | undefined): KeyOnly {
  refuseHmacWithPublicKeys(algorithms, 'a JWKS');
  let url: URL;
  try {
    url = new URL(source.url);
  } catch {
    throw new AuthConfigError(`auth JWKS URL: not a URL: ${source.url}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new AuthConfigError('auth JWKS URL: must be http or https');
  const timeoutMs = source.timeoutMs ?? 3_000;
  const cooldownMs = source.cooldownMs ?? 30_000;
  const cacheMaxAgeMs = source.cacheMaxAgeMs ?? 600_000;
  const staleIfErrorMs = source.staleIfErrorMs ?? 600_000;
  const now = source.now ?? Date.now;
  for (const [name, value] of Object.entries({ timeoutMs, cooldownMs, cacheMaxAgeMs, staleIfErrorMs })) {
    if (!Number.isInteger(value) || value < 0) throw new AuthConfigError(`auth JWKS ${name}: must be a whole number of milliseconds, zero or more`);
  }
  // jose's own clock never says stale or cool: it fetches when told (`reload`) and on first use only.
  const remote = createRemoteJWKSet(url, {
    timeoutDuration: timeoutMs,
    cooldownDuration: Number.POSITIVE_INFINITY,
    cacheMaxAge: Number.POSITIVE_INFINITY,
    ...(source.fetch ? { [customFetch]: source.fetch } : {}),
  });
  /** When the JWKS jose holds was fetched, on `now` (none yet: −∞). */
  let fetchedAt = Number.NEGATIVE_INFINITY;
  let failedAt = Number.NEGATIVE_INFINITY;

  async function refetch(): Promise<void> {
    await remote.reload();
    fetchedAt = now();
  }

  /** The last JWKS fetched, while it may still stand in for a failing source. */
  function staleKeys() {
    if (staleIfErrorMs <= 0 || fetchedAt === Number.NEGATIVE_INFINITY) return undefined;
    return now() - fetchedAt > cacheMaxAgeMs + staleIfErrorMs ? undefined : remote;
  }

  async function currentKey(header: JWSHeaderParameters, token: FlattenedJWSInput) {
    if (now() - fetchedAt >= cacheMaxAgeMs) await refetch();
    try {
      return await remote(header, token);
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey) || now() - fetchedAt < cooldownMs) throw error;
      await refetch();
      return remote(header, token);
    }
  }

  async function resolveRemoteKey(header: JWSHeaderParameters, token: FlattenedJWSInput) {
    if (now() - failedAt < cooldownMs) {
      const fallback = staleKeys();
      if (fallback) return fallback(header, token);
    }
    try {
      return await currentKey(header, token);
    } catch (error) {
      if (isTokenKeyError(error)) throw error;
      failedAt = now();
      const fallback = staleKeys();
      if (fallback) return fallback(header, token);
      throw new KeySourceUnavailableError(error);
    }
  }
  return { algorithms: algorithms ?? ASYMMETRIC_ALGORITHMS, key: resolveRemoteKey };
}
