// Per-subgraph tokens (token swap): the router's local minter and the RFC 8693 token exchange client (the cache in front of either: subgraph-token-cache.ts).
import { randomUUID } from 'node:crypto';
import { decodeJwt, type JWTPayload } from 'jose';
import { configDefaults } from '../config/schema.js';
import type { Principal } from './authentication/principal.js';
import type { KeyRing } from './signing-keys.js';

const ROUTER_ISSUER = 'switchyard';
export const ROUTER_ACTOR = 'switchyard-router';
/** `sub` of tokens minted for requests without a user. */
const ANONYMOUS_SUBJECT = 'anonymous';

/** RFC 8693 §3 token type identifiers. */
const TOKEN_TYPE_JWT = 'urn:ietf:params:oauth:token-type:jwt';
export const TOKEN_TYPE_ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';
const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';

export interface IssuedToken {
  readonly token: string;
  /** When the token stops being valid, in ms since the epoch. */
  readonly expiresAt: number;
}

/**
 * Where the token for one subgraph call comes from. `audience` is the subgraph's name; `principal`
 * undefined means an anonymous request. `signal` abandons the wait (the work may go on for others).
 */
export interface SubgraphTokenSource {
  /**
   * Whether a token depends on the caller's own user token, beyond its holder (`tokenHolderKey`):
   * an RFC 8693 exchange sends the user token itself, and what comes back may carry any of its
   * claims (roles, `acr`...), so the cache shares it only with that same user token. The local minter
   * writes the holder alone (subject, scopes, client), so its tokens are the holder's. Default false.
   */
  readonly perUserToken?: boolean;
  /** The bearer token to send to subgraph `audience`. */
  tokenFor(principal: Principal | undefined, audience: string, signal?: AbortSignal): Promise<string>;
  /** The same, with its expiry (what a cache needs). */
  issue(principal: Principal | undefined, audience: string, signal?: AbortSignal): Promise<IssuedToken>;
}

/**
 * Codes the integrator maps into the error catalogue. A failure concerns one subgraph only: its
 * sections fail, the others are served.
 * - TOKEN_EXCHANGE_FAILED: the token endpoint refused (4xx, RFC 6749 §5.2 `error` in `oauthError`:
 *   `invalid_grant`, `invalid_target`, `unauthorized_client`, ...) or answered something unusable. Not retryable.
 * - TOKEN_EXCHANGE_UNAVAILABLE: unreachable, timed out, 429 or 5xx. Retryable.
 */
export type SubgraphTokenErrorCode = 'TOKEN_EXCHANGE_FAILED' | 'TOKEN_EXCHANGE_UNAVAILABLE';

export class SubgraphTokenError extends Error {
  readonly retryable: boolean;
  constructor(
    readonly code: SubgraphTokenErrorCode,
    /** The subgraph the token was for. */
    readonly audience: string,
    message: string,
    readonly details: { status?: number; oauthError?: string; cause?: unknown } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'SubgraphTokenError';
    this.retryable = code === 'TOKEN_EXCHANGE_UNAVAILABLE';
  }
}

/** A source's `tokenFor`, from its `issue`. */
export function tokenForFrom(issue: SubgraphTokenSource['issue']): SubgraphTokenSource['tokenFor'] {
  return async function tokenFor(principal, audience, signal) {
    return (await issue(principal, audience, signal)).token;
  };
}

export interface LocalMinterOptions {
  /** `iss` of minted tokens. Default `switchyard`; subgraphs check it. */
  issuer?: string;
  /** Lifetime of a minted token, in seconds. Default: the config's `subgraphTokenTtlSeconds` (decision 004); never beyond the user token's `exp`. */
  lifetimeSeconds?: number;
  /** `act.sub`, the party acting for the user (RFC 8693 §4.1). Default `switchyard-router`. */
  actor?: string;
  /** Clock, ms since the epoch. Default `Date.now`. */
  now?: () => number;
}

/**
 * Mints per-subgraph tokens with the KeyRing's active `subgraph-token` key (no I/O; one synchronous
 * signature, about 50 µs for ES256 on the bench machine: see jws-signer.ts).
 * Claims: `iss`, `sub` (the user, or `anonymous`), `aud` (the subgraph: RFC 7519 §4.1.3, so a token
 * stolen from one subgraph is refused by every other), `scope` (the user's, space-separated, RFC 8693
 * §4.2; left out when empty), `act: { sub: actor }` (RFC 8693 §4.1: the router acts for the user),
 * `client_id` (RFC 8693 §4.3) when the user token had one, `iat`, `exp`, `jti`. Header: `kid` of the
 * key and `typ: at+jwt` (RFC 9068 §2.1, explicit typing per RFC 8725 §3.11).
 */
export function createLocalMinter(keyRing: KeyRing, options: LocalMinterOptions = {}): SubgraphTokenSource {
  const issuer = options.issuer ?? ROUTER_ISSUER;
  const lifetimeSeconds = options.lifetimeSeconds ?? configDefaults.subgraphTokenTtlSeconds;
  const actor = options.actor ?? ROUTER_ACTOR;
  const now = options.now ?? Date.now;
  if (!Number.isFinite(lifetimeSeconds) || lifetimeSeconds <= 0) throw new TypeError('lifetimeSeconds must be positive');

  async function issue(principal: Principal | undefined, audience: string, signal?: AbortSignal): Promise<IssuedToken> {
    signal?.throwIfAborted();
    const key = keyRing.activeKey('subgraph-token');
    const iat = Math.floor(now() / 1000);
    let exp = iat + Math.ceil(lifetimeSeconds);
    // Never outlive the user's token: the subgraph must not accept the user after the router would not.
    if (principal) exp = Math.min(exp, Math.floor(principal.expiresAt.getTime() / 1000));
    const claims: JWTPayload = { iss: issuer, sub: principal?.subject ?? ANONYMOUS_SUBJECT, aud: audience, iat, exp, jti: randomUUID(), act: { sub: actor } };
    if (principal?.scopes.length) claims.scope = principal.scopes.join(' ');
    if (principal?.clientId) claims.client_id = principal.clientId;
    const token = key.signJwt(claims);
    return { token, expiresAt: exp * 1000 };
  }
  return { issue, tokenFor: tokenForFrom(issue) };
}

export interface TokenExchangeClientOptions {
  /** The token endpoint (RFC 8693 §2.1). */
  url: string;
  /** The router's client id at the token endpoint. With `clientSecret`: HTTP Basic (RFC 6749 §2.3.1); alone: `client_id` in the form. */
  clientId?: string;
  clientSecret?: string;
  /** Timeout of one exchange, in ms. Default 2000. */
  timeoutMs?: number;
  /** `subject_token_type`. Default `urn:ietf:params:oauth:token-type:jwt`. */
  subjectTokenType?: typeof TOKEN_TYPE_JWT | typeof TOKEN_TYPE_ACCESS_TOKEN;
  /** `requested_token_type`, when the endpoint wants one. Default unset. */
  requestedTokenType?: string;
  /**
   * Where anonymous requests (no user token to exchange) get their token, a local minter say.
   * Default: none, and an anonymous call fails with TOKEN_EXCHANGE_FAILED.
   */
  anonymous?: SubgraphTokenSource;
  /** Replaces global fetch (tests, a proxy dispatcher). */
  fetch?: typeof fetch;
  /** Clock, ms since the epoch. Default `Date.now`. */
  now?: () => number;
}

/** Largest token endpoint response read, in bytes: a token response is small; anything bigger is not one. */
const MAX_RESPONSE_BYTES = 65_536;

function formEncode(value: string): string {
  // RFC 6749 §2.3.1 / Appendix B: application/x-www-form-urlencoded, spaces as '+'.
  return encodeURIComponent(value).replace(/%20/g, '+');
}

/**
 * Obtains per-subgraph tokens from an external RFC 8693 token endpoint.
 *
 * 1. POST, form-encoded (§2.1): `grant_type=urn:ietf:params:oauth:grant-type:token-exchange`,
 *    `subject_token` (the user's raw token), `subject_token_type`, `audience` (the subgraph), and
 *    `requested_token_type` if configured; client authentication per RFC 6749 §2.3.
 * 2. 200 (§2.2.1): `access_token` is required; `token_type` must be Bearer or N_A when present (a
 *    DPoP-bound token would need proofs we do not send); the expiry is `expires_in`, else the JWT's
 *    `exp`, else "now" (used once, never cached).
 * 3. 400/401/403 (§2.2.2, RFC 6749 §5.2): TOKEN_EXCHANGE_FAILED with the endpoint's `error` code;
 *    429, 5xx, network errors and the timeout: TOKEN_EXCHANGE_UNAVAILABLE. The caller's abort is
 *    passed through as the signal's reason, not turned into an exchange error.
 */
export function createTokenExchangeClient(options: TokenExchangeClientOptions): SubgraphTokenSource {
  const endpoint = new URL(options.url);
  if (endpoint.protocol !== 'https:' && endpoint.protocol !== 'http:') throw new TypeError('token exchange url must be http or https');
  const timeoutMs = options.timeoutMs ?? 2_000;
  const subjectTokenType = options.subjectTokenType ?? TOKEN_TYPE_JWT;
  const doFetch = options.fetch ?? fetch;
  const now = options.now ?? Date.now;
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  if (options.clientId !== undefined && options.clientSecret !== undefined) {
    const credentials = `${formEncode(options.clientId)}:${formEncode(options.clientSecret)}`;
    headers.authorization = `Basic ${Buffer.from(credentials).toString('base64')}`;
  }

  async function issue(principal: Principal | undefined, audience: string, signal?: AbortSignal): Promise<IssuedToken> {
    signal?.throwIfAborted();
    if (!principal) {
      if (options.anonymous) return options.anonymous.issue(undefined, audience, signal);
      throw new SubgraphTokenError('TOKEN_EXCHANGE_FAILED', audience, 'no user token to exchange for an anonymous request');
    }
    const form = new URLSearchParams({ grant_type: TOKEN_EXCHANGE_GRANT, subject_token: principal.token, subject_token_type: subjectTokenType, audience });
    if (options.requestedTokenType) form.set('requested_token_type', options.requestedTokenType);
    if (options.clientId !== undefined && options.clientSecret === undefined) form.set('client_id', options.clientId);

    // A redirect would re-send the user's token to wherever it points: refused (redirect: 'error').
    const timeout = AbortSignal.timeout(timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    let status: number;
    let text: string;
    try {
      const response = await doFetch(endpoint, { method: 'POST', headers, body: form.toString(), signal: combined, redirect: 'error' });
      status = response.status;
      const length = Number(response.headers.get('content-length') ?? 0);
      if (length > MAX_RESPONSE_BYTES) {
        await response.body?.cancel().catch(() => {});
        throw new SubgraphTokenError('TOKEN_EXCHANGE_FAILED', audience, 'token endpoint response too large', { status });
      }
      text = await response.text();
    } catch (error) {
      if (error instanceof SubgraphTokenError) throw error;
      if (signal?.aborted) throw signal.reason;
      if (timeout.aborted) throw new SubgraphTokenError('TOKEN_EXCHANGE_UNAVAILABLE', audience, `token endpoint did not answer within ${timeoutMs} ms`, { cause: error });
      throw new SubgraphTokenError('TOKEN_EXCHANGE_UNAVAILABLE', audience, 'token endpoint unreachable', { cause: error });
    }

    let body: Record<string, unknown> | undefined;
    try {
      const parsed: unknown = text.length <= MAX_RESPONSE_BYTES ? JSON.parse(text) : undefined;
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
    } catch {
      body = undefined;
    }

    if (status !== 200) {
      const oauthError = typeof body?.error === 'string' ? body.error : undefined;
      const retryable = status === 429 || status >= 500;
      throw new SubgraphTokenError(
        retryable ? 'TOKEN_EXCHANGE_UNAVAILABLE' : 'TOKEN_EXCHANGE_FAILED',
        audience,
        `token endpoint answered ${status}${oauthError ? ` (${oauthError})` : ''}`,
        { status, oauthError },
      );
    }
    const token = body?.access_token;
    if (typeof token !== 'string' || token === '') {
      throw new SubgraphTokenError('TOKEN_EXCHANGE_FAILED', audience, 'token endpoint response has no access_token', { status });
    }
    const tokenType = body?.token_type;
    if (tokenType !== undefined && (typeof tokenType !== 'string' || !['bearer', 'n_a'].includes(tokenType.toLowerCase()))) {
      throw new SubgraphTokenError('TOKEN_EXCHANGE_FAILED', audience, `token endpoint issued an unusable token_type ${String(tokenType)}`, { status });
    }
    return { token, expiresAt: expiryOf(token, body?.expires_in, now()) };
  }
  return { issue, tokenFor: tokenForFrom(issue), perUserToken: true };
}

function expiryOf(token: string, expiresIn: unknown, nowMs: number): number {
  if (typeof expiresIn === 'number' && Number.isFinite(expiresIn) && expiresIn > 0) return nowMs + expiresIn * 1000;
  try {
    const { exp } = decodeJwt(token);
    if (typeof exp === 'number') return exp * 1000;
  } catch {
    // An opaque token without expires_in: its lifetime is unknown.
  }
  return nowMs;
}
