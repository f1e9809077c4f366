// Rewrites the README's error table from the catalogue: `npm run docs:errors`.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from '../src/config/paths.js';
import { replaceErrorTable } from '../src/errors/error-table.js';

const file = path.join(PACKAGE_ROOT, 'README.md');
writeFileSync(file, replaceErrorTable(readFileSync(file, 'utf8')));
console.log('README.md error table updated');
