// Turns a scenario's GraphQL request into the HTTP request every gateway receives, with an Authorization header of its own.
import type { LoadRequest } from './load.js';
import type { GraphQLRequestBody } from './types.js';

/**
 * Headers as a browser-era GraphQL client sends them. The unique bearer token defeats any gateway that
 * would answer identical concurrent requests by executing one (request deduplication keyed on headers).
 */
export function toLoadRequest(body: GraphQLRequestBody, id: number | string, extraHeaders?: Record<string, string>): LoadRequest {
  return {
    body: JSON.stringify(body),
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json, application/json;q=0.9',
      authorization: `Bearer bench-${id}`,
      // A scenario's own headers (Scenario.headers) win, e.g. a real JWT as the Authorization.
      ...extraHeaders,
    },
  };
}
