// Where the package's own files are, whether we run from src/ (tests) or dist/src/ (the built command).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function findPackageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'switchyard') return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('cannot find the switchyard package root');
    dir = parent;
  }
}

/** The folder holding package.json, schema/ and subgraphs/. Computed once at load. */
export const PACKAGE_ROOT = findPackageRoot();

/** SQL migrations of the metadata store. */
export const MIGRATIONS_DIR = path.join(PACKAGE_ROOT, 'schema', 'db');
