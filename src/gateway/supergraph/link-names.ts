// The names a supergraph spells each spec directive with, after its `@link(as:)` and `@link(import:)` renames: the one resolver every reader uses.
import { Kind, type ConstValueNode, type DocumentNode } from 'graphql';
import { argumentValue } from '../plan/join-directives.js';

/**
 * Local names (without `@`) of the directives and types Switchyard reads, as this supergraph spells them.
 * A reader compares `directive.name.value` with these, never with a literal.
 */
export interface LinkNames {
  joinType: string;
  joinField: string;
  joinGraph: string;
  joinImplements: string;
  joinUnionMember: string;
  joinEnumValue: string;
  /** Prefixes of the join and link specs' own types (`join__FieldSet`, `link__Import`), which no subgraph serves. */
  machineryPrefixes: readonly string[];
  /** The `join__Graph` enum (a type: `as:` renames it, an import cannot). */
  joinGraphEnum: string;
  cost: string;
  listSize: string;
  authenticated: string;
  requiresScopes: string;
  policy: string;
  cacheControl: string;
  inaccessible: string;
  tag: string;
}

interface Link {
  /** `as:` of the link, else the spec's name from its URL. */
  namespace: string;
  /** Element name → local name, both without `@`. */
  imports: Map<string, string>;
}

/**
 * Reads the supergraph's `@link`s (core schema spec, https://specs.apollo.dev/link/v1.0) once:
 *
 * 1. A link's spec is the path segment before the version in its URL
 *    (`https://specs.apollo.dev/requiresScopes/v0.1` → `requiresScopes`); its namespace is `as:`, else
 *    that name. Legacy `@core(feature:)` links are read the same way.
 * 2. An element imported by the spec's link (`import: ["@x"]` or `import: [{ name: "@x", as: "@y" }]`)
 *    takes the imported name. Otherwise the directive named like the spec is `@namespace`
 *    (`@authenticated`, `@cost`, or `@price` under `as: "price"`), and any other element is
 *    `@namespace__element` (`@join__field`, `@cost__listSize`).
 * 3. A spec the supergraph does not link may still be imported by another link (federation's own
 *    link imports `@authenticated` in a hand-written supergraph; `@cacheControl` comes from whatever
 *    spec a subgraph composed it from): that import's local name counts.
 * 4. With no link and no import, the name is the federation default: `@join__type` and friends for
 *    the join spec, the plain directive name (`@cost`, `@authenticated`, `@cacheControl`) for the others.
 */
export function readLinkNames(document: DocumentNode): LinkNames {
  const links = new Map<string, Link>();
  /** Imports of every link, element → local name: where a directive arrives through another spec's link (rule 3). */
  const importedAnywhere = new Map<string, string>();
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.SCHEMA_DEFINITION && definition.kind !== Kind.SCHEMA_EXTENSION) continue;
    for (const directive of definition.directives ?? []) {
      if (directive.name.value !== 'link' && directive.name.value !== 'core') continue;
      const url = argumentValue(directive, 'url') ?? argumentValue(directive, 'feature');
      if (url?.kind !== Kind.STRING) continue;
      const imports = readImports(argumentValue(directive, 'import'));
      for (const [element, local] of imports) if (!importedAnywhere.has(element)) importedAnywhere.set(element, local);
      const spec = /\/([A-Za-z_][\w-]*)\/v\d+\.\d+\/?$/.exec(url.value)?.[1];
      if (!spec || links.has(spec)) continue;
      const as = argumentValue(directive, 'as');
      links.set(spec, { namespace: as?.kind === Kind.STRING ? as.value.replace(/^@/, '') : spec, imports });
    }
  }

  const element = (spec: string, name: string, unlinkedDefault: string, importedElsewhere = true): string => {
    const link = links.get(spec);
    if (link) return link.imports.get(name) ?? (name === spec ? link.namespace : `${link.namespace}__${name}`);
    return (importedElsewhere ? importedAnywhere.get(name) : undefined) ?? unlinkedDefault;
  };
  const join = links.get('join')?.namespace ?? 'join';
  return {
    // Join elements are never imported from another spec (`@type` there would be someone else's).
    joinType: element('join', 'type', 'join__type', false),
    joinField: element('join', 'field', 'join__field', false),
    joinGraph: element('join', 'graph', 'join__graph', false),
    joinImplements: element('join', 'implements', 'join__implements', false),
    joinUnionMember: element('join', 'unionMember', 'join__unionMember', false),
    joinEnumValue: element('join', 'enumValue', 'join__enumValue', false),
    machineryPrefixes: [`${join}__`, `${links.get('link')?.namespace ?? 'link'}__`],
    joinGraphEnum: `${join}__Graph`,
    cost: element('cost', 'cost', 'cost'),
    listSize: element('cost', 'listSize', 'listSize'),
    authenticated: element('authenticated', 'authenticated', 'authenticated'),
    requiresScopes: element('requiresScopes', 'requiresScopes', 'requiresScopes'),
    policy: element('policy', 'policy', 'policy'),
    // No spec of its own: subgraphs link it from wherever they define it (docs/caching.md), so only imports rename it.
    cacheControl: importedAnywhere.get('cacheControl') ?? 'cacheControl',
    inaccessible: element('inaccessible', 'inaccessible', 'inaccessible'),
    tag: element('tag', 'tag', 'tag'),
  };
}

/** `import: ["@x", { name: "@y", as: "@z" }]` → x → x, y → z (names without `@`). */
function readImports(value: ConstValueNode | undefined): Map<string, string> {
  const imports = new Map<string, string>();
  if (value?.kind !== Kind.LIST) return imports;
  for (const item of value.values) {
    if (item.kind === Kind.STRING) {
      const name = item.value.replace(/^@/, '');
      imports.set(name, name);
    } else if (item.kind === Kind.OBJECT) {
      const name = item.fields.find((f) => f.name.value === 'name')?.value;
      const as = item.fields.find((f) => f.name.value === 'as')?.value;
      if (name?.kind !== Kind.STRING) continue;
      imports.set(name.value.replace(/^@/, ''), (as?.kind === Kind.STRING ? as.value : name.value).replace(/^@/, ''));
    }
  }
  return imports;
}
