// Subgraph errors as clients see them: catalogue code, subgraph name, problem details; no stack traces or addresses.
import type { ExecutionResult, GraphQLError, GraphQLFormattedError } from 'graphql';
import { clientError } from '../errors/client-error.js';

/** URLs, IPv4/IPv6 addresses with optional ports, and file locations from stack frames. */
const SECRETS = [
  /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi,
  /\b(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?\b/g,
  /\[[0-9a-f:]+\](?::\d{1,5})?/gi,
  /\(?\/[\w./-]+:\d+:\d+\)?/g,
];

/**
 * Keeps the first line of a subgraph's message (stack traces and dumps follow the first newline)
 * and replaces URLs and addresses, which clients must never learn, with `[redacted]`.
 */
function redactMessage(message: unknown): string {
  let text = typeof message === 'string' && message.trim() ? message.split('\n', 1)[0].trim() : 'the subgraph returned an error';
  for (const pattern of SECRETS) text = text.replace(pattern, '[redacted]');
  return text.length > 500 ? `${text.slice(0, 497)}...` : text;
}

/**
 * Rewrites the errors of a subgraph's GraphQL response: the message (redacted) passes through, as
 * subgraphs write it for clients; `extensions.code` becomes SUBGRAPH_ERROR with the subgraph's own
 * code kept in `subgraphCode`; the subgraph's `path` is kept (the stitching layer maps it onto the
 * client's response) and its `locations` and other extensions (stack traces) are dropped.
 */
export function enrichSubgraphResult(result: ExecutionResult, subgraph: string): ExecutionResult {
  if (!result.errors?.length) return result;
  const errors: GraphQLError[] = (result.errors as readonly GraphQLFormattedError[]).map((error) => {
    const subgraphCode = typeof error.extensions?.code === 'string' ? error.extensions.code : undefined;
    return clientError('SUBGRAPH_ERROR', redactMessage(error.message), {
      subgraph,
      path: Array.isArray(error.path) ? error.path : undefined,
      extensions: subgraphCode ? { subgraphCode } : undefined,
    });
  });
  return { ...result, errors };
}
