// Reading the arguments of the supergraph's directives (`@join__type(graph: G, key: "id")`, `@link(url:)`, `@cost(weight:)`), for every reader of the supergraph.
import { Kind, type ConstDirectiveNode, type ConstValueNode } from 'graphql';

/** The value of one argument of a directive, as written; undefined when absent. */
export function argumentValue(directive: ConstDirectiveNode | undefined, name: string): ConstValueNode | undefined {
  return directive?.arguments?.find((a) => a.name.value === name)?.value;
}

export function stringArgument(directive: ConstDirectiveNode | undefined, name: string): string | undefined {
  const value = argumentValue(directive, name);
  return value?.kind === Kind.STRING ? value.value : undefined;
}

export function enumArgument(directive: ConstDirectiveNode | undefined, name: string): string | undefined {
  const value = argumentValue(directive, name);
  return value?.kind === Kind.ENUM ? value.value : undefined;
}

export function booleanArgument(directive: ConstDirectiveNode | undefined, name: string): boolean | undefined {
  const value = argumentValue(directive, name);
  return value?.kind === Kind.BOOLEAN ? value.value : undefined;
}
