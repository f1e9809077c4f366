// The benchmark's extension points: a scenario is a backend, a list of gateway variants and a request factory.
import type { ChildHandle, ProcessSupervisor } from './processes.js';

/** Where processes run: gateways under test on one core, everything else (subgraphs, load generator) on the other. */
export interface CoreLayout {
  /** Core of each gateway under test; undefined when pinning is unavailable. */
  gateway: number | undefined;
  /** Core of the subgraphs and the load generator. */
  load: number | undefined;
}

export interface StartContext {
  supervisor: ProcessSupervisor;
  cores: CoreLayout;
  /** A fresh temporary folder for this scenario's files (supergraph, configs); removed after the scenario. */
  workDir: string;
  /** With --cpu-prof: where a Node.js gateway writes its V8 CPU profile when it exits (a variant that cannot, ignores it). */
  profileDir?: string;
  /** The name this instance of the variant goes by (its process, profile file, work folders) when it is not the variant's own: the --control copy of a baseline. */
  instanceName?: string;
  /** Progress lines (e.g. a peer's first install); stdout when absent. */
  log?: (line: string) => void;
}

/** The subgraphs a scenario's gateways call, running, plus the supergraph that describes them. */
export interface RunningBackend {
  /** Path of the supergraph SDL file every gateway serves. */
  supergraphFile: string;
  /** The subgraph processes, for their CPU share during a measurement. */
  processes: readonly ChildHandle[];
  /** Total GraphQL requests the subgraphs have received so far (for subgraph fetches per operation), if they can tell. */
  subgraphRequests?(): Promise<number>;
  /** Each subgraph's name, URL and SDL, for a gateway that registers them itself (registry mode) instead of reading supergraphFile. */
  subgraphs?: readonly { name: string; url: string; sdl: string }[];
}

export interface Backend {
  /** kebab-case; `--backend NAME` selects it among a scenario's backends. */
  readonly name: string;
  /** Shown in the report, e.g. "demo subgraphs (product, reviews, inventory)". */
  readonly description: string;
  start(context: StartContext): Promise<RunningBackend>;
}

/** A gateway process serving the backend's supergraph. */
export interface RunningGateway {
  /** The GraphQL endpoint. */
  url: string;
  process: ChildHandle;
}

/** One contestant: Switchyard with some settings, or another gateway (bench/gateways/peers.ts). */
export interface Variant {
  /** Short, unique within the scenario: a table row and a JSON key. */
  readonly name: string;
  /** What differs from the other variants, in a few words. */
  readonly description: string;
  /**
   * A gateway that may not install or run on this machine (a peer): when it cannot start or fails the data
   * check, the scenario goes on without it and the report says why. A variant without it that fails, fails
   * the scenario.
   */
  readonly optional?: boolean;
  /**
   * Work that can begin before the variant's scenario, when the run starts: in the background, at low
   * priority, while earlier scenarios measure (e.g. installing a peer gateway). start() must still wait for
   * it itself; a failure shows there. Called at most once per run for each variant object.
   */
  prepare?(log: (line: string) => void): void;
  start(context: StartContext, backend: RunningBackend): Promise<RunningGateway>;
  /**
   * `--before REF`: this same variant (same environment, same arguments) run from an older build of
   * Switchyard, named `<name>-before`, measured right after this one. Only the variants of Switchyard as
   * shipped offer it (the peers' `switchyard`, `resilience-on`).
   */
  before?(build: OlderBuild): Variant;
}

/** Switchyard built from another commit (`--before REF`, bench/gateways/before-build.ts). */
export interface OlderBuild {
  /** The revision as given on the command line (`HEAD~3`, a tag). */
  readonly ref: string;
  /** The full commit sha it resolved to. */
  readonly sha: string;
  /** Its package root: package.json, bin/switchyard.js and dist/ once built. */
  readonly root: string;
  /** Starts building it in the background, at low priority, if it is not built yet (at most once). */
  prepare(log: (line: string) => void): void;
  /** Resolves when it is built (at once when an earlier run built it); rejects with the build's last lines when it cannot be. */
  ready(log: (line: string) => void): Promise<void>;
}

/** A GraphQL request as the client sends it. */
export interface GraphQLRequestBody {
  query: string;
  operationName?: string;
  variables?: Record<string, unknown>;
}

export interface Scenario {
  /** kebab-case; `--scenario NAME` selects it. */
  readonly name: string;
  /** One line: what the scenario shows. */
  readonly summary: string;
  readonly backend: Backend;
  /** Other backends serving the same schema and data, selectable with `--backend NAME` (e.g. the real demo subgraphs). */
  readonly alternativeBackends?: readonly Backend[];
  /** The first is the baseline: every ratio is variant / baseline, paired per round (the first that runs, when an optional one could not). */
  readonly variants: readonly Variant[];
  /**
   * Request number `n` (unique within the run). Vary the variables with `n` where the query allows, so that no
   * gateway can answer concurrent requests by executing one; the harness adds a unique Authorization header.
   */
  request(n: number): GraphQLRequestBody;
  /**
   * Headers of request `n` over the harness's defaults (content-type, accept, `authorization: Bearer bench-<n>`),
   * e.g. a real signed token instead of the unique placeholder. Called only after setup() has resolved.
   */
  headers?(n: number): Record<string, string>;
  /**
   * When headers() cycles through a pool of values (users' tokens), its period: before timing, after
   * priming, every variant answers that many consecutive requests, so each value has been seen once and
   * the caches keyed on it (verified tokens, per-subgraph tokens) are in the state of a router that has
   * served these users before. The throughput of that pass is reported as the first-request figure.
   */
  readonly headerPeriod?: number;
  /** Runs once before the backend starts (e.g. generates keys and tokens that headers() and the variants use). */
  setup?(context: StartContext): Promise<void>;
  /** Request numbers sent to every variant before timing; their `data` must be identical. Default [0, 1, 2, 499, 999]. */
  readonly checkRequests?: readonly number[];
  /** The product's promise for this scenario, checked against the median paired throughput ratio. */
  readonly target?: ThroughputTarget;
  /**
   * Work done to a gateway while its measured window runs (e.g. publishes to its registry), started when
   * the window opens and awaited after the load stops, before the gateway is paused. What it returns is
   * logged with the measurement. Default: nothing.
   */
  whileMeasured?(run: MeasuredRun): Promise<string | void>;
  /** Run only when named with `--scenario` (not in the default or `--quick` run), e.g. a comparison outside the default run's time budget. Default false. */
  readonly onlyWhenNamed?: boolean;
  /** Shortest measured window this scenario's work fits in, in ms: a shorter --duration is raised to it (the report says so). Default: none. */
  readonly minDurationMs?: number;
}

/** What whileMeasured knows of the measurement under way. */
export interface MeasuredRun {
  variant: string;
  /** The gateway's GraphQL endpoint. */
  url: string;
  /** Length of the measured window, in ms. */
  durationMs: number;
  backend: RunningBackend;
  /** The scenario's work folder (StartContext.workDir): where registry variants keep their data. */
  workDir: string;
}

export interface ThroughputTarget {
  /** The variant whose throughput ratio to the baseline is checked. */
  variant: string;
  /** The median ratio must be at least this (0.95: "costs under 5% of throughput"). */
  minRatio: number;
  /** The promise in words, printed with the verdict. */
  statement: string;
}
