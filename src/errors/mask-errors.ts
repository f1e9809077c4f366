// Errors masked as yoga masks a result's own `errors`, for the errors yoga's masking does not reach.
import { maskError } from 'graphql-yoga';
import type { GraphQLError } from 'graphql';

/** What a client reads instead of an unexpected error (yoga's `maskedErrors`, isDev false). */
export const MASKED_MESSAGE = 'Unexpected error.';

/**
 * `errors` masked as yoga masks a result's: an unexpected error becomes `Unexpected error.` with
 * INTERNAL_SERVER_ERROR, a GraphQL error keeps its message and code. `onMasked` hears each error
 * that was masked (for the log). Answers undefined when nothing was masked, so the caller keeps its
 * object as it is.
 */
export function maskedErrors(errors: readonly GraphQLError[], onMasked: ((error: unknown) => void) | undefined): GraphQLError[] | undefined {
  let changed = false;
  const masked = errors.map((error) => {
    const safe = maskError(error, MASKED_MESSAGE, false) as GraphQLError;
    if (safe !== error) {
      changed = true;
      onMasked?.(error);
    }
    return safe;
  });
  return changed ? masked : undefined;
}

/** A result with its own `errors` masked (`maskedErrors`): the result itself when nothing was masked. */
export function maskedResult<T extends { readonly data?: unknown; readonly errors?: readonly GraphQLError[] }>(result: T, onMasked: ((error: unknown) => void) | undefined): T {
  const errors = result.errors?.length ? maskedErrors(result.errors, onMasked) : undefined;
  return errors ? { ...result, errors } : result;
}
