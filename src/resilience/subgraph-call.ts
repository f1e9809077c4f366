// The unit the resilience wrappers pass around: one call to one subgraph, and the typed ways an attempt can fail.
import type { ExecutionResult } from 'graphql';
import type { ExecutionRequest } from '@graphql-tools/utils';
import type { ErrorCode } from '../errors/codes.js';

/** Why an attempt was made: the first try, a retry after a failure, or a backup racing a slow first try. */
export type AttemptKind = 'first' | 'retry' | 'hedge';

export interface SubgraphCall {
  /** Registered subgraph name. */
  readonly subgraph: string;
  readonly request: ExecutionRequest;
  /** Queries may be retried and hedged; mutations never (they may not be idempotent). */
  readonly isQuery: boolean;
  /**
   * Aborts this attempt: the request's deadline passed, the client went away, or (for a hedge or
   * first try that lost the race) the wrapper that started it no longer needs it.
   */
  readonly signal: AbortSignal;
  /** The request's deadline, in `performance.now()` milliseconds. */
  readonly deadlineAt: number;
  readonly attempt: AttemptKind;
  /** Headers for the subgraph (its token, header rules), set once per logical call and kept by every attempt. */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Set by a wrapper that may need to abort this attempt alone (a hedge race): the innermost
   * attempt owner (the timeout wrapper) hands it the abort of the attempt's own controller, which
   * spares the wrapper a controller and a listener of its own.
   */
  readonly onAbortable?: (abort: (reason: unknown) => void) => void;
}

/** Runs one call (or a decorated series of attempts). Resolves with the subgraph's GraphQL result; rejects with UpstreamFailure. */
export type CallHandler = (call: SubgraphCall) => Promise<ExecutionResult>;

/** A wrapper adds one concern around the handler below it. */
export type CallWrapper = (next: CallHandler) => CallHandler;

/**
 * How an attempt failed below the GraphQL layer:
 * - `network`: connection refused, reset or closed before an answer.
 * - `http`: an answer that is not a GraphQL response (e.g. 503 with an HTML body).
 * - `timeout`: the subgraph's own timeout passed.
 * - `deadline`: the request's deadline passed first.
 * - `cancelled`: the client went away, or a wrapper abandoned the attempt (hedge loser).
 * - `circuit_open`: the breaker refused the attempt without calling.
 * - `token`: no token for the subgraph could be obtained (token exchange refused or unreachable).
 */
export type FailureKind = 'network' | 'http' | 'timeout' | 'deadline' | 'cancelled' | 'circuit_open' | 'token';

export class UpstreamFailure extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly kind: FailureKind,
    message: string,
    /** HTTP status of the answer, for `http` failures. */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'UpstreamFailure';
  }

  /**
   * Worth another attempt (queries only, decided by the caller): the subgraph may answer next
   * time. Connection failures, 502/503/504 and the subgraph's own timeout are; a passed deadline,
   * a cancelled call, an open circuit or any other HTTP status are not.
   */
  get retryable(): boolean {
    if (this.kind === 'network' || this.kind === 'timeout') return true;
    return this.kind === 'http' && (this.status === 502 || this.status === 503 || this.status === 504);
  }

  /** Counts against the subgraph's health (breaker): failures the subgraph caused, not ones we caused. */
  get countsAsFailure(): boolean {
    return this.kind === 'network' || this.kind === 'timeout' || (this.kind === 'http' && (this.status ?? 500) >= 500);
  }
}

export function isUpstreamFailure(error: unknown): error is UpstreamFailure {
  return error instanceof UpstreamFailure;
}

/** Milliseconds left before the call's deadline (never negative). */
export function timeLeft(call: Pick<SubgraphCall, 'deadlineAt'>, now: number = performance.now()): number {
  return Math.max(0, call.deadlineAt - now);
}

/** Why a call's signal fired: the reason object every abort in the subgraph layer carries. */
export type AbortCause = 'deadline' | 'client' | 'timeout' | 'superseded';

export class CallAborted extends Error {
  constructor(readonly why: AbortCause) {
    super(`call aborted: ${why}`);
    this.name = 'CallAborted';
  }
}

/** The failure an aborted attempt ends with, from the abort's reason. */
export function failureFromAbort(reason: unknown, subgraph: string): UpstreamFailure {
  const cause = reason instanceof CallAborted ? reason.why : 'client';
  switch (cause) {
    case 'timeout':
      return new UpstreamFailure('SUBGRAPH_TIMEOUT', 'timeout', `subgraph "${subgraph}" did not answer within its timeout`);
    case 'deadline':
      return new UpstreamFailure('DEADLINE_EXCEEDED', 'deadline', `the request deadline passed before subgraph "${subgraph}" answered`);
    default:
      return new UpstreamFailure('REQUEST_CANCELLED', 'cancelled', `the call to subgraph "${subgraph}" was cancelled`);
  }
}
