// The configuration file of `switchyard config export|apply`: its schema (zod, over the stores' own rules) and its YAML form, in and out.
import { isMap, isScalar, isSeq, LineCounter, parseDocument, stringify, type Node } from 'yaml';
import { z } from 'zod';
import { SECTIONS } from './config-sections/sections.js';
import type { SectionList } from './config-sections/section.js';

export type { CacheRuleConfig } from './config-sections/cache-rules.js';
export { compareText } from './config-sections/section.js';
export type { SubgraphConfig } from './config-sections/subgraphs.js';
export type { ManifestReference } from './config-sections/trusted-documents.js';

/** The file format's version, the file's first key: a later format can then be told apart and refused or converted. */
export const CONFIG_FORMAT_VERSION = 1;

type Section = (typeof SECTIONS)[number];

/** The name of a section of the file (`subgraphs`, `policies`, `permissions`, `cacheRules`, `trustedDocuments`, `cors`). */
export type ConfigSection = Section['name'];

/**
 * The registry's live configuration, as one file holds it: the format's version, then one key per
 * section (config-sections/sections.ts), each as its descriptor's schema outputs it. Every section is
 * optional: a section the file leaves out is not managed by it (apply, even with `--prune`, leaves it
 * alone); export writes them all. Within a section, each item is described whole.
 */
export type ConfigDocument = { version: typeof CONFIG_FORMAT_VERSION } & { [S in Section as S['name']]?: z.output<S['schema']> };

/** A section's value in a document, or undefined when the document does not hold the section. */
export const sectionValue = (document: ConfigDocument, name: string): unknown => (document as Record<string, unknown>)[name];

/** One thing wrong with a file: where (the path of keys, and the line when known) and what. */
export interface ConfigProblem {
  path: readonly (string | number)[];
  line?: number;
  message: string;
}

/** A file refused as a whole: every problem it has, nothing applied. */
export class InvalidConfigFileError extends Error {
  constructor(
    readonly problems: readonly ConfigProblem[],
    source = 'the file',
  ) {
    super([`${source} is not a valid configuration (${problems.length} problem${problems.length === 1 ? '' : 's'}); nothing was changed:`, ...problems.map((p) => `  ${formatProblem(p)}`)].join('\n'));
    this.name = 'InvalidConfigFileError';
  }
}

const IDENTIFIER = /^[_A-Za-z][_0-9A-Za-z]*$/;

/** `policies."*".costLimit`, `permissions."Review.body"[1]`: keys that are not plain names are quoted. */
export function formatPath(path: readonly (string | number)[]): string {
  return path.map((segment, i) => (typeof segment === 'number' ? `[${segment}]` : `${i > 0 ? '.' : ''}${IDENTIFIER.test(segment) ? segment : JSON.stringify(segment)}`)).join('');
}

function formatProblem(problem: ConfigProblem): string {
  const where = [problem.line === undefined ? undefined : `line ${problem.line}`, problem.path.length > 0 ? formatPath(problem.path) : undefined].filter(Boolean).join(', ');
  return where ? `${where}: ${problem.message}` : problem.message;
}

/** The file: the version first, then every section (the descriptors' schemas), nothing else (a typo such as `costLimt` must not become a no-op). */
function fileSchema(sections: SectionList) {
  return z
    .object({
      version: z.literal(CONFIG_FORMAT_VERSION, { error: `give the file format's version: version: ${CONFIG_FORMAT_VERSION}` }),
      ...Object.fromEntries(sections.map((section) => [section.name, section.schema.optional()])),
    })
    .strict();
}

/**
 * Checks a value already read from a file (or built in a test); every problem at once. Valid, it
 * comes back in the one form export writes and the diff compares: the sections it holds, in their
 * order, each normalised by its schema (nulls dropped, lists sorted).
 */
export function parseConfigValue(value: unknown, sections: SectionList = SECTIONS): { ok: true; document: ConfigDocument } | { ok: false; problems: ConfigProblem[] } {
  const parsed = fileSchema(sections).safeParse(value);
  if (parsed.success) {
    const document: Record<string, unknown> = { version: CONFIG_FORMAT_VERSION };
    const data: Record<string, unknown> = parsed.data;
    for (const { name } of sections) if (data[name] !== undefined) document[name] = data[name];
    return { ok: true, document: document as ConfigDocument };
  }
  return {
    ok: false,
    problems: parsed.error.issues.map((issue) => ({
      // An unknown key is reported at its map; point at the key itself.
      path: issue.code === 'unrecognized_keys' ? [...issue.path, ...issue.keys.slice(0, 1)].map(asSegment) : issue.path.map(asSegment),
      message: issue.message,
    })),
  };
}

const asSegment = (segment: PropertyKey): string | number => (typeof segment === 'number' ? segment : String(segment));

/** The line (1-based) of the key or item at `path` in a parsed YAML document, or of its nearest ancestor there. */
function lineOf(contents: Node | null, path: readonly (string | number)[], lines: LineCounter): number | undefined {
  let node: unknown = contents;
  let offset = (contents as { range?: [number] } | null)?.range?.[0];
  for (const segment of path) {
    if (isMap(node)) {
      const pair = node.items.find((item) => isScalar(item.key) && String(item.key.value) === String(segment));
      if (!pair) break;
      offset = (pair.key as Node).range?.[0] ?? offset;
      node = pair.value;
    } else if (isSeq(node) && typeof segment === 'number' && node.items[segment]) {
      node = node.items[segment];
      offset = (node as Node).range?.[0] ?? offset;
    } else break;
  }
  return offset === undefined ? undefined : lines.linePos(offset).line;
}

/**
 * Reads a configuration file: YAML (one document; duplicate keys refused), then the schema. Throws
 * InvalidConfigFileError with every problem, each with its line, when it is not a valid file.
 */
export function readConfigYaml(text: string, source?: string, sections: SectionList = SECTIONS): ConfigDocument {
  const lines = new LineCounter();
  const yaml = parseDocument(text, { lineCounter: lines, uniqueKeys: true });
  if (yaml.errors.length > 0) {
    // The first line of the message, without the position it ends with (the line is reported beside it).
    const problems = yaml.errors.map((error) => ({
      path: [],
      line: error.linePos?.[0].line,
      message: error.code === 'MULTIPLE_DOCS' ? 'the file holds more than one YAML document: a configuration is one' : `not YAML: ${error.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')}`,
    }));
    throw new InvalidConfigFileError(problems, source);
  }
  const parsed = parseConfigValue(yaml.toJS(), sections);
  if (parsed.ok) return parsed.document;
  const located = parsed.problems.map((problem) => ({ ...problem, line: lineOf(yaml.contents, problem.path, lines) }));
  // In the order of the file; on one line, an item's own problem before its fields' (a stable sort keeps the schema's order beyond that).
  throw new InvalidConfigFileError(located.sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity) || a.path.length - b.path.length), source);
}

const HEADER = [
  ' Switchyard configuration (`switchyard config export`); apply with `switchyard config apply FILE`.',
  ' Subgraph SDL is published by `subgraph publish`; trusted documents by `operations publish` (listed here by id).',
  ' A section left out is not managed by the file; see docs/operations.md, "Configuration as code".',
].join('\n');

/** The document as YAML, sections in their fixed order, with a header saying what the file is. */
export function writeConfigYaml(document: ConfigDocument, sections: SectionList = SECTIONS): string {
  const ordered: Record<string, unknown> = { version: document.version };
  for (const { name } of sections) if (sectionValue(document, name) !== undefined) ordered[name] = sectionValue(document, name);
  // lineWidth 0: a long URL or id is never folded over two lines.
  return `#${HEADER.replace(/\n/g, '\n#')}\n${stringify(ordered, { lineWidth: 0 })}`;
}
