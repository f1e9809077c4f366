// A lint rule: no import cycles in src/, type-only imports included.
//
// import-x/no-cycle skips `import type` by design (a type import has no runtime effect) and has no option
// to count it. But a type cycle is still a layer in the wrong place: `request/` naming a type that
// `plugins/` defines ties the two as surely as code does, and hides it from the layer rules. So this rule
// walks every static `import`/`export … from` (type-only or not) and every `import()`, resolved the way
// tsc resolves them:
// 1. The graph is read lazily, one file at a time (TypeScript's `preProcessFile`, no type check), and
//    kept for the lint run; only files of the linted package outside node_modules are followed.
// 2. An import is reported when the file it reaches leads back to the importing file; the message shows
//    the shortest way back, so the edge to cut can be read off it.
import path from 'node:path';
import ts from 'typescript';

const compilerOptions = { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, allowJs: false };
const resolutionCache = ts.createModuleResolutionCache(process.cwd(), (name) => name, compilerOptions);
/** file → the project files it imports (absolute paths). */
const edges = new Map();

function resolve(specifier, fromFile) {
  const resolved = ts.resolveModuleName(specifier, fromFile, compilerOptions, ts.sys, resolutionCache).resolvedModule;
  if (!resolved || resolved.isExternalLibraryImport || resolved.resolvedFileName.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
  return path.resolve(resolved.resolvedFileName);
}

function importsOf(file) {
  let out = edges.get(file);
  if (out) return out;
  out = new Set();
  edges.set(file, out);
  const text = ts.sys.readFile(file);
  if (text === undefined) return out;
  for (const { fileName } of ts.preProcessFile(text, true, true).importedFiles) {
    const target = resolve(fileName, file);
    if (target && target !== file) out.add(target);
  }
  return out;
}

/** The shortest chain of files from `start` back to `goal`, or undefined when there is none. */
function wayBack(start, goal) {
  const cameFrom = new Map([[start, undefined]]);
  const queue = [start];
  while (queue.length > 0) {
    const file = queue.shift();
    for (const next of importsOf(file)) {
      if (cameFrom.has(next)) continue;
      cameFrom.set(next, file);
      if (next === goal) {
        const chain = [];
        for (let at = next; at !== undefined; at = cameFrom.get(at)) chain.unshift(at);
        return chain;
      }
      queue.push(next);
    }
  }
  return undefined;
}

export const noImportCycle = {
  meta: {
    type: 'problem',
    docs: { description: 'Forbid import cycles, type-only imports included' },
    schema: [],
    messages: { cycle: 'import cycle (type imports count): {{chain}}' },
  },
  create(context) {
    const file = path.resolve(context.physicalFilename);
    const check = (node) => {
      if (!node.source || typeof node.source.value !== 'string') return;
      const target = resolve(node.source.value, file);
      if (!target || target === file) return;
      const chain = wayBack(target, file);
      if (!chain) return;
      const relative = [file, ...chain].map((at) => path.relative(process.cwd(), at));
      context.report({ node, messageId: 'cycle', data: { chain: relative.join(' → ') } });
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check };
  },
};
