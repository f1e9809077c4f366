// Answers 503 SCHEMA_NOT_READY, before any parsing, while the router has no composed graph to serve.
import type { Plugin } from 'graphql-yoga';
import { errorResponse } from './http-error-response.js';
import type { GraphHolder } from '../gateway/served-graph.js';

export function useServedGraph(graph: GraphHolder): Plugin {
  return {
    onRequestParse({ request, endResponse, fetchAPI }) {
      if (graph.current) return;
      endResponse(errorResponse(fetchAPI, request, 'SCHEMA_NOT_READY', 'No graph is being served yet: publish a subgraph or fix the composition.', { 'retry-after': '1' }));
    },
  };
}
