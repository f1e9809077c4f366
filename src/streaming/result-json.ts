// A streamed payload as the client reads it: serialised once, without what yoga keeps for itself, whatever the number of clients that get it.
import type { ExecutionResult, GraphQLError, GraphQLFormattedError } from 'graphql';

/**
 * An error as the client reads it: its JSON form without the extensions yoga keeps for itself
 * (`http`: the status it asks for; `unexpected`: the mark of a masked error), as yoga's own
 * serialiser leaves them out of the answers it writes.
 */
export function formattedError(error: GraphQLError | GraphQLFormattedError): GraphQLFormattedError {
  const json = (error as GraphQLError).toJSON?.() ?? error;
  if (!json.extensions || !('http' in json.extensions || 'unexpected' in json.extensions)) return json;
  const { http: _http, unexpected: _unexpected, ...extensions } = json.extensions;
  return { ...json, extensions };
}

const serialized = new WeakMap<ExecutionResult, string>();

/**
 * A payload's JSON, made on first use and kept as long as the payload: a subscription's event group
 * hands every member the same result object, so 1,000 clients of one event cost one `JSON.stringify`.
 * Its own errors are written as `formattedError` writes them, and an `http` extension is left out.
 */
export function jsonOf(result: ExecutionResult): string {
  let json = serialized.get(result);
  if (json === undefined) {
    let written = result;
    if (result.errors?.length) written = { ...written, errors: result.errors.map(formattedError) as unknown as GraphQLError[] };
    if (result.extensions && 'http' in result.extensions) {
      const { http: _http, ...extensions } = result.extensions;
      written = { ...written, extensions };
    }
    json = JSON.stringify(written);
    serialized.set(result, json);
  }
  return json;
}
