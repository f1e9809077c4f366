// Types for the one `pg` internal we use (value-to-text conversion), which @types/pg does not declare.
declare module 'pg/lib/utils.js' {
  /** Converts a JS value to the text `pg` sends for a query parameter (null for null/undefined, Buffer kept). */
  export function prepareValue(value: unknown): string | Buffer | null;
  const utils: { prepareValue: typeof prepareValue };
  export default utils;
}
