// One deadline per request: the operation's policy (or the default), lowered by the Switchyard-Deadline-Ms header.
import type { Plugin, YogaInitialContext } from 'graphql-yoga';
import { alsoOnSubscribe } from './subscribe-hooks.js';
import { requestError } from '../errors/client-error.js';
import type { PolicyBook } from '../registry/policy-store.js';
import { requestStateOf } from '../request/request-state.js';

export interface DeadlineOptions {
  policies: PolicyBook;
  /** Deadline when no policy sets one, in ms. */
  defaultDeadlineMs: number;
  /** Budget of a query's deferred parts when no policy sets one, in ms. Default 10000. */
  defaultDeferDeadlineMs?: number;
}

const DEADLINE_HEADER = 'switchyard-deadline-ms';

/**
 * At execution start, starts the request's deadline (request-state.ts): deadline = min(policy `deadline_ms` or the
 * default, the client's `Switchyard-Deadline-Ms`). Every subgraph attempt is bounded by it and
 * aborted when it passes (and, whatever this plugin, when the client disconnects). A header that is not
 * a positive integer is a 400 BAD_REQUEST.
 */
export function useDeadline(options: DeadlineOptions): Plugin {
  return alsoOnSubscribe({
    onExecute({ args, setResultAndStopExecution }) {
      const state = requestStateOf(args.contextValue);
      const request = (args.contextValue as Partial<YogaInitialContext>).request;
      const operationName = args.operationName ?? state.operationName;
      const policy = options.policies.resolve(operationName);
      let deadlineMs = policy.deadlineMs ?? options.defaultDeadlineMs;
      const header = request?.headers.get(DEADLINE_HEADER);
      if (header !== null && header !== undefined) {
        const asked = /^\s*\d{1,9}\s*$/.test(header) ? Number(header) : NaN;
        if (!(asked > 0)) {
          setResultAndStopExecution({
            errors: [requestError('BAD_REQUEST', 'Switchyard-Deadline-Ms must be a positive whole number of milliseconds')],
          });
          return;
        }
        deadlineMs = Math.min(deadlineMs, asked);
      }
      // A subscription's deadline is each event's (its entity fetches), started per event: the stream has none.
      if (state.operation?.operation === 'subscription') state.deadlineMs = deadlineMs;
      else state.startDeadline(deadlineMs);
      // A deferred part's budget (decision 027): the request's deadline bounds only the first payload.
      state.deferDeadlineMs = policy.deferDeadlineMs ?? options.defaultDeferDeadlineMs ?? 10_000;
    },
  });
}

