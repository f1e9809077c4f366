// docs/architecture.md is the map a newcomer reads: its table of plugins must list router.ts's plugins in the order router.ts installs them.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** The plugin factories `createRouter` calls, in source order (the operation queue's plugin is made by the queues it gets). */
function installedOrder(): string[] {
  const source = read('src/router.ts');
  const body = source.slice(source.indexOf('export function createRouter('), source.indexOf('return createYoga('));
  const calls = [...body.matchAll(/\b(use[A-Z]\w*)\(|\bdeps\.queues\.plugin\b/g)].map((match) => match[1] ?? 'useOperationQueue');
  return calls;
}

/** The plugins the architecture page lists, in its table's order: the first `useX` of each row. */
function documentedOrder(): string[] {
  const doc = read('docs/architecture.md');
  const start = doc.indexOf('## The plugins, in the order they run');
  expect(start, 'docs/architecture.md has a section "## The plugins, in the order they run"').toBeGreaterThan(-1);
  const section = doc.slice(start, doc.indexOf('\n## ', start + 1));
  return section
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .map((line) => /`(use[A-Z]\w*)`/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined);
}

describe('the architecture page', () => {
  it('lists every plugin router.ts installs, in the order it installs them', () => {
    const installed = installedOrder();
    expect(installed.length).toBeGreaterThan(15);
    expect(documentedOrder()).toEqual(installed);
  });
});
