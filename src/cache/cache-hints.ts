// Cache hints: `@cacheControl` read once from the supergraph, overridden by the rules ops set live (`switchyard cache set`).
import { Kind, parse, type ConstDirectiveNode, type DocumentNode } from 'graphql';

export type CacheScope = 'public' | 'private';

/** One hint, as `@cacheControl(maxAge:, scope:, inheritMaxAge:)` or a rule says it. */
export interface CacheHint {
  /** Seconds; undefined when the hint only sets a scope or inherits. */
  readonly maxAgeSeconds?: number;
  /** Undefined: the hint does not say (the part's subgraph and viewer decide, see section-policy). */
  readonly scope?: CacheScope;
  /** A composite field that takes its parent's max age instead of its type's (Apollo's `inheritMaxAge`). */
  readonly inheritMaxAge?: boolean;
  /** Seconds an expired copy is kept as the fallback while its subgraph fails (rules only). */
  readonly staleSeconds?: number;
}

/** A live rule from the registry (`cache_rules`): it replaces the SDL's hint at its coordinate. */
export interface CacheRule {
  /** `Type` or `Type.field`. */
  readonly coordinate: string;
  readonly maxAgeSeconds: number;
  readonly scope?: CacheScope | null;
  readonly staleSeconds?: number | null;
}

export interface CacheHints {
  /** The hint at `Type` or `Type.field`: a rule where ops set one, else the SDL's. */
  at(coordinate: string): CacheHint | undefined;
  /** Whether any coordinate has a hint: a graph without any caches nothing, and the runner skips every look-up. */
  readonly any: boolean;
  /** Changes whenever the rules change: memoised policies are recomputed when it moves. */
  readonly version: number;
}

/**
 * The supergraph's `@cacheControl` hints by coordinate. Subgraphs declare the directive themselves and
 * pass it through composition with `@composeDirective` (docs/caching.md); an `@link` that imports it
 * under another name (`import: [{ name: "@cacheControl", as: "@hint" }]`) is followed.
 */
export function readSdlHints(supergraph: string | DocumentNode): Map<string, CacheHint> {
  const document = typeof supergraph === 'string' ? parse(supergraph, { noLocation: true }) : supergraph;
  const name = directiveName(document);
  const hints = new Map<string, CacheHint>();
  for (const definition of document.definitions) {
    if (
      definition.kind !== Kind.OBJECT_TYPE_DEFINITION &&
      definition.kind !== Kind.OBJECT_TYPE_EXTENSION &&
      definition.kind !== Kind.INTERFACE_TYPE_DEFINITION &&
      definition.kind !== Kind.INTERFACE_TYPE_EXTENSION &&
      definition.kind !== Kind.UNION_TYPE_DEFINITION &&
      definition.kind !== Kind.UNION_TYPE_EXTENSION
    ) {
      continue;
    }
    const typeName = definition.name.value;
    const typeHint = hintOf(definition.directives, name);
    if (typeHint) hints.set(typeName, typeHint);
    if (definition.kind === Kind.UNION_TYPE_DEFINITION || definition.kind === Kind.UNION_TYPE_EXTENSION) continue;
    for (const field of definition.fields ?? []) {
      const fieldHint = hintOf(field.directives, name);
      if (fieldHint) hints.set(`${typeName}.${field.name.value}`, fieldHint);
    }
  }
  return hints;
}

/** The SDL's hints with the live rules laid over them, at one version of the rules. */
export class HintBook implements CacheHints {
  readonly #sdl: ReadonlyMap<string, CacheHint>;
  readonly #rules: ReadonlyMap<string, CacheHint>;
  readonly version: number;
  readonly any: boolean;

  constructor(sdl: ReadonlyMap<string, CacheHint>, rules: readonly CacheRule[] = [], version = 0) {
    this.#sdl = sdl;
    this.#rules = new Map(
      rules.map((rule) => [rule.coordinate, { maxAgeSeconds: rule.maxAgeSeconds, scope: rule.scope ?? undefined, staleSeconds: rule.staleSeconds ?? undefined }]),
    );
    this.version = version;
    this.any = this.#sdl.size > 0 || this.#rules.size > 0;
  }

  at(coordinate: string): CacheHint | undefined {
    return this.#rules.get(coordinate) ?? this.#sdl.get(coordinate);
  }

}

/** `cacheControl`, or the local name an `@link` imports it under. */
function directiveName(document: DocumentNode): string {
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.SCHEMA_DEFINITION && definition.kind !== Kind.SCHEMA_EXTENSION) continue;
    for (const directive of definition.directives ?? []) {
      if (directive.name.value !== 'link') continue;
      const imports = directive.arguments?.find((a) => a.name.value === 'import')?.value;
      if (imports?.kind !== Kind.LIST) continue;
      for (const item of imports.values) {
        if (item.kind !== Kind.OBJECT) continue;
        const value = (field: string) => {
          const node = item.fields.find((f) => f.name.value === field)?.value;
          return node?.kind === Kind.STRING ? node.value.replace(/^@/, '') : undefined;
        };
        if (value('name') === 'cacheControl' && value('as')) return value('as')!;
      }
    }
  }
  return 'cacheControl';
}

function hintOf(directives: readonly ConstDirectiveNode[] | undefined, name: string): CacheHint | undefined {
  const directive = directives?.find((d) => d.name.value === name);
  if (!directive) return undefined;
  let maxAgeSeconds: number | undefined;
  let scope: CacheScope | undefined;
  let inheritMaxAge: boolean | undefined;
  for (const argument of directive.arguments ?? []) {
    const value = argument.value;
    if (argument.name.value === 'maxAge' && value.kind === Kind.INT) maxAgeSeconds = Math.max(0, Number(value.value));
    else if (argument.name.value === 'scope' && value.kind === Kind.ENUM) scope = value.value === 'PRIVATE' ? 'private' : value.value === 'PUBLIC' ? 'public' : undefined;
    else if (argument.name.value === 'inheritMaxAge' && value.kind === Kind.BOOLEAN) inheritMaxAge = value.value;
  }
  return { maxAgeSeconds, scope, inheritMaxAge };
}

/** The live rules, replaced whole when the registry's `cache_rules` topic moves; every graph reads them. */
export class CacheRuleBook {
  #rules: readonly CacheRule[] = [];
  #version = 0;

  get rules(): readonly CacheRule[] {
    return this.#rules;
  }

  get version(): number {
    return this.#version;
  }

  replace(rules: readonly CacheRule[]): void {
    this.#rules = rules;
    this.#version += 1;
  }

  /** The hints of one graph: its SDL's, with the rules in force at each call. */
  hintsFor(sdl: ReadonlyMap<string, CacheHint>): () => CacheHints {
    let book = new HintBook(sdl, this.#rules, this.#version);
    return () => (book.version === this.#version ? book : (book = new HintBook(sdl, this.#rules, this.#version)));
  }
}
