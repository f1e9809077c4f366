// Puts the subgraph's own token (and its header rules) on every call: never the user's raw token.
import type { RouteMetadata } from '../registry/route.js';
import type { Principal } from '../security/authentication/principal.js';
import { SubgraphTokenError, type SubgraphTokenSource } from '../security/subgraph-tokens.js';
import { UpstreamFailure, failureFromAbort, type CallWrapper } from './subgraph-call.js';

export interface SubgraphTokenOptions {
  source: SubgraphTokenSource;
  /** The caller of the request the call belongs to (undefined: anonymous). */
  principalOf: (context: unknown) => Principal | undefined;
  headerRules?: RouteMetadata['headers'];
  onToken?: (result: 'ok' | 'error') => void;
}

/** Applies rename, drop, add (lower-case names) to the headers of a call. */
export function applyHeaderRules(headers: Record<string, string>, rules: RouteMetadata['headers']): Record<string, string> {
  if (!rules) return headers;
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) result[(rules.rename?.[name] ?? name).toLowerCase()] = value;
  for (const name of rules.drop ?? []) delete result[name.toLowerCase()];
  for (const [name, value] of Object.entries(rules.add ?? {})) result[name.toLowerCase()] = value;
  return result;
}

/**
 * Once per logical call (outside retries and hedges, which reuse it): obtain the token made for this
 * subgraph and this caller (minted or exchanged, cached until shortly before it expires), set
 * `authorization: Bearer <token>`, then apply the route's header rules. A token that cannot be had
 * fails this subgraph's sections only, with TOKEN_EXCHANGE_FAILED or TOKEN_EXCHANGE_UNAVAILABLE.
 */
export function withSubgraphToken(options: SubgraphTokenOptions): CallWrapper {
  const { source, headerRules } = options;
  return (next) =>
    async function callWithToken(call) {
      let token: string;
      try {
        token = await source.tokenFor(options.principalOf(call.request.context), call.subgraph, call.signal);
        options.onToken?.('ok');
      } catch (error) {
        if (call.signal.aborted) throw failureFromAbort(call.signal.reason, call.subgraph);
        options.onToken?.('error');
        const code = error instanceof SubgraphTokenError ? error.code : 'TOKEN_EXCHANGE_UNAVAILABLE';
        throw new UpstreamFailure(code, 'token', `no token for subgraph "${call.subgraph}" could be obtained`);
      }
      const headers = applyHeaderRules({ ...call.headers, authorization: `Bearer ${token}` }, headerRules);
      return next({ ...call, headers });
    };
}
