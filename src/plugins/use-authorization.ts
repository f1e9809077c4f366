// Who may see what: rules from the permissions table and @authenticated / @requiresScopes, decided once per document and caller.
import type { Plugin } from 'graphql-yoga';
import { alsoOnSubscribe } from './subscribe-hooks.js';
import { requestError } from '../errors/client-error.js';
import { requestStateOf } from '../request/request-state.js';
import { principalsOf, type Authorizer } from '../security/authorization.js';
import type { RouterMetrics } from '../telemetry/metrics.js';

export interface AuthorizationOptions {
  authorizer: Authorizer;
  metrics?: RouterMetrics;
}

/**
 * 1. Requirements (`@authenticated`, `@requiresScopes`, under the names the supergraph's `@link`s give them)
 *    come from the served graph's supergraph (the one the request started on), which reads them once.
 * 2. The decision (memoised per schema, document, rule version and principal set) either refuses the
 *    request whole, when the operation or every root field is denied: 403, or 401 for an anonymous
 *    caller; or names the denied coordinates, whose guarded resolvers then yield null with FORBIDDEN
 *    at their path, their nullability deciding what else falls.
 * 3. A decision that denies fields also carries the operation with them pruned (memoised with it);
 *    the guards delegate with it, so no subgraph is asked for a field the caller may not read.
 */
export function useAuthorization(options: AuthorizationOptions): Plugin {
  const { authorizer, metrics } = options;
  return alsoOnSubscribe({
    onExecute({ args, setResultAndStopExecution }) {
      const state = requestStateOf(args.contextValue);
      const requirements = state.graph.supergraph.requirements;
      const principal = state.principal;
      const decision = authorizer.decide(args.schema, requirements, args.document, args.operationName, principalsOf(principal));
      if (decision.refused) {
        metrics?.forbidden.inc({ scope: 'request' });
        const anonymous = principal === undefined;
        setResultAndStopExecution({
          errors: [
            anonymous
              ? requestError('UNAUTHENTICATED', 'Authentication required for this operation.', { httpHeaders: { 'www-authenticate': 'Bearer realm="switchyard"' } })
              : requestError('FORBIDDEN', 'You may not run this operation.'),
          ],
        });
        return;
      }
      if (decision.denied.size > 0) {
        metrics?.forbidden.inc({ scope: 'field' });
        state.decision = decision;
      }
    },
  });
}
