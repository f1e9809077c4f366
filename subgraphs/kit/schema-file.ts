// Finds and reads a demo subgraph's SDL in the repository's schema/ folder, from source or from dist/.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Reads `schema/<name>.graphql`. This module runs from `subgraphs/kit/` (vitest, tsx) or from
 * `dist/subgraphs/kit/` (compiled), and tsc does not copy .graphql files, so walk up from here to the
 * first folder that has the file instead of assuming a fixed depth.
 */
export function readSchemaFile(name: string, from: string = dirname(fileURLToPath(import.meta.url))): string {
  const relative = join('schema', `${name}.graphql`);
  for (let dir = from; ; ) {
    const candidate = join(dir, relative);
    if (existsSync(candidate)) return readFileSync(candidate, 'utf8');
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cannot find ${relative} in ${from} or any folder above it`);
    dir = parent;
  }
}
