// Which errors say that a subgraph could not answer (as opposed to answering with its own GraphQL error).

/** The part of a GraphQL error these checks read (a GraphQLError or its formatted form). */
export interface GraphQLFormattedErrorLike {
  readonly extensions?: Readonly<Record<string, unknown>> | null;
}

/** Codes of sections lost because their subgraph could not answer: unreachable, timeout, deadline, open circuit. */
const UNANSWERED_CODES = new Set(['SUBGRAPH_UNAVAILABLE', 'SUBGRAPH_TIMEOUT', 'DEADLINE_EXCEEDED', 'CIRCUIT_OPEN']);

/**
 * Whether the error says the subgraph could not answer. SUBGRAPH_ERROR is one only with
 * `subgraphStatus`, the HTTP status of an answer that was not a GraphQL response (a 5xx page):
 * without it, the subgraph answered with its own GraphQL error.
 */
export function isUnanswered(error: GraphQLFormattedErrorLike): boolean {
  const code = String(error.extensions?.code);
  return UNANSWERED_CODES.has(code) || (code === 'SUBGRAPH_ERROR' && typeof error.extensions?.subgraphStatus === 'number');
}
