// Says at the top of every response whether it is complete, which sections are missing, and sets status and caching.
import type { ExecutionResult, GraphQLError } from 'graphql';
import { isAsyncIterable, type Plugin, type YogaInitialContext } from 'graphql-yoga';
import { GRAPHQL_RESPONSE_JSON, resultMediaType } from '../request/media-type.js';
import { requestStateOf, type CacheNotes } from '../request/request-state.js';
import type { RouterMetrics } from '../telemetry/metrics.js';
import { repathErrors } from './completeness/repath-errors.js';
import { isUnanswered } from '../errors/unanswered.js';
import { missingOf, staleOf, type Completeness } from '../request/completeness.js';

export interface CompletenessOptions {
  metrics?: RouterMetrics;
  /** Maps an operation name to its metric label (bounded cardinality). */
  operationLabel?: (name: string | null | undefined) => string;
  /** `partial` (default): `extensions.completeness` only on answers that are not complete; `always`: on every executed answer. */
  extension?: 'partial' | 'always';
}

export type { Completeness, MissingSection } from '../request/completeness.js';

const TIMEOUT_CODES = new Set(['DEADLINE_EXCEEDED', 'SUBGRAPH_TIMEOUT']);
/**
 * After execution:
 * 1. Field errors are put at their exact paths (list indices included), one per failed field.
 * 2. `extensions.completeness = { complete, missing: [{ path, subgraph, code }] }`, stale copies included,
 *    on an answer that is not complete (and on every answer with `extension: 'always'`).
 * 3. Headers: `Switchyard-Completed: true|false`; `Cache-Control: no-store`, except on a complete
 *    answer made only of cacheable parts: `max-age=<least freshness left>, public|private`.
 * 4. Status: when `data` is null because a required section was lost because its subgraph could
 *    not answer (errors/unanswered.ts), a client reading `application/graphql-response+json` gets 504 if a
 *    deadline or timeout caused it and 502 otherwise; a subgraph's own GraphQL error keeps 200, and
 *    `application/json` keeps 200 (GraphQL over HTTP). Never 206.
 * A result without `data` (a request error or a refusal: nothing executed) gets none of this.
 */
export function useCompleteness(options: CompletenessOptions = {}): Plugin {
  const { metrics } = options;
  const always = options.extension === 'always';
  return {
    onExecute({ args }) {
      return {
        onExecuteDone({ result, setResult }) {
          // A request error (no `data`: nothing was executed) is neither complete nor partial (use-request-validation sets its status).
          if (isAsyncIterable(result) || !('data' in result)) return;
          const context = args.contextValue as Partial<YogaInitialContext>;
          const state = requestStateOf(args.contextValue);
          const errors = result.errors?.length ? repathErrors(result.errors as readonly GraphQLError[], result.data) : undefined;
          const missing = [...missingOf(errors), ...staleOf(state.stale)];
          const complete = missing.length === 0 && !errors?.length;
          const headers: Record<string, string> = { 'switchyard-completed': String(complete) };
          headers['cache-control'] = complete ? cacheControlOf(state.cache) : 'no-store';
          let status: number | undefined;
          // A subgraph that answered with its own GraphQL error keeps 200: it answered.
          const lost = result.data === null ? errors?.filter(isUnanswered) : undefined;
          if (lost?.length && resultMediaType(context.request?.headers.get('accept')) === GRAPHQL_RESPONSE_JSON) {
            status = lost.some((e) => TIMEOUT_CODES.has(String(e.extensions?.code))) ? 504 : 502;
          }
          if (!complete && metrics) {
            const name = args.operationName ?? state.operationName;
            metrics.partialResponses.inc({ operation: (options.operationLabel ?? metrics.operationLabel)(name) });
            for (const section of missing) metrics.missingSections.inc({ subgraph: section.subgraph ?? '(router)', code: section.code });
          }
          const http = { headers, ...(status !== undefined ? { status } : {}) };
          const next: ExecutionResult = {
            ...result,
            ...(errors ? { errors } : {}),
            extensions: complete && !always ? { ...result.extensions, http } : { ...result.extensions, completeness: { complete, missing } satisfies Completeness, http },
          };
          setResult(next);
        },
      };
    },
  };
}

/** A complete answer's `Cache-Control`: shared caches may keep it only when every part of it is cacheable (section cache notes). */
function cacheControlOf(notes: CacheNotes | undefined): string {
  if (!notes || notes.uncacheable || !Number.isFinite(notes.freshForMs)) return 'no-store';
  return `max-age=${Math.floor(notes.freshForMs / 1000)}, ${notes.private ? 'private' : 'public'}`;
}
