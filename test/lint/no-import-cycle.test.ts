// The lint rule that refuses import cycles, type-only imports included (scripts/eslint-no-import-cycle.js, decision 025).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noImportCycle } from '../../scripts/eslint-no-import-cycle.js';

let dir: string;
const files: Record<string, string> = {
  // a → b by a type-only import, b → a by a type-only import: invisible to import-x/no-cycle.
  'a.ts': "import type { B } from './b.js';\nexport interface A { b?: B }\n",
  'b.ts': "import type { A } from './a.js';\nexport interface B { a?: A }\n",
  // c → d → e → c, one edge of each kind.
  'c.ts': "import { d } from './d.js';\nexport const c = () => d;\n",
  'd.ts': "export type { E } from './e.js';\nexport const d = 1;\n",
  'e.ts': "import type { c } from './c.js';\nexport type E = typeof c;\n",
  // f → g only: no way back.
  'f.ts': "import type { G } from './g.js';\nexport type F = G;\n",
  'g.ts': 'export type G = string;\n',
};

function lint(name: string) {
  const linter = new Linter({ configType: 'flat', cwd: dir });
  const config = [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser as Linter.Parser }, plugins: { switchyard: { rules: { 'no-import-cycle': noImportCycle } } }, rules: { 'switchyard/no-import-cycle': 'error' as const } }];
  return linter.verify(files[name], config, { filename: path.join(dir, name) }).map((m) => m.message.replaceAll(`${path.relative(process.cwd(), dir)}${path.sep}`, ''));
}

describe('no-import-cycle', () => {
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'switchyard-cycle-'));
    await Promise.all(Object.entries(files).map(([name, text]) => writeFile(path.join(dir, name), text)));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('refuses a cycle made of type-only imports, naming the way back', () => {
    expect(lint('a.ts')).toEqual(['import cycle (type imports count): a.ts → b.ts → a.ts']);
  });

  it('follows re-exports and mixed edges through several files', () => {
    expect(lint('c.ts')).toEqual(['import cycle (type imports count): c.ts → d.ts → e.ts → c.ts']);
    expect(lint('e.ts')).toEqual(['import cycle (type imports count): e.ts → c.ts → d.ts → e.ts']);
  });

  it('lets imports that lead nowhere back pass', () => {
    expect(lint('f.ts')).toEqual([]);
    expect(lint('g.ts')).toEqual([]);
  });
});
