// The public shapes of a demo subgraph: what the router's CLI and tests program against.
import type { IncomingMessage } from 'node:http';
import type { FaultSettings, FaultSwitch } from './fault-switch.js';
import type { SubgraphStats } from './subgraph-stats.js';

/** `true` lets the request through; `false` answers 401; a refusal answers its own status, message and headers. */
export type AuthenticationResult = boolean | AuthenticationRefusal;

export interface AuthenticationRefusal {
  status: number;
  /** The GraphQL error message of the answer. */
  message: string;
  /** `extensions.code` of the error. Default `FORBIDDEN` for 403, else `UNAUTHENTICATED`. */
  code?: string;
  /** Extra response headers, e.g. `WWW-Authenticate` (RFC 6750 §3). Default none. */
  headers?: Record<string, string>;
}

/**
 * Decides whether an incoming `/graphql` request may reach GraphQL execution (the place for
 * per-subgraph token checks, issue 4). Called after the fault switch, before yoga reads the body.
 */
export type Authenticate = (req: IncomingMessage) => Promise<AuthenticationResult>;

export interface SubgraphOptions {
  /** Initial fault settings; they win over the `FAULT_*` environment variables. Default: none. */
  faults?: Partial<FaultSettings>;
  /** Where `FAULT_*` variables are read from at creation. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Request authentication hook, run after the token check when both are on. Default: none, every request goes through. */
  authenticate?: Authenticate;
  /**
   * Verify the router's per-subgraph tokens from the start (see `DemoSubgraph.requireTokens`). Wins over
   * `ROUTER_JWKS_URL` / `ROUTER_TOKEN_ISSUER` read from `env`. Default: from `env`, else off.
   */
  requireTokens?: TokenRequirement;
  /**
   * For a subgraph with a `Subscription` type: how often its GraphQL over WebSocket clients are pinged, in ms; one
   * that does not pong within the same time is terminated. Default 12 000; 0 turns the heartbeat off.
   */
  webSocketKeepAliveMs?: number;
}

/** Where the router's keys are and who issues its tokens. */
export interface TokenRequirement {
  /** The router's JWKS, e.g. `http://127.0.0.1:4000/.well-known/jwks.json` (http or https). */
  jwksUrl: string;
  /** Expected `iss`. Default `switchyard`. */
  issuer?: string;
}

/** Who a verified token says the request is for, as resolvers see it in `context.caller`. */
export interface SubgraphCaller {
  /** The user the router acts for (`anonymous` when the router's request had none). */
  readonly subject: string;
  /** The user's scopes, from the token's space-separated `scope` claim. */
  readonly scopes: readonly string[];
}

/** What the kit adds to every subgraph's per-request GraphQL context. */
export interface CallerContext {
  /** Set when token verification is on and the request passed it; `undefined` otherwise. */
  caller: SubgraphCaller | undefined;
}

export interface DemoSubgraph {
  /** `product`, `reviews` or `inventory`. */
  readonly name: string;
  /** The text of `schema/<name>.graphql`. */
  readonly sdl: string;
  /** The port `listen()` uses when given none (4001 product, 4002 reviews, 4003 inventory). */
  readonly defaultPort: number;
  readonly faults: FaultSwitch;
  readonly stats: SubgraphStats;
  /**
   * Turns verification of the router's per-subgraph tokens on (or off with `undefined`) at run time, for
   * every server `listen()` started. When on, a `/graphql` request needs `Authorization: Bearer <token>`
   * signed by a key of `jwksUrl`, with `aud` = this subgraph's name, `iss` = `issuer`, `act.sub` =
   * `switchyard-router` and header `typ: at+jwt`; otherwise 401 (503 when the JWKS cannot be fetched).
   * A GraphQL over WebSocket connection shows the same token at `connection_init` (payload `authorization`, else the
   * upgrade's `Authorization` header) or is closed 4403 (1013 when the JWKS cannot be fetched); an accepted connection
   * keeps its verdict until its token's `exp`, when it is closed 4401. SSE subscriptions are `/graphql` requests.
   * `/admin/*` and `/healthz` stay open. Throws a TypeError, changing nothing, when `jwksUrl` is not an http(s) URL.
   */
  requireTokens(options: TokenRequirement | undefined): void;
  /** The token requirement in force (issuer filled in), `undefined` when verification is off. */
  readonly requiredTokens: Readonly<Required<TokenRequirement>> | undefined;
  /**
   * Serves the subgraph over HTTP (and, with a `Subscription` type, GraphQL over WebSocket at the same `/graphql`).
   * Port 0 picks a free port; default `defaultPort`. Host default `127.0.0.1`.
   */
  listen(port?: number, host?: string): Promise<RunningSubgraph>;
}

export interface RunningSubgraph {
  readonly name: string;
  /** `http://127.0.0.1:PORT/graphql` */
  readonly url: string;
  readonly port: number;
  /** Stops accepting, destroys open sockets (hanging requests, SSE streams and WebSockets included) and clears pending timers. Idempotent. */
  close(): Promise<void>;
}
