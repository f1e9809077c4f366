// Production introspection by permission (decision 036): a document that reads the schema runs only for a caller the `introspection` rule names.
import type { DocumentNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { alsoOnSubscribe } from './subscribe-hooks.js';
import { requestError } from '../errors/client-error.js';
import { requestStateOf } from '../request/request-state.js';
import { principalsOf, type Authorizer } from '../security/authorization.js';
import { readsSchema } from '../security/introspection.js';
import type { RouterMetrics } from '../telemetry/metrics.js';

export interface IntrospectionPermissionOptions {
  /** Asked whether the caller holds the `introspection` rule (the live permission table). */
  authorizer: Authorizer;
  /**
   * Whether the router identifies callers (authentication on). An anonymous caller refused is then
   * 401 UNAUTHENTICATED, since a token could change the answer; with authentication off no token
   * can, and the refusal is 403. Default true.
   */
  authenticates?: boolean;
  metrics?: RouterMetrics;
}

const FORBIDDEN_MESSAGE = 'Introspection is off in production: no permission rule allows it for this caller.';
const UNAUTHENTICATED_MESSAGE = 'Introspection is off in production unless a permission rule allows the caller: authenticate to use one.';

/**
 * Installed in production only (router.ts); in development introspection stays open (GraphiQL reads it).
 * 1. Whether a document reads the schema (`__schema` or `__type` anywhere in it; `__typename` is
 *    not introspection) is worked out once per parsed document and remembered: a request that does
 *    not introspect costs one WeakMap read.
 * 2. One that does runs only when a principal of the caller (security/authorization.ts's
 *    `principalsOf`, read from the request state: authentication set it when the request was parsed)
 *    holds the `introspection` rule, read live from the permission table. No rule: nobody.
 * 3. Otherwise the request is refused before execution, so no subgraph is called for a document that
 *    mixes introspection with fields: 403 FORBIDDEN, or 401 UNAUTHENTICATED for an anonymous caller
 *    where a token could help. The code joins the request state (`refusal`) for the access line and
 *    the audit row, and `switchyard_authorization_denials_total{scope="introspection"}` counts it.
 */
export function useIntrospectionPermission(options: IntrospectionPermissionOptions): Plugin {
  const { authorizer, metrics } = options;
  const authenticates = options.authenticates ?? true;
  // Per parsed document (yoga's parse cache hands the same object to every request with the same text).
  const introspective = new WeakMap<DocumentNode, boolean>();
  function asksForSchema(document: DocumentNode): boolean {
    let reads = introspective.get(document);
    if (reads === undefined) introspective.set(document, (reads = readsSchema(document)));
    return reads;
  }
  return alsoOnSubscribe({
    onExecute({ args, setResultAndStopExecution }) {
      if (!asksForSchema(args.document)) return;
      const state = requestStateOf(args.contextValue);
      if (authorizer.mayIntrospect(principalsOf(state.principal))) return;
      metrics?.forbidden.inc({ scope: 'introspection' });
      const anonymous = state.principal === undefined && authenticates;
      state.refusal = anonymous ? 'UNAUTHENTICATED' : 'FORBIDDEN';
      setResultAndStopExecution({
        errors: [
          anonymous
            ? requestError('UNAUTHENTICATED', UNAUTHENTICATED_MESSAGE, { httpHeaders: { 'www-authenticate': 'Bearer realm="switchyard"' } })
            : requestError('FORBIDDEN', FORBIDDEN_MESSAGE),
        ],
      });
    },
  });
}
