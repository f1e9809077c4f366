// The default branch of every switch over a closed union: a case left out fails the typecheck instead of compiling into a silent no-op.

/**
 * Call in the `default` branch of a switch over a closed union (`switch (change.action)`): once every
 * member has its case, `value` is narrowed to `never` and this compiles; a member added to the union
 * and forgotten in the switch makes it a type error. Should a value outside the union arrive anyway
 * (data from a file or a table cast to the union), it throws rather than doing nothing.
 */
export function assertNever(value: never, what = 'value'): never {
  throw new Error(`unexpected ${what}: ${JSON.stringify(value) ?? String(value)}`);
}
