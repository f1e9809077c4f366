// Puts each field error at the exact response path it belongs to, list indices included, one error per failed field.
import { GraphQLError } from 'graphql';

type Path = readonly (string | number)[];

/**
 * The concrete paths in `data` that an error path may stand for. The stitching layer reports a
 * failed field of a list's items once per item but without the item's index (`products.reviews`
 * for `products.3.reviews`), so:
 * 1. Walk `data` along the path; where the data is a list and the path has no index, try every item.
 * 2. A candidate counts if the field at its end is null (the field that failed), or if the walk met
 *    a null before the end (the failure bubbled up to a nullable parent, GraphQL spec 6.4.4): then
 *    the rest of the error path is kept as it is.
 * 3. No candidate (the data does not show the failure): the original path stands.
 */
function concretePaths(data: unknown, path: Path): Path[] {
  const found: Path[] = [];
  const walk = (value: unknown, index: number, prefix: (string | number)[]): void => {
    if (index === path.length) {
      if (value === null || value === undefined) found.push(prefix);
      return;
    }
    if (value === null || value === undefined) {
      found.push([...prefix, ...path.slice(index)]);
      return;
    }
    if (Array.isArray(value)) {
      const segment = path[index];
      if (typeof segment === 'number') walk(value[segment], index + 1, [...prefix, segment]);
      else value.forEach((item, i) => walk(item, index, [...prefix, i]));
      return;
    }
    if (typeof value !== 'object') return;
    const segment = path[index];
    walk((value as Record<string, unknown>)[segment], index + 1, [...prefix, segment]);
  };
  walk(data, 0, []);
  return found.length > 0 ? found : [path];
}

function relocate(error: GraphQLError, path: Path): GraphQLError {
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path,
    originalError: error.originalError,
    extensions: error.extensions,
  });
}

function samePath(a: Path | undefined, b: Path): boolean {
  return a !== undefined && a.length === b.length && a.every((segment, i) => segment === b[i]);
}

/**
 * Rewrites `errors` so each failed field has exactly one error at its concrete path. Errors that
 * the stitching layer repeated for the items of a list are spread over the items, in order; an
 * error without a path (a request-level error) is kept as it is.
 */
export function repathErrors(errors: readonly GraphQLError[], data: unknown): GraphQLError[] {
  const groups = new Map<string, GraphQLError[]>();
  const output: GraphQLError[] = [];
  for (const error of errors) {
    if (!error.path) {
      output.push(error);
      continue;
    }
    const key = JSON.stringify(error.path);
    const group = groups.get(key);
    if (group) group.push(error);
    else groups.set(key, [error]);
  }
  const placed = new Set<string>();
  for (const group of groups.values()) {
    const candidates = concretePaths(data, group[0].path!);
    candidates.forEach((path, i) => {
      const key = JSON.stringify(path);
      if (placed.has(key)) return;
      placed.add(key);
      const error = group[Math.min(i, group.length - 1)];
      output.push(samePath(error.path, path) ? error : relocate(error, path));
    });
  }
  return output;
}
