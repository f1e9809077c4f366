// Purge tags of cached sections: one per subgraph, per type and per entity, spelled the same by every router.
import { canonicalKeyText } from '../registry/cache-store.js';

/** Tag of every section a subgraph answered: `s:<subgraph>`. */
export function subgraphTag(subgraph: string): string {
  return `s:${subgraph}`;
}

/** Tag of every section holding an entity of a type: `t:<Type>`. */
export function typeTag(type: string): string {
  return `t:${type}`;
}

/**
 * Tag of one entity: `e:<Type>:<canonical key>`. The same entity must give the same tag whether the
 * key comes from a purge request, a subgraph's answer or a representation the planner built, so the key
 * is canonicalised (see canonicalKey). Type names cannot hold `:` (GraphQL names), so the tag is unambiguous.
 */
export function entityTag(type: string, key: Readonly<Record<string, unknown>>): string {
  return `e:${type}:${canonicalKey(key)}`;
}

/** A type or entity tag narrowed to one subgraph's sections (`s:<subgraph>+<tag>`), for a purge naming both. */
export function withinSubgraph(subgraphTagText: string, tag: string): string {
  return `${subgraphTagText}+${tag}`;
}

/**
 * The key's text, equal for equal entities however they were written: the registry's canonical form
 * (`canonicalEntityKey` in src/registry/cache-store.ts: keys sorted, scalars as strings, `__typename`
 * left out), so a purge stored there and a tag made here from a representation name the same entity.
 */
function canonicalKey(key: unknown): string {
  return canonicalKeyText(key);
}
