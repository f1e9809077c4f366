// How long a plan's fetched part may be cached, for whom, and what names it: read off its selection and the cache hints.
import { createHash } from 'node:crypto';
import { getNamedType, isCompositeType, Kind, print, visit, type DocumentNode, type GraphQLSchema, type OperationTypeNode, type SelectionSetNode } from 'graphql';
import type { CacheHint, CacheHints, CacheScope } from '../../cache/cache-hints.js';
import { PURGE_HORIZON_SECONDS } from '../../registry/cache-store.js';
import type { Fetch, FetchOperation, FetchStep, SelectionTree } from './plan-types.js';

/** The root types' default names, for a schema without that root type. */
const ROOT_NAMES: Record<FetchOperation, string> = { query: 'Query', mutation: 'Mutation', subscription: 'Subscription' };

/** A part's longest life, fresh and stale together: as long as routers remember purges. */
const LONGEST_LIFE_MS = PURGE_HORIZON_SECONDS * 1000;

/** The caching facts of one fetch step, the same for every request with the same hints. */
export interface SectionPolicy {
  /** How long a fetched part stays fresh, in ms; 0: never cached (a field in it has no max age). */
  readonly maxAgeMs: number;
  /** How long after that an expired part is kept as the fallback, in ms. */
  readonly staleMs: number;
  /** What the hints say; undefined: none says (the part is private when its subgraph receives a per-user token). */
  readonly scope: CacheScope | undefined;
  /** A hash of what the step asks (its subgraph selection): parts asked the same way share entries. */
  readonly signature: string;
  /** The client's variables the selection uses: their values are part of every key. */
  readonly variables: readonly string[];
  /** The composite types the part may hold: a purge by type reaches it (tags `t:<Type>`). */
  readonly types: readonly string[];
}

/**
 * Apollo's `@cacheControl` rules, applied to one step's selection (docs/caching.md):
 * - a field's max age is its own hint's; else, for a field of composite type, its type's hint
 *   (or its parent's with `inheritMaxAge`); else, for a scalar or enum, its parent's;
 * - the parent of an entity step's fields is the entity type (its hint); of a root field, nothing;
 * - the part's max age is the smallest of its fields'; one field without any makes it uncacheable;
 * - its scope is private when any hint on the way says PRIVATE, public when one says PUBLIC.
 * Stale time: the smallest `--stale-seconds` a rule on the way sets, else the router's default.
 */
export function sectionPolicy(schema: GraphQLSchema, hints: CacheHints, fetch: Fetch, step: FetchStep, defaultStaleMs: number): SectionPolicy {
  const walk = { minSeconds: Infinity, uncacheable: false, scope: undefined as CacheScope | undefined, staleSeconds: Infinity, types: new Set<string>() };
  const note = (hint: CacheHint | undefined) => {
    if (!hint) return;
    if (hint.scope === 'private' || (hint.scope === 'public' && walk.scope === undefined)) walk.scope = hint.scope;
    if (hint.staleSeconds !== undefined) walk.staleSeconds = Math.min(walk.staleSeconds, hint.staleSeconds);
  };
  function visitTree(tree: SelectionTree, typeName: string, parentSeconds: number | undefined): void {
    const type = schema.getType(typeName);
    const fields = type && 'getFields' in type ? type.getFields() : undefined;
    for (const field of tree.fields.values()) {
      if (field.name === '__typename') continue;
      const definition = fields?.[field.name];
      if (!definition) {
        walk.uncacheable = true;
        continue;
      }
      const named = getNamedType(definition.type);
      const hint = hints.at(`${typeName}.${field.name}`);
      note(hint);
      let seconds = hint?.maxAgeSeconds;
      if (seconds === undefined) {
        if (isCompositeType(named)) {
          const typeHint = hints.at(named.name);
          note(typeHint);
          seconds = hint?.inheritMaxAge ? parentSeconds : typeHint?.maxAgeSeconds;
        } else {
          seconds = parentSeconds;
        }
      } else if (isCompositeType(named)) {
        note(hints.at(named.name));
      }
      if (seconds === undefined) walk.uncacheable = true;
      else walk.minSeconds = Math.min(walk.minSeconds, seconds);
      if (field.selection) {
        walk.types.add(named.name);
        visitTree(field.selection, named.name, seconds);
      }
    }
    for (const [fragmentType, fragment] of tree.fragments) {
      walk.types.add(fragmentType);
      note(hints.at(fragmentType));
      visitTree(fragment, fragmentType, parentSeconds);
    }
  }
  const entityType = step.entityType;
  if (entityType === undefined) {
    visitTree(step.selection, schema.getRootType(fetch.operation as OperationTypeNode)?.name ?? ROOT_NAMES[fetch.operation], undefined);
  } else {
    const typeHint = hints.at(entityType);
    note(typeHint);
    walk.types.add(entityType);
    visitTree(step.selection, entityType, typeHint?.maxAgeSeconds);
  }
  const cacheable = fetch.operation === 'query' && !walk.uncacheable && Number.isFinite(walk.minSeconds) && walk.minSeconds > 0;
  const selection = selectionOf(fetch, step);
  // Purges are remembered for a day (docs/caching.md): no part may live longer, fresh and stale together.
  const maxAgeMs = cacheable ? Math.min(walk.minSeconds * 1000, LONGEST_LIFE_MS) : 0;
  return {
    maxAgeMs,
    staleMs: Math.min(Number.isFinite(walk.staleSeconds) ? walk.staleSeconds * 1000 : defaultStaleMs, LONGEST_LIFE_MS - maxAgeMs),
    scope: walk.scope,
    signature: createHash('sha256').update(`${fetch.subgraph}\n${print(selection)}`).digest('base64url').slice(0, 22),
    variables: variablesIn(selection, step.representationsVariable),
    types: [...walk.types],
  };
}

/** What the step asks of its subgraph: the `_entities` field's selection, or the whole root document. */
function selectionOf(fetch: Fetch, step: FetchStep): DocumentNode | SelectionSetNode {
  if (step.entityType === undefined) return fetch.document;
  const responseKey = step.alias ?? '_entities';
  for (const definition of fetch.document.definitions) {
    if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
    for (const selection of definition.selectionSet.selections) {
      if (selection.kind === Kind.FIELD && (selection.alias?.value ?? selection.name.value) === responseKey && selection.selectionSet) return selection.selectionSet;
    }
  }
  return fetch.document;
}

function variablesIn(node: DocumentNode | SelectionSetNode, representations: string | undefined): string[] {
  const names = new Set<string>();
  visit(node, {
    VariableDefinition: () => false,
    Variable(variable) {
      if (variable.name.value !== representations) names.add(variable.name.value);
    },
  });
  return [...names].sort();
}
