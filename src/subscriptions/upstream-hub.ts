// Subscriptions toward subgraphs: one upstream subscription per subgraph document, variables and token holder, shared by every client that needs it.
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';
import { createClient as createSseClient, type Client as SseClient } from 'graphql-sse';
import WebSocket from 'ws';
import type { ExecutionResult } from 'graphql';
import { GraphQLError } from 'graphql';
import { clientError } from '../errors/client-error.js';
import type { RouteMetadata } from '../registry/route.js';
import type { Principal } from '../security/authentication/principal.js';
import { applyHeaderRules } from '../resilience/subgraph-token.js';
import { tokenHolderKey } from '../security/subgraph-token-cache.js';
import type { SubgraphTokenSource } from '../security/subgraph-tokens.js';

/** Where and how one subgraph is subscribed to. */
export interface UpstreamTarget {
  readonly subgraph: string;
  /** The subgraph's GraphQL URL (http or https). */
  readonly url: string;
  readonly route: RouteMetadata;
}

/** One upstream subscription as a client stream asks for it. */
export interface UpstreamRequest {
  readonly target: UpstreamTarget;
  /** The root fetch's printed document (`subscription { ... }`). */
  readonly query: string;
  readonly variables: Record<string, unknown>;
  /** Whose token the subgraph gets (undefined: anonymous). */
  readonly principal: Principal | undefined;
}

/** What a sharer of an upstream subscription is told. An error or a complete is the last call. */
export interface UpstreamSink {
  /** An event, the sharer's own: it may complete it in place (the plan runner merges into it). */
  next(result: ExecutionResult): void;
  /** The upstream failed for good (SUBGRAPH_UNAVAILABLE after the reconnects, SUBGRAPH_ERROR for a refused subscription). */
  error(error: GraphQLError): void;
  /** The subgraph ended the subscription normally. */
  complete(): void;
}

export interface UpstreamHubOptions {
  /** Per-subgraph tokens (absent: subgraphs get none, and every client may share every upstream subscription). */
  tokens?: SubgraphTokenSource;
  /** Told on every change of the counts, and of every event in (metrics). */
  onUpstreams?: (subgraph: string, delta: number) => void;
  onConnections?: (subgraph: string, delta: number) => void;
  onEventIn?: (subgraph: string) => void;
  onReconnect?: (subgraph: string) => void;
  /** Ping interval of WebSocket connections to subgraphs, in ms. Default 12000. */
  keepAliveMs?: number;
  /** Share of a subgraph token's lifetime after which its connection is renewed. Default 0.8. */
  renewAt?: number;
}

const DEFAULT_RECONNECT = { attempts: 5, initialDelayMs: 250, maxDelayMs: 5_000 } as const;

/** Exponential back-off with full jitter (half fixed, half random): retry N waits about initial * 2^N, at most max. */
export function backoffMs(retries: number, initialDelayMs: number, maxDelayMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxDelayMs, initialDelayMs * 2 ** retries);
  return ceiling / 2 + (random() * ceiling) / 2;
}

/** The subscription endpoint of a target: its route's path or URL, else the subgraph's URL; `ws(s):` for WebSocket. */
export function endpointOf(target: UpstreamTarget): { protocol: 'ws' | 'sse'; url: string } {
  const protocol = target.route.subscriptions?.protocol ?? 'ws';
  const base = new URL(target.url);
  const url = new URL(target.route.subscriptions?.path ?? base.pathname + base.search, base);
  if (protocol === 'ws') url.protocol = url.protocol === 'https:' || url.protocol === 'wss:' ? 'wss:' : 'ws:';
  else if (url.protocol === 'ws:' || url.protocol === 'wss:') url.protocol = url.protocol === 'wss:' ? 'https:' : 'http:';
  return { protocol, url: url.toString() };
}

/**
 * Upstream subscriptions, shared (decision 031):
 * 1. A connection per subgraph endpoint and token holder (every client when subgraphs get no
 *    per-user token; one principal's clients otherwise) carries many subscriptions: graphql-ws
 *    multiplexes them over one WebSocket; over SSE each is its own request (distinct connections).
 * 2. Requests with the same endpoint, holder, document and variables share one upstream
 *    subscription: its events go to every sharer, each its own copy (a sharer completes it in
 *    place). The last sharer to leave ends it; a connection without subscriptions closes.
 * 3. A dropped connection is reconnected with back-off (`route.subscriptions.reconnect`), and its
 *    subscriptions resubscribed (graphql-ws and graphql-sse do both); when the attempts run out,
 *    every sharer gets SUBGRAPH_UNAVAILABLE, never a normal end.
 * 4. The connection's token is renewed before it expires: a new connection is opened with a fresh
 *    token, every subscription moves to it, and the old one closes (make before break: events of
 *    the moment between the two may come twice or, for the subgraph's own start delay, not at all).
 */
export class UpstreamHub {
  readonly #options: UpstreamHubOptions;
  readonly #connections = new Map<string, UpstreamConnection>();
  readonly #upstreams = new Map<string, SharedUpstream>();

  constructor(options: UpstreamHubOptions = {}) {
    this.#options = options;
  }

  /** Upstream subscriptions open now, per subgraph (tests, ops). */
  counts(): { upstreams: number; connections: number } {
    return { upstreams: this.#upstreams.size, connections: this.#connections.size };
  }

  /** Shares (or opens) the upstream subscription of `request`; returns the release, which ends it when it is the last. */
  subscribe(request: UpstreamRequest, sink: UpstreamSink): () => void {
    // Who may share a connection and its subscriptions: the token the subgraph gets is made for this holder (every caller, without tokens).
    const holder = this.#options.tokens ? tokenHolderKey(request.principal) : '';
    const endpoint = endpointOf(request.target);
    const connectionKey = `${request.target.subgraph}\u0000${endpoint.protocol}\u0000${endpoint.url}\u0000${holder}`;
    const key = `${connectionKey}\u0000${request.query}\u0000${JSON.stringify(request.variables)}`;
    let upstream = this.#upstreams.get(key);
    if (!upstream) {
      let connection = this.#connections.get(connectionKey);
      if (!connection) {
        connection = new UpstreamConnection(request.target, endpoint, request.principal, this.#options, () => {
          this.#connections.delete(connectionKey);
          this.#options.onConnections?.(request.target.subgraph, -1);
        });
        this.#connections.set(connectionKey, connection);
        this.#options.onConnections?.(request.target.subgraph, 1);
      } else connection.offer(request.principal);
      upstream = new SharedUpstream(connection, request, this.#options, () => {
        this.#upstreams.delete(key);
        this.#options.onUpstreams?.(request.target.subgraph, -1);
      });
      this.#upstreams.set(key, upstream);
      this.#options.onUpstreams?.(request.target.subgraph, 1);
    }
    return upstream.add(sink);
  }

  /** Ends every upstream subscription and connection (shutdown): sharers are not told. */
  close(): void {
    for (const upstream of [...this.#upstreams.values()]) upstream.close();
    for (const connection of [...this.#connections.values()]) connection.close();
  }
}

/** One upstream subscription and the sinks sharing it. */
class SharedUpstream {
  readonly #sinks = new Set<UpstreamSink>();
  readonly #connection: UpstreamConnection;
  readonly #request: UpstreamRequest;
  readonly #options: UpstreamHubOptions;
  readonly #onClosed: () => void;
  #stop: (() => void) | undefined;
  #closed = false;

  constructor(connection: UpstreamConnection, request: UpstreamRequest, options: UpstreamHubOptions, onClosed: () => void) {
    this.#connection = connection;
    this.#request = request;
    this.#options = options;
    this.#onClosed = onClosed;
    this.#stop = connection.open(this);
  }

  get payload(): { query: string; variables: Record<string, unknown> } {
    return { query: this.#request.query, variables: this.#request.variables };
  }

  add(sink: UpstreamSink): () => void {
    this.#sinks.add(sink);
    return () => {
      if (!this.#sinks.delete(sink) || this.#sinks.size > 0) return;
      this.close();
    };
  }

  /** A new connection carries it now (token renewal). */
  moveTo(stop: () => void): void {
    const old = this.#stop;
    this.#stop = stop;
    old?.();
  }

  /**
   * Each sharer completes the event in place: the plan runner merges the root answer into its tree
   * by reference, then entity answers and denials into that. Sharers with other documents or other
   * rights would write into each other's answers, so each gets its own copy (the last, the original).
   */
  next(result: ExecutionResult): void {
    if (this.#closed) return;
    this.#options.onEventIn?.(this.#request.target.subgraph);
    const sinks = [...this.#sinks];
    const last = sinks.length - 1;
    for (let i = 0; i < sinks.length; i++) sinks[i].next(i === last ? result : structuredClone(result));
  }

  fail(error: GraphQLError): void {
    if (this.#closed) return;
    const sinks = [...this.#sinks];
    this.close();
    for (const sink of sinks) sink.error(error);
  }

  complete(): void {
    if (this.#closed) return;
    const sinks = [...this.#sinks];
    this.close();
    for (const sink of sinks) sink.complete();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#sinks.clear();
    this.#stop?.();
    this.#stop = undefined;
    this.#connection.release(this);
    this.#onClosed();
  }
}

/** A transport's client: graphql-ws's and graphql-sse's have the same subscribe and dispose. */
type TransportClient = Pick<WsClient, 'subscribe' | 'dispose'> | Pick<SseClient, 'subscribe' | 'dispose'>;

/**
 * One connection (a graphql-ws or graphql-sse client) to one subgraph endpoint for one token holder.
 * The client is replaced, with its subscriptions, before its token expires.
 */
class UpstreamConnection {
  readonly #target: UpstreamTarget;
  readonly #endpoint: { protocol: 'ws' | 'sse'; url: string };
  readonly #options: UpstreamHubOptions;
  readonly #onClosed: () => void;
  readonly #subscriptions = new Set<SharedUpstream>();
  /** The principal whose token the connection uses: of its sharers, the one whose token lasts longest. */
  #principal: Principal | undefined;
  #client: TransportClient;
  #renewal: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(target: UpstreamTarget, endpoint: { protocol: 'ws' | 'sse'; url: string }, principal: Principal | undefined, options: UpstreamHubOptions, onClosed: () => void) {
    this.#target = target;
    this.#endpoint = endpoint;
    this.#principal = principal;
    this.#options = options;
    this.#onClosed = onClosed;
    this.#client = this.#createClient();
  }

  /** A later sharer whose token lasts longer keeps the connection's token renewable for longer. */
  offer(principal: Principal | undefined): void {
    if (principal && this.#principal && principal.expiresAt > this.#principal.expiresAt) this.#principal = principal;
  }

  open(upstream: SharedUpstream): () => void {
    this.#subscriptions.add(upstream);
    return this.#subscribeOn(this.#client, upstream);
  }

  release(upstream: SharedUpstream): void {
    this.#subscriptions.delete(upstream);
    if (this.#subscriptions.size === 0) this.close();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#renewal);
    void Promise.resolve(this.#client.dispose()).catch(() => {});
    this.#onClosed();
  }

  #subscribeOn(client: TransportClient, upstream: SharedUpstream): () => void {
    const subgraph = this.#target.subgraph;
    // The clients call `complete` on a subscription the router itself stopped (a renewal moved it, or its last
    // sharer left): once stopped, nothing it says reaches the sharers.
    let attached = true;
    const unsubscribe = client.subscribe(upstream.payload, {
      next: (result) => attached && upstream.next(result as ExecutionResult),
      error: (error: unknown) => attached && upstream.fail(upstreamError(subgraph, error)),
      complete: () => attached && upstream.complete(),
    });
    return () => {
      attached = false;
      unsubscribe();
    };
  }

  /** The token for the next connect, and the renewal before it expires. */
  async #token(): Promise<string | undefined> {
    const tokens = this.#options.tokens;
    if (!tokens) return undefined;
    const issued = await tokens.issue(this.#principal, this.#target.subgraph);
    this.#scheduleRenewal(issued.expiresAt);
    return issued.token;
  }

  #scheduleRenewal(expiresAt: number): void {
    clearTimeout(this.#renewal);
    if (this.#closed) return;
    const left = expiresAt - Date.now();
    const at = Math.max(1_000, left * (this.#options.renewAt ?? 0.8));
    // Past the user's own token nothing is renewed: its client subscriptions end with TOKEN_EXPIRED.
    if (this.#principal && this.#principal.expiresAt.getTime() <= Date.now() + at) return;
    this.#renewal = setTimeout(() => this.#renew(), Math.min(at, 2 ** 31 - 1));
    this.#renewal.unref();
  }

  /** 4. Make before break: every subscription moves to a new client, then the old one goes. */
  #renew(): void {
    if (this.#closed) return;
    const old = this.#client;
    const next = this.#createClient();
    this.#client = next;
    for (const upstream of this.#subscriptions) upstream.moveTo(this.#subscribeOn(next, upstream));
    void Promise.resolve(old.dispose()).catch(() => {});
  }

  async #headers(): Promise<Record<string, string>> {
    const token = await this.#token();
    const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
    return applyHeaderRules(headers, this.#target.route.headers);
  }

  #createClient(): TransportClient {
    const reconnect = { ...DEFAULT_RECONNECT, ...this.#target.route.subscriptions?.reconnect };
    const subgraph = this.#target.subgraph;
    const wait = (retries: number) => new Promise<void>((resolve) => setTimeout(resolve, backoffMs(retries, reconnect.initialDelayMs, reconnect.maxDelayMs)).unref());
    if (this.#endpoint.protocol === 'sse') {
      return createSseClient({
        url: this.#endpoint.url,
        singleConnection: false,
        headers: () => this.#headers(),
        retryAttempts: reconnect.attempts,
        retry: async (retries) => {
          this.#options.onReconnect?.(subgraph);
          await wait(retries);
        },
      });
    }
    return createWsClient({
      url: this.#endpoint.url,
      webSocketImpl: WebSocket,
      // The token (and the route's header rules) in `connection_init`, read at every (re)connect.
      connectionParams: () => this.#headers(),
      lazy: true,
      lazyCloseTimeout: 0,
      keepAlive: this.#options.keepAliveMs ?? 12_000,
      retryAttempts: reconnect.attempts,
      // A drop for any reason but the subgraph's refusal of the router (4403) is retried.
      shouldRetry: (event) => !(isCloseEvent(event) && event.code === 4403),
      retryWait: async (retries) => {
        this.#options.onReconnect?.(subgraph);
        await wait(retries);
      },
    });
  }
}

function isCloseEvent(value: unknown): value is { code: number; reason: string } {
  return typeof value === 'object' && value !== null && 'code' in value && typeof (value as { code: unknown }).code === 'number';
}

/** What a sharer is told when the upstream fails for good. */
function upstreamError(subgraph: string, error: unknown): GraphQLError {
  // The subgraph refused the subscription itself (graphql-ws `error` message: validation, its own rules).
  if (Array.isArray(error) && error.length > 0) {
    const first = error[0] as { message?: string };
    return clientError('SUBGRAPH_ERROR', `subgraph "${subgraph}" refused the subscription: ${first.message ?? 'no reason given'}`, { subgraph });
  }
  const why = isCloseEvent(error) ? `its connection closed (${error.code}${error.reason ? `: ${error.reason}` : ''}) and could not be reopened` : 'it could not be reached';
  return clientError('SUBGRAPH_UNAVAILABLE', `subgraph "${subgraph}" stopped the subscription's events: ${why}`, { subgraph });
}
