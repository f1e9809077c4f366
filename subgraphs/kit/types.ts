// The public shapes of a demo subgraph: what the router's CLI and tests program against.
import type { IncomingMessage } from 'node:http';
import type { FaultSettings, FaultSwitch } from './fault-switch.js';
import type { SubgraphStats } from './subgraph-stats.js';

/** `true` lets the request through; `false` answers 401; an object answers its own status and message. */
export type AuthenticationResult = boolean | { status: number; message: string };

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
  /** Request authentication hook. Default: none, every request goes through. */
  authenticate?: Authenticate;
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
  /** Serves the subgraph over HTTP. Port 0 picks a free port; default `defaultPort`. Host default `127.0.0.1`. */
  listen(port?: number, host?: string): Promise<RunningSubgraph>;
}

export interface RunningSubgraph {
  readonly name: string;
  /** `http://127.0.0.1:PORT/graphql` */
  readonly url: string;
  readonly port: number;
  /** Stops accepting, destroys open sockets (hanging requests included) and clears pending timers. Idempotent. */
  close(): Promise<void>;
}
