// The CORS allow-list a router enforces, in memory: its start list (SWITCHYARD_CORS_ORIGINS) merged with the registry's rules, replaced whole on every change.
import { comparePatterns, isExactOrigin, parseOriginPattern, parseRequestOrigin, patternMatches, type OriginPattern } from '../config/cors-origins.js';
import { DEFAULT_CORS_METHODS, type CorsRuleRecord } from './cors-store.js';

/** What the router answers an allowed origin with. */
export interface CorsRule {
  /** The entry that allowed it (`https://*.example.com`), for logs. */
  readonly entry: string;
  readonly methods: readonly string[];
  /** Undefined: the headers the preflight asks for. */
  readonly headers: readonly string[] | undefined;
  readonly credentials: boolean;
  /** Undefined: no `Access-Control-Max-Age` (the browser's default). */
  readonly maxAgeSeconds: number | undefined;
}

interface PatternRule {
  readonly pattern: OriginPattern;
  readonly rule: CorsRule;
}

const startRule = (entry: string): CorsRule => ({ entry, methods: DEFAULT_CORS_METHODS, headers: undefined, credentials: false, maxAgeSeconds: undefined });

/**
 * The allow-list, looked up once per cross-origin request (the request path never queries the database):
 * 1. The start list (the `corsOrigins` setting) gives each entry the default rule; a registry rule for
 *    the same entry text replaces it, and the registry's other rules are added.
 * 2. An origin written exactly is a map look-up and wins over every pattern.
 * 3. Otherwise patterns are tried most specific first (`comparePatterns`): an exact host with any port,
 *    host wildcards by longest suffix, then `*`; the first that matches gives the rule.
 * Entries were checked when written (the setting at start, the store on `cors set`); one that does not
 * parse here (a row written by a newer router's rules) is skipped rather than failing the reload.
 */
export class CorsBook {
  readonly #start: ReadonlyMap<string, CorsRule>;
  #exact: ReadonlyMap<string, CorsRule> = new Map();
  #patterns: readonly PatternRule[] = [];

  constructor(startOrigins: readonly string[] = []) {
    this.#start = new Map(startOrigins.map((entry) => [entry, startRule(entry)]));
    this.replace([]);
  }

  /** Takes the registry's rules (all of them, as `listCorsRules` reads them). */
  replace(records: readonly Omit<CorsRuleRecord, 'updatedAt'>[]): void {
    const rules = new Map(this.#start);
    for (const record of records) {
      rules.set(record.origin, {
        entry: record.origin,
        methods: record.methods ?? DEFAULT_CORS_METHODS,
        headers: record.headers,
        credentials: record.credentials,
        maxAgeSeconds: record.maxAgeSeconds,
      });
    }
    const exact = new Map<string, CorsRule>();
    const patterns: PatternRule[] = [];
    for (const [entry, rule] of rules) {
      const pattern = parseOriginPattern(entry);
      if (typeof pattern === 'string') continue;
      if (isExactOrigin(pattern)) exact.set(entry, rule);
      else patterns.push({ pattern, rule });
    }
    this.#exact = exact;
    this.#patterns = patterns.sort((a, b) => comparePatterns(a.pattern, b.pattern));
  }

  /** The rule for an `Origin` header's value, or undefined when the origin is not allowed. */
  ruleFor(origin: string): CorsRule | undefined {
    const exact = this.#exact.get(origin);
    if (exact) return exact;
    if (this.#patterns.length === 0) return undefined;
    const parsed = parseRequestOrigin(origin);
    if (!parsed) return undefined;
    return this.#patterns.find(({ pattern }) => patternMatches(pattern, parsed))?.rule;
  }

  /** The entries in force, exact ones first, then patterns in the order they are tried (tests, ops). */
  entries(): string[] {
    return [...this.#exact.keys(), ...this.#patterns.map(({ pattern }) => pattern.text)];
  }
}
