// The supergraph's `@cacheControl` hints by coordinate, under whatever name its `@link`s give the directive.
import { Kind, type ConstDirectiveNode, type DocumentNode } from 'graphql';
import type { CacheHint, CacheScope } from '../../cache/cache-hints.js';

/**
 * The supergraph's `@cacheControl` hints by coordinate (`Type`, `Type.field`). Subgraphs declare the
 * directive themselves and pass it through composition with `@composeDirective` (docs/caching.md); an
 * `@link` that imports it under another name (`import: [{ name: "@cacheControl", as: "@hint" }]`) is
 * followed: `name` is what link-names.ts resolved.
 */
export function readCacheHints(document: DocumentNode, name: string): Map<string, CacheHint> {
  const hints = new Map<string, CacheHint>();
  for (const definition of document.definitions) {
    if (
      definition.kind !== Kind.OBJECT_TYPE_DEFINITION &&
      definition.kind !== Kind.OBJECT_TYPE_EXTENSION &&
      definition.kind !== Kind.INTERFACE_TYPE_DEFINITION &&
      definition.kind !== Kind.INTERFACE_TYPE_EXTENSION &&
      definition.kind !== Kind.UNION_TYPE_DEFINITION &&
      definition.kind !== Kind.UNION_TYPE_EXTENSION
    ) {
      continue;
    }
    const typeName = definition.name.value;
    const typeHint = hintOf(definition.directives, name);
    if (typeHint) hints.set(typeName, typeHint);
    if (definition.kind === Kind.UNION_TYPE_DEFINITION || definition.kind === Kind.UNION_TYPE_EXTENSION) continue;
    for (const field of definition.fields ?? []) {
      const fieldHint = hintOf(field.directives, name);
      if (fieldHint) hints.set(`${typeName}.${field.name.value}`, fieldHint);
    }
  }
  return hints;
}

function hintOf(directives: readonly ConstDirectiveNode[] | undefined, name: string): CacheHint | undefined {
  const directive = directives?.find((d) => d.name.value === name);
  if (!directive) return undefined;
  let maxAgeSeconds: number | undefined;
  let scope: CacheScope | undefined;
  let inheritMaxAge: boolean | undefined;
  for (const argument of directive.arguments ?? []) {
    const value = argument.value;
    if (argument.name.value === 'maxAge' && value.kind === Kind.INT) maxAgeSeconds = Math.max(0, Number(value.value));
    else if (argument.name.value === 'scope' && value.kind === Kind.ENUM) scope = value.value === 'PRIVATE' ? 'private' : value.value === 'PUBLIC' ? 'public' : undefined;
    else if (argument.name.value === 'inheritMaxAge' && value.kind === Kind.BOOLEAN) inheritMaxAge = value.value;
  }
  return { maxAgeSeconds, scope, inheritMaxAge };
}
