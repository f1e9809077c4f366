// Reading the arguments of the supergraph's join directives (`@join__type(graph: G, key: "id")`), for every reader of the supergraph.
import { Kind, type ConstDirectiveNode } from 'graphql';

function argumentValue(directive: ConstDirectiveNode | undefined, name: string) {
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
