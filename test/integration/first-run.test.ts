// The first `npx switchyard …` on a fresh clone, right after `npm install`: the CLI builds itself, or says what to run.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** A checkout as `git clone` leaves it: the sources and the bin, no dist/; with `node_modules` when installed. */
function freshCheckout(installed: boolean): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-first-run-'));
  for (const entry of ['bin', 'src', 'subgraphs', 'schema', 'package.json', 'tsconfig.json']) cpSync(path.join(ROOT, entry), path.join(dir, entry), { recursive: true, filter: (source) => !source.endsWith('.test.ts') });
  if (installed) symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  return dir;
}

function switchyard(dir: string, args: string[]) {
  return spawnSync(process.execPath, [path.join(dir, 'bin', 'switchyard.js'), ...args], { cwd: dir, encoding: 'utf8', timeout: 170_000 });
}

describe('the first command on a fresh clone', () => {
  const made: string[] = [];
  afterEach(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('after npm install: builds the CLI once, says so, and runs the command', { timeout: 180_000 }, () => {
    const dir = freshCheckout(true);
    made.push(dir);
    const first = switchyard(dir, ['--help']);
    expect(first.stderr).toMatch(/first run on this checkout: building the CLI/);
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/Usage: switchyard/);
    expect(existsSync(path.join(dir, 'dist', 'src', 'cli', 'main.js'))).toBe(true);
    const second = switchyard(dir, ['--help']);
    expect(second.status).toBe(0);
    expect(second.stderr).not.toMatch(/building/);
  });

  it('without TypeScript installed and never built: exit 2 and what to run, no stack trace', () => {
    const dir = freshCheckout(false);
    made.push(dir);
    const run = switchyard(dir, ['subgraph', 'list']);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/run `npm install`, then `npm run build`/);
    expect(run.stderr).not.toMatch(/ERR_MODULE_NOT_FOUND|at .*\.js:\d+/);
  });
});
