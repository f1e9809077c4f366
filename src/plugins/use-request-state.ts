// Creates every GraphQL request's state on the graph served when it starts (503 SCHEMA_NOT_READY while there is none), and reads its operation once.
import type { ServerResponse } from 'node:http';
import type { DocumentNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GraphHolder } from '../gateway/served-graph.js';
import { analyseOperation } from '../request/operation-analysis.js';
import { requestStateOf } from '../request/request-state.js';
import { errorResponse } from './http-error-response.js';

/** 2. The operation that runs, for every plugin after this one (a subscription's too). */
function readOperation({ args }: { args: { contextValue: unknown; document: DocumentNode; operationName?: string | null } }): void {
  const state = requestStateOf(args.contextValue);
  state.operation = analyseOperation(args.document, args.operationName).operation;
  state.operationName = state.operation?.name?.value;
}

/**
 * 1. Before the body is parsed: no composed graph, 503 SCHEMA_NOT_READY; otherwise the request's
 *    state (request-state.ts; made by the first hook that asked for it) starts on the graph served now. The schema
 *    factory (router.ts) reads the graph from it, so the schema and every plugin agree on the graph
 *    whatever swap happens while the request runs.
 * 2. At execution start: the operation that runs and its name, read once for every plugin after it
 *    from the document's operation analysis (memoised per document; decision 015).
 * Always installed, whatever features are on.
 */
export function useRequestState(graph: GraphHolder): Plugin {
  return {
    onRequestParse({ request, serverContext, endResponse, fetchAPI }) {
      const served = graph.current;
      if (!served) {
        endResponse(errorResponse(fetchAPI, request, serverContext, 'SCHEMA_NOT_READY', 'No graph is being served yet: publish a subgraph or fix the composition.', { 'retry-after': '1' }));
        return;
      }
      const context = serverContext as { res?: ServerResponse };
      requestStateOf(context).start(served, request, context.res);
    },
    onExecute: readOperation,
    onSubscribe: readOperation,
  };
}
