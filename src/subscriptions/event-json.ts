// An event as every transport writes it: masked once, serialized once, whatever the number of clients that get it.
import type { ExecutionResult, GraphQLError, GraphQLFormattedError } from 'graphql';
import { maskedErrors } from '../errors/mask-errors.js';

/**
 * An event's errors masked as yoga masks a query's (errors/mask-errors.ts). The transports write a
 * group's events themselves, outside yoga's result hooks, so the group masks each event once here.
 * Returns the event itself when nothing was masked.
 */
export function maskedEvent(result: ExecutionResult, onMasked: (error: unknown) => void): ExecutionResult {
  const errors = result.errors?.length ? maskedErrors(result.errors, onMasked) : undefined;
  return errors ? { ...result, errors } : result;
}

/** An error as the client reads it: its JSON form, without the `http` extension yoga keeps for itself. */
export function formattedError(error: GraphQLError | GraphQLFormattedError): GraphQLFormattedError {
  const json = (error as GraphQLError).toJSON?.() ?? error;
  if (!json.extensions || !('http' in json.extensions)) return json;
  const { http: _http, ...extensions } = json.extensions;
  return { ...json, extensions };
}

const serialized = new WeakMap<ExecutionResult, string>();

/**
 * A result's JSON, made on first use and kept as long as the result: a group hands every member the
 * same result object, so 1,000 clients of one event cost one `JSON.stringify`.
 */
export function jsonOf(result: ExecutionResult): string {
  let json = serialized.get(result);
  if (json === undefined) {
    json = result.errors?.length ? JSON.stringify({ ...result, errors: result.errors.map(formattedError) }) : JSON.stringify(result);
    serialized.set(result, json);
  }
  return json;
}
