// What the supergraph demands of a caller: `@authenticated` and `@requiresScopes` on types and fields, under whatever names its `@link`s give them.
import { Kind, isTypeDefinitionNode, isTypeExtensionNode, type ConstDirectiveNode, type DocumentNode } from 'graphql';
import type { Requirement } from '../../security/authorization.js';
import { argumentValue } from '../plan/join-directives.js';
import type { LinkNames } from './link-names.js';

/**
 * `@authenticated` and `@requiresScopes` on fields (`Type.field`) and types (`Type`) of a supergraph,
 * by the names `names` resolved from its `@link`s: a supergraph that imports `@authenticated` as
 * `@mustBeLoggedIn` is enforced on `@mustBeLoggedIn`, and a literal `@authenticated` there is someone
 * else's directive. `@requiresScopes` implies `@authenticated`. Every kind of type may carry them
 * (the specs allow objects, interfaces, scalars and enums): a field returning such a type needs them too.
 */
export function readRequirements(document: DocumentNode, names: Pick<LinkNames, 'authenticated' | 'requiresScopes'>): Map<string, Requirement> {
  const requirements = new Map<string, Requirement>();
  const read = (directives: readonly ConstDirectiveNode[] | undefined): Requirement | undefined => {
    let requirement: Requirement | undefined;
    for (const directive of directives ?? []) {
      if (directive.name.value === names.authenticated) requirement = { ...requirement, authenticated: true };
      if (directive.name.value === names.requiresScopes) {
        const value = argumentValue(directive, 'scopes');
        const groups =
          value?.kind === Kind.LIST
            ? value.values.map((group) => (group.kind === Kind.LIST ? group.values.map((scope) => String('value' in scope ? scope.value : '')) : [String('value' in group ? group.value : '')]))
            : [];
        requirement = { authenticated: true, ...requirement, scopes: groups };
      }
    }
    return requirement;
  };
  for (const definition of document.definitions) {
    if (!isTypeDefinitionNode(definition) && !isTypeExtensionNode(definition)) continue;
    const typeRequirement = read(definition.directives);
    if (typeRequirement) requirements.set(definition.name.value, typeRequirement);
    if (
      definition.kind !== Kind.OBJECT_TYPE_DEFINITION &&
      definition.kind !== Kind.OBJECT_TYPE_EXTENSION &&
      definition.kind !== Kind.INTERFACE_TYPE_DEFINITION &&
      definition.kind !== Kind.INTERFACE_TYPE_EXTENSION
    )
      continue;
    for (const field of definition.fields ?? []) {
      const requirement = read(field.directives);
      if (requirement) requirements.set(`${definition.name.value}.${field.name.value}`, requirement);
    }
  }
  return requirements;
}
