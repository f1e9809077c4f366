// Purge tags of cached sections: one per subgraph, per type and per entity, spelled the same by every router.

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
 * The key's text, equal for equal entities however they were written:
 * 1. Object keys are sorted (recursively), so `{a, b}` and `{b, a}` agree.
 * 2. Scalar leaves become strings, so `{"id":1}` and `{"id":"1"}` agree: IDs arrive as strings from
 *    some subgraphs and as numbers from others (and from a purge typed by hand). null stays null.
 * 3. `__typename` is ignored at every level: a representation carries it, a purge request need not.
 * 4. Arrays keep their order (a list in a key is a value, not a set); undefined members are dropped, as JSON does.
 * Written out by hand rather than through JSON.stringify of a sorted copy: an object puts integer-like
 * keys first whatever the insertion order, which would undo step 1.
 */
export function canonicalKey(key: unknown): string {
  if (key === null || key === undefined) return 'null';
  if (Array.isArray(key)) return `[${key.map(canonicalKey).join(',')}]`;
  if (typeof key === 'object') {
    const entries = Object.entries(key as Record<string, unknown>)
      .filter(([name, value]) => name !== '__typename' && value !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([name, value]) => `${JSON.stringify(name)}:${canonicalKey(value)}`).join(',')}}`;
  }
  return JSON.stringify(String(key));
}
