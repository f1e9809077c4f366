// The router-token check in front of a demo subgraph's /graphql: its settings (options or environment) and the authentication hook.
import type { IncomingMessage } from 'node:http';
import { createTokenVerifier, type VerifiedToken } from './token-verifier.js';
import type { Authenticate, AuthenticationRefusal, SubgraphCaller, TokenRequirement } from './types.js';

/** `iss` of the router's tokens when the requirement names none. */
export const DEFAULT_TOKEN_ISSUER = 'switchyard';
/** `act.sub` of every token the router sends (RFC 8693 §4.1: the router acts for the user). */
export const ROUTER_ACTOR = 'switchyard-router';
/** The `typ` header of the router's tokens (RFC 9068 §2.1, explicit typing per RFC 8725 §3.11). */
export const ROUTER_TOKEN_TYPE = 'at+jwt';

/** The environment variables that turn verification on at start (`switchyard subgraph serve`, docker-compose). */
export const TOKEN_ENV_VARS = Object.freeze({ jwksUrl: 'ROUTER_JWKS_URL', issuer: 'ROUTER_TOKEN_ISSUER' });

export class TokenRequirementError extends TypeError {
  override name = 'TokenRequirementError';
}

/** Checks a requirement and fills in the issuer; throws a TokenRequirementError naming `source` otherwise. */
export function validateTokenRequirement(requirement: TokenRequirement, source = 'requireTokens'): Readonly<Required<TokenRequirement>> {
  const { jwksUrl, issuer = DEFAULT_TOKEN_ISSUER } = (requirement ?? {}) as Partial<TokenRequirement>;
  let url: URL | undefined;
  try {
    url = typeof jwksUrl === 'string' ? new URL(jwksUrl) : undefined;
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new TokenRequirementError(`${source}: jwksUrl must be an http(s) URL (got ${JSON.stringify(jwksUrl)})`);
  }
  if (typeof issuer !== 'string' || issuer.trim() === '') throw new TokenRequirementError(`${source}: issuer must be a non-empty string (got ${JSON.stringify(issuer)})`);
  return Object.freeze({ jwksUrl: url.href, issuer });
}

/**
 * `ROUTER_JWKS_URL` (required to turn verification on; blank means off) and `ROUTER_TOKEN_ISSUER`
 * (default `switchyard`). Read once, when a subgraph is created; a bad value throws then.
 */
export function tokenRequirementFromEnv(env: NodeJS.ProcessEnv): Readonly<Required<TokenRequirement>> | undefined {
  const jwksUrl = env[TOKEN_ENV_VARS.jwksUrl]?.trim();
  if (!jwksUrl) return undefined;
  const issuer = env[TOKEN_ENV_VARS.issuer]?.trim() || undefined;
  return validateTokenRequirement({ jwksUrl, issuer }, `${TOKEN_ENV_VARS.jwksUrl}/${TOKEN_ENV_VARS.issuer}`);
}

/** The outcome of checking a router token outside HTTP (a WebSocket's `connection_init`). */
export type ConnectionTokenCheck =
  | { ok: true; caller: SubgraphCaller; /** The token's `exp`: the connection must end then. */ expiresAt: Date }
  /** 401: no usable token (refuse the connection). 503: the router's keys could not be fetched (try again later). */
  | { ok: false; status: 401 | 503; message: string };

/** One subgraph's check of the router's tokens, for each transport that carries them. */
export interface TokenGate {
  /** The `/graphql` HTTP hook: reads `Authorization`, hands a verified caller to `onCaller`. */
  authenticate: Authenticate;
  /**
   * The same check for a token that did not come in an HTTP request's header, e.g. the `authorization`
   * of a graphql-ws `connection_init` payload (`Bearer <jwt>`). Never throws.
   */
  verifyConnection(authorization: string | null | undefined): Promise<ConnectionTokenCheck>;
}

/**
 * Lets a request or connection through only with a router token for `audience`:
 * 1. the verifier checks signature (keys from the JWKS URL, cached by jose and refetched on an unknown `kid`),
 *    `iss`, `aud` = `audience`, `exp`/`nbf`, `act.sub` = `switchyard-router` and `typ` = `at+jwt`;
 * 2. over HTTP, a pass hands the caller to `onCaller` (the subgraph's per-request map) and returns `true`;
 * 3. over HTTP, a refusal answers 401 with a `WWW-Authenticate` challenge (RFC 6750 §3: no error code when no
 *    credentials were sent at all, `invalid_token` otherwise); a JWKS outage answers 503, never a pass.
 * `verifyConnection` runs the same verifier and leaves the answer to the transport.
 */
export function createTokenGate(
  audience: string,
  requirement: Readonly<Required<TokenRequirement>>,
  onCaller: (req: IncomingMessage, caller: SubgraphCaller) => void,
): TokenGate {
  const verifier = createTokenVerifier({
    audience,
    issuer: requirement.issuer,
    jwksUrl: requirement.jwksUrl,
    actor: ROUTER_ACTOR,
    type: ROUTER_TOKEN_TYPE,
  });
  const realm = `realm="${quoted(audience)}"`;
  const callerOf = (check: VerifiedToken): SubgraphCaller => Object.freeze({ subject: check.subject, scopes: Object.freeze([...check.scopes]) });
  return {
    authenticate: async function verifyRouterToken(req): Promise<true | AuthenticationRefusal> {
      const authorization = req.headers.authorization;
      const check = await verifier.verify(authorization);
      if (check.ok) {
        onCaller(req, callerOf(check));
        return true;
      }
      const message = `${audience} subgraph: ${check.reason}`;
      if (check.status === 503) return { status: 503, message, code: 'SERVICE_UNAVAILABLE' };
      const challenge = !authorization?.trim() ? `Bearer ${realm}` : `Bearer ${realm}, error="invalid_token", error_description="${quoted(check.reason)}"`;
      return { status: 401, message, code: 'UNAUTHENTICATED', headers: { 'www-authenticate': challenge } };
    },
    verifyConnection: async function verifyConnectionToken(authorization): Promise<ConnectionTokenCheck> {
      const check = await verifier.verify(authorization);
      if (check.ok) return { ok: true, caller: callerOf(check), expiresAt: check.expiresAt };
      return { ok: false, status: check.status, message: `${audience} subgraph: ${check.reason}` };
    },
  };
}

/** Content of an RFC 9110 §5.6.4 quoted-string: backslash-escape `"` and `\`, drop control characters. */
function quoted(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f]/g, '').replace(/["\\]/g, '\\$&');
}
