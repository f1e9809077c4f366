// The configuration file of `switchyard config export|apply`: its schema (zod, over the stores' own rules) and its YAML form, in and out.
import { isMap, isScalar, isSeq, LineCounter, parseDocument, stringify, type Node } from 'yaml';
import { z } from 'zod';
import { cacheRuleProblems, type CacheScope } from './cache-store.js';
import { permissionCoordinateProblem, principalProblem } from './permission-store.js';
import { operationNameProblem, POLICY_LIMITS, policyLimitProblem, type PolicyLimits } from './policy-store.js';
import { routeSchema, type RouteMetadata } from './route.js';
import { subgraphNameProblem, subgraphUrlProblem } from './subgraph-store.js';
import { documentIdProblem } from './trusted-documents.js';

/** The file format's version, the file's first key: a later format can then be told apart and refused or converted. */
export const CONFIG_FORMAT_VERSION = 1;

/** A published subgraph's address and route metadata (its SDL is published by `subgraph publish`). */
export interface SubgraphConfig {
  url: string;
  /** Absent: no route metadata (the router defaults). */
  route?: RouteMetadata;
}

/** One cache rule: as `cache set`, without the clearing `none` (an absent key is not set). */
export interface CacheRuleConfig {
  maxAgeSeconds: number;
  scope?: CacheScope;
  staleSeconds?: number;
}

/** A trusted-document manifest by reference: who published it and the ids it holds, never the documents. */
export interface ManifestReference {
  client: string;
  /** '' when the manifest was published without `--version`. */
  version: string;
  /** Document ids, sorted. */
  documents: string[];
}

/**
 * The registry's live configuration, as one file holds it. Every section is optional: a section the
 * file leaves out is not managed by it (apply, even with `--prune`, leaves it alone); export writes
 * them all. Within a section, each item is described whole.
 */
export interface ConfigDocument {
  version: typeof CONFIG_FORMAT_VERSION;
  /** By subgraph name. */
  subgraphs?: Record<string, SubgraphConfig>;
  /** By operation name (`*`: the default of every other operation). */
  policies?: Record<string, PolicyLimits>;
  /** By coordinate (`Type.field` or `operation:Name`): the principals allowed on it, sorted. */
  permissions?: Record<string, string[]>;
  /** By coordinate (`Type` or `Type.field`). */
  cacheRules?: Record<string, CacheRuleConfig>;
  /** Sorted by client, then version. */
  trustedDocuments?: ManifestReference[];
}

export const CONFIG_SECTIONS = ['subgraphs', 'policies', 'permissions', 'cacheRules', 'trustedDocuments'] as const;
export type ConfigSection = (typeof CONFIG_SECTIONS)[number];

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

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A value checked by a store's rule (`problem` returns its message), so the file is held to what the single-item command holds it to. */
function checked<T>(problem: (value: unknown) => string | undefined) {
  return z
    .unknown()
    .superRefine((value, ctx) => {
      const message = problem(value);
      if (message !== undefined) ctx.addIssue({ code: 'custom', message });
    })
    .transform((value) => value as T);
}

/**
 * A map whose keys a store's rule checks. The check runs even when some values are wrong
 * (`when`), so a bad key and a bad value in one file are both reported.
 */
function keyedBy<T extends z.ZodType>(value: T, keyProblem: (key: string, entry: unknown) => { path?: (string | number)[]; message: string } | undefined) {
  return z.record(z.string(), value).superRefine(
    (record, ctx) => {
      for (const [key, entry] of Object.entries(record as Record<string, unknown>)) {
        const problem = keyProblem(key, entry);
        if (problem) ctx.addIssue({ code: 'custom', message: problem.message, path: [key, ...(problem.path ?? [])] });
      }
    },
    { when: (payload) => isPlainObject(payload.value) },
  );
}

const subgraphSchema = z.object({ url: z.string(), route: routeSchema.nullish() }).strict();

const policySchema = z.object(Object.fromEntries(POLICY_LIMITS.map((key) => [key, checked<number | null>((value) => policyLimitProblem(key, value)).optional()]))).strict();

const cacheRuleSchema = z
  .object({
    maxAgeSeconds: checked<number>(cacheRuleProblems.maxAgeSeconds),
    scope: checked<CacheScope | null>(cacheRuleProblems.scope).optional(),
    staleSeconds: checked<number | null>(cacheRuleProblems.staleSeconds).optional(),
  })
  .strict();

const principalsSchema = z.array(checked<string>(principalProblem)).superRefine(
  (principals, ctx) => {
    const seen = new Set<unknown>();
    principals.forEach((principal, i) => {
      if (seen.has(principal)) ctx.addIssue({ code: 'custom', message: `${String(principal)} is listed twice`, path: [i] });
      seen.add(principal);
    });
  },
  { when: (payload) => Array.isArray(payload.value) },
);

const manifestSchema = z
  .object({
    client: z.string().trim().min(1, 'name the client the manifest was published for'),
    version: z.string({ error: 'the client version is text: quote it, e.g. version: "1.2.0"' }).default(''),
    documents: z.array(checked<string>(documentIdProblem)),
  })
  .strict();

/** Two references to one manifest, or one id in two places, would make the file say two things. */
function checkManifests(manifests: unknown[], ctx: z.RefinementCtx): void {
  const manifestsSeen = new Set<string>();
  const idsSeen = new Set<unknown>();
  manifests.forEach((manifest, i) => {
    if (!isPlainObject(manifest)) return;
    const key = JSON.stringify([manifest.client, manifest.version ?? '']);
    if (manifestsSeen.has(key)) ctx.addIssue({ code: 'custom', message: `the manifest of ${String(manifest.client)} ${String(manifest.version ?? '')} is named twice`.trimEnd(), path: [i] });
    manifestsSeen.add(key);
    if (!Array.isArray(manifest.documents)) return;
    manifest.documents.forEach((id: unknown, j) => {
      if (idsSeen.has(id)) ctx.addIssue({ code: 'custom', message: `document ${String(id)} is named twice (an id belongs to one manifest)`, path: [i, 'documents', j] });
      idsSeen.add(id);
    });
  });
}

const fileSchema = z
  .object({
    version: z.literal(CONFIG_FORMAT_VERSION, { error: `give the file format's version: version: ${CONFIG_FORMAT_VERSION}` }),
    subgraphs: keyedBy(subgraphSchema, (name, entry) => {
      const nameProblem = subgraphNameProblem(name);
      if (nameProblem) return { message: nameProblem };
      const url = isPlainObject(entry) ? entry.url : undefined;
      const urlProblem = typeof url === 'string' ? subgraphUrlProblem(name, url) : undefined;
      return urlProblem ? { path: ['url'], message: urlProblem } : undefined;
    }).optional(),
    policies: keyedBy(policySchema, (name) => {
      const message = operationNameProblem(name);
      return message ? { message } : undefined;
    }).optional(),
    permissions: keyedBy(principalsSchema, (coordinate) => {
      const message = permissionCoordinateProblem(coordinate);
      return message ? { message } : undefined;
    }).optional(),
    cacheRules: keyedBy(cacheRuleSchema, (coordinate) => {
      const message = cacheRuleProblems.coordinate(coordinate);
      return message ? { message } : undefined;
    }).optional(),
    trustedDocuments: z.array(manifestSchema).superRefine(checkManifests, { when: (payload) => Array.isArray(payload.value) }).optional(),
  })
  .strict();

type ParsedFile = z.output<typeof fileSchema>;

/** Drops the keys whose value is null or undefined: in the file, a key set to null is a key left out. */
function present<T extends object>(value: T): { [K in keyof T]?: Exclude<T[K], null | undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null && v !== undefined)) as { [K in keyof T]?: Exclude<T[K], null | undefined> };
}

const mapValues = <T, U>(record: Record<string, T>, fn: (value: T) => U): Record<string, U> => Object.fromEntries(Object.entries(record).map(([key, value]) => [key, fn(value)]));

/** The parsed file in the one form export writes and the diff compares: nulls dropped, lists sorted. */
function normalise(file: ParsedFile): ConfigDocument {
  const document: ConfigDocument = { version: CONFIG_FORMAT_VERSION };
  if (file.subgraphs) document.subgraphs = mapValues(file.subgraphs, ({ url, route }) => (route && Object.keys(route).length > 0 ? { url, route } : { url }));
  if (file.policies) document.policies = mapValues(file.policies, (limits) => present(limits) as PolicyLimits);
  if (file.permissions) document.permissions = mapValues(file.permissions, (principals) => [...principals].sort(compareText));
  if (file.cacheRules) document.cacheRules = mapValues(file.cacheRules, (rule) => present(rule) as CacheRuleConfig);
  if (file.trustedDocuments) {
    document.trustedDocuments = file.trustedDocuments
      .map(({ client, version, documents }) => ({ client, version, documents: [...documents].sort(compareText) }))
      .sort((a, b) => compareText(a.client, b.client) || compareText(a.version, b.version));
  }
  return document;
}

/** Code-unit order: the same on every machine and database (collations differ between PostgreSQL installs). */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Checks a value already read from a file (or built in a test); every problem at once. */
export function parseConfigValue(value: unknown): { ok: true; document: ConfigDocument } | { ok: false; problems: ConfigProblem[] } {
  const parsed = fileSchema.safeParse(value);
  if (parsed.success) return { ok: true, document: normalise(parsed.data) };
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
export function readConfigYaml(text: string, source?: string): ConfigDocument {
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
  const parsed = parseConfigValue(yaml.toJS());
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
export function writeConfigYaml(document: ConfigDocument): string {
  const ordered: Record<string, unknown> = { version: document.version };
  for (const section of CONFIG_SECTIONS) if (document[section] !== undefined) ordered[section] = document[section];
  // lineWidth 0: a long URL or id is never folded over two lines.
  return `#${HEADER.replace(/\n/g, '\n#')}\n${stringify(ordered, { lineWidth: 0 })}`;
}
