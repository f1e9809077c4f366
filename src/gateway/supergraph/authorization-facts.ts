// What the supergraph demands of a caller: `@authenticated` and `@requiresScopes` on types and fields, under whatever names its `@link`s give them.
import { Kind, type ConstDirectiveNode, type DocumentNode } from 'graphql';
import type { Requirement } from '../../security/authorization.js';
import type { LinkNames } from './link-names.js';

/**
 * `@authenticated` and `@requiresScopes` on fields (`Type.field`) and types (`Type`) of a supergraph,
 * by the names `names` resolved from its `@link`s: a supergraph that imports `@authenticated` as
 * `@mustBeLoggedIn` is enforced on `@mustBeLoggedIn`, and a literal `@authenticated` there is someone
 * else's directive. `@requiresScopes` implies `@authenticated`.
 */
export function readRequirements(document: DocumentNode, names: Pick<LinkNames, 'authenticated' | 'requiresScopes'>): Map<string, Requirement> {
  const requirements = new Map<string, Requirement>();
  const read = (directives: readonly ConstDirectiveNode[] | undefined): Requirement | undefined => {
    let requirement: Requirement | undefined;
    for (const directive of directives ?? []) {
      if (directive.name.value === names.authenticated) requirement = { ...requirement, authenticated: true };
      if (directive.name.value === names.requiresScopes) {
        const value = directive.arguments?.find((a) => a.name.value === 'scopes')?.value;
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
    if (definition.kind !== Kind.OBJECT_TYPE_DEFINITION && definition.kind !== Kind.OBJECT_TYPE_EXTENSION && definition.kind !== Kind.INTERFACE_TYPE_DEFINITION) continue;
    const typeRequirement = read(definition.directives);
    if (typeRequirement) requirements.set(definition.name.value, typeRequirement);
    for (const field of definition.fields ?? []) {
      const requirement = read(field.directives);
      if (requirement) requirements.set(`${definition.name.value}.${field.name.value}`, requirement);
    }
  }
  return requirements;
}
