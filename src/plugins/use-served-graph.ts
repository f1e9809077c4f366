// Answers 503 SCHEMA_NOT_READY, before any parsing, while the router has no composed graph to serve.
import type { Plugin } from 'graphql-yoga';
import { errorExtensions } from '../errors/client-error.js';
import type { GraphHolder } from '../gateway/served-graph.js';

export function useServedGraph(graph: GraphHolder): Plugin {
  return {
    onRequestParse({ request, endResponse, fetchAPI }) {
      if (graph.current) return;
      const message = 'No graph is being served yet: publish a subgraph or fix the composition.';
      const accept = request.headers.get('accept') ?? '';
      // GraphQL over HTTP: clients that accept the newer media type get it; others get application/json.
      const contentType = accept.includes('application/graphql-response+json') ? 'application/graphql-response+json; charset=utf-8' : 'application/json; charset=utf-8';
      endResponse(
        new fetchAPI.Response(JSON.stringify({ errors: [{ message, extensions: errorExtensions('SCHEMA_NOT_READY', message) }] }), {
          status: 503,
          headers: { 'content-type': contentType, 'retry-after': '1' },
        }),
      );
    },
  };
}
