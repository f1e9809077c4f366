// The error a field the caller may not read answers with: one message, whichever engine (plans or stitching) resolves the field.
import { clientError } from '../errors/client-error.js';

/** FORBIDDEN at the field's path: what the stitching guards throw and the plan runner puts in place of a denied field. */
export function forbiddenField(coordinate: string): Error {
  return clientError('FORBIDDEN', `Not allowed to read ${coordinate}.`);
}
