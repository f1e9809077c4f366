// Cache hints: the supergraph's `@cacheControl` (read by src/gateway/supergraph/), overridden by the rules ops set live (`switchyard cache set`).

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
