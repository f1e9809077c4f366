// `@skip` / `@include`: whether a selection executes, read the same way by cost analysis and the query plans.
import type { DirectiveNode, ValueNode } from 'graphql';

/**
 * `@skip(if:)` and `@include(if:)` (GraphQL spec 3.13.2, 3.13.3): false when either leaves the
 * selection out. `valueOf` reads an `if` argument (a literal, or a variable with its default).
 * Shared by cost analysis and the query plans' decision to skip a look-up.
 */
export function includedByConditions(directives: readonly DirectiveNode[] | undefined, valueOf: (value: ValueNode) => unknown): boolean {
  if (!directives || directives.length === 0) return true;
  for (const directive of directives) {
    const name = directive.name.value;
    if (name !== 'skip' && name !== 'include') continue;
    const condition = directive.arguments?.find((argument) => argument.name.value === 'if')?.value;
    const value = condition ? valueOf(condition) : undefined;
    if (name === 'skip' && value === true) return false;
    if (name === 'include' && value === false) return false;
  }
  return true;
}
