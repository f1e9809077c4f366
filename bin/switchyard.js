#!/usr/bin/env node
// The `switchyard` command: runs the compiled CLI (dist/, which `npm run build` makes); on a checkout where it was never built, builds it first.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const main = new URL('../dist/src/cli/main.js', import.meta.url);

/**
 * `npx switchyard …` right after `npm install` on a fresh clone finds no dist/ (npm start and npm test
 * build it, npm install does not: a `prepare` build would run before the Dockerfile copies the
 * sources). So the first command builds it, with TypeScript from the dev dependencies, and says so;
 * without them (a production install that was never built) it says what to run. Exit 2 either way
 * when it cannot, as for any bad configuration.
 */
if (!existsSync(main)) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const tsc = new URL('../node_modules/typescript/bin/tsc', import.meta.url);
  if (!existsSync(tsc)) {
    console.error('switchyard: the CLI is not built (no dist/) and TypeScript is not installed here: run `npm install`, then `npm run build`.');
    process.exit(2);
  }
  console.error('switchyard: first run on this checkout: building the CLI into dist/ (npm run build)…');
  const build = spawnSync(process.execPath, [fileURLToPath(tsc), '-p', 'tsconfig.json'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  if (build.status !== 0) {
    console.error('switchyard: the build failed (see above); fix it, then run `npm run build`.');
    process.exit(2);
  }
}
await import(main.href);
