// One deadline per request: the operation's policy (or the default), lowered by the Switchyard-Deadline-Ms header.
import { setMaxListeners } from 'node:events';
import type { ServerResponse } from 'node:http';
import { getOperationAST } from 'graphql';
import type { Plugin, YogaInitialContext } from 'graphql-yoga';
import { requestError } from '../errors/client-error.js';
import type { PolicyBook } from '../registry/policy-store.js';
import { attachRequestScope, createRequestScope } from '../resilience/request-scope.js';

export interface DeadlineOptions {
  policies: PolicyBook;
  /** Deadline when no policy sets one, in ms. */
  defaultDeadlineMs: number;
}

export const DEADLINE_HEADER = 'switchyard-deadline-ms';

/**
 * At execution start, creates the request scope: deadline = min(policy `deadline_ms` or the
 * default, the client's `Switchyard-Deadline-Ms`). Every subgraph attempt is bounded by it and
 * aborted when it passes or when the client disconnects (see request-scope.ts). A header that is not
 * a positive integer is a 400 BAD_REQUEST.
 */
export function useDeadline(options: DeadlineOptions): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const request = (args.contextValue as Partial<YogaInitialContext>).request;
      const operationName = args.operationName ?? getOperationAST(args.document, args.operationName)?.name?.value;
      let deadlineMs = options.policies.resolve(operationName).deadlineMs ?? options.defaultDeadlineMs;
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
      attachRequestScope(args.contextValue, createRequestScope({ deadlineMs, clientSignal: clientSignalOf(args.contextValue, request) }));
    },
  };
}

/**
 * A signal that fires when the client goes away before its answer is written.
 *
 * Behind Node's HTTP server the connection's own `close` event says so, on a native AbortController.
 * The Fetch API request's `signal` would say the same, but @whatwg-node/server builds it as a Proxy
 * whose every property read runs a string test; the timeout, hedge and retry wrappers read it several
 * times per subgraph call, which cost about 25 µs per product page in a profile
 * (`npm run bench -- --scenario resilience-overhead --cpu-prof`). Other servers (in-process calls,
 * other runtimes) use the request's signal.
 */
function clientSignalOf(context: unknown, request: Request | undefined): AbortSignal | undefined {
  const res = (context as { res?: ServerResponse } | undefined)?.res;
  if (!res || typeof res.once !== 'function' || !('writableFinished' in res)) return request?.signal;
  const controller = new AbortController();
  // Every subgraph call of the request listens to it while it runs (and lets go after): a plan with
  // more than ten fetches in flight is no leak, so Node's warning at eleven listeners is off here.
  setMaxListeners(0, controller.signal);
  const abortUnlessAnswered = () => {
    if (!res.writableFinished) controller.abort(new DOMException('the client closed the connection', 'AbortError'));
  };
  if (res.destroyed) abortUnlessAnswered();
  else res.once('close', abortUnlessAnswered);
  return controller.signal;
}
