// The section cache as the plan runner sees it: which parts of a request may be read from the cache, their keys, what may be stored.
import { getNamedType, isInterfaceType, isObjectType, Kind, type DocumentNode, type GraphQLNamedType, type GraphQLSchema, type SelectionSetNode } from 'graphql';
import type { CacheHints } from '../../cache/cache-hints.js';
import { configDefaults } from '../../config/schema.js';
import type { PurgeIndex } from '../../cache/purge-index.js';
import type { CachedSection, SectionStore } from '../../cache/section-store.js';
import { entityTag, subgraphTag, typeTag, withinSubgraph } from '../../cache/tags.js';
import type { Tracer } from '@opentelemetry/api';
import { analyseOperation } from '../../request/operation-analysis.js';
import { requestStateOf, type CacheNotes, type RequestState } from '../../request/request-state.js';
import { recordCacheSpan } from '../../telemetry/cache-spans.js';
import type { Fetch, FetchStep, QueryPlan } from './build-plan.js';
import { sectionPolicy, type SectionPolicy } from './section-policy.js';

type Data = Record<string, unknown>;

/** Who a request is, as far as the cache cares. */
export interface CacheViewer {
  /** The principal (`sub`, with the client for service tokens); undefined for an anonymous request. */
  readonly id: string | undefined;
  /** Whether its subgraph calls carry a token made for this user (then parts whose hints say no scope are private). */
  readonly perUserToken: boolean;
}

export type CacheResult = 'hit' | 'miss' | 'stale' | 'bypass';

export interface SectionCacheOptions {
  store: SectionStore;
  purges: PurgeIndex;
  /** The hints in force now (the graph's SDL hints with the live rules over them). */
  hints: () => CacheHints;
  /** A hash of the served supergraph: a new graph never reads parts shaped by an old one. */
  graphHash: string;
  /** Stale time of parts whose rules set none, in ms. Default: the config's `cacheStaleSeconds`. */
  defaultStaleMs?: number;
  viewerOf: (context: unknown) => CacheViewer;
  /** Whether stale copies may stand in for this subgraph's failures (route `fallback.enabled`). Default yes. */
  staleAllowed?: (subgraph: string) => boolean;
  /** The key fields (top level) of each `@key` of an entity type: entity tags are made from them. */
  keyFieldsOf: (typeName: string) => readonly (readonly string[])[];
  /** Tracing on: a span per step the cache answered (`switchyard.cache.hit`). */
  tracer?: Tracer;
  /** Counts look-ups (`switchyard_cache_requests_total`). */
  onResult?: (subgraph: string, typeName: string, result: CacheResult, count: number) => void;
  now?: () => number;
}

/** An entity a mutation returned: its type and the key fields it came with. */
export interface ReturnedEntity {
  readonly typeName: string;
  readonly key: Readonly<Record<string, unknown>>;
}

/** What the cache holds for one key: a fresh copy, or one only good as the fallback. */
export interface SectionRead {
  readonly fresh?: unknown;
  /** An expired copy still inside its stale time: its JSON text, parsed only if a failed call needs it. */
  readonly stale?: { json: string; ageMs: number };
}

/** What `parsePart` gives for a text that is not JSON. */
export const UNREADABLE: unique symbol = Symbol('unreadable cached part');

/**
 * A cached part's value, or UNREADABLE when its text is not JSON: a value something else wrote under
 * the cache's Redis prefix, or one truncated on the way. Such a part is a miss (or no stale copy),
 * never a failed request.
 */
export function parsePart(json: string): unknown {
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return UNREADABLE;
  }
}

/** A step's part as one request may use it. */
export interface UsablePart {
  readonly policy: SectionPolicy;
  readonly scopeKey: string;
}

/**
 * 1. A step's policy (section-policy.ts) is computed once per step and hint version.
 * 2. A part is used only by a query operation; a private one only by a signed-in viewer, under a
 *    key holding the viewer's id. Parts of a mutation's plan are neither read nor stored.
 * 3. A copy is fresh until fetchedAt + max age, then kept as the fallback for the stale time; a
 *    purge newer than the copy's fetch (purge-index.ts) drops it either way.
 * 4. Nothing with an error, nothing past the request's deadline, nothing from a stale copy is stored.
 */
export class SectionCache {
  readonly #options: SectionCacheOptions;
  readonly #schema: GraphQLSchema;
  readonly #policies = new WeakMap<FetchStep, { version: number; policy: SectionPolicy }>();
  readonly #now: () => number;

  constructor(options: SectionCacheOptions, schema: GraphQLSchema) {
    this.#options = options;
    this.#schema = schema;
    this.#now = options.now ?? Date.now;
  }

  /** The request's view of the cache, or undefined when no part of this plan can be cached for anyone. */
  forRequest(plan: QueryPlan, context: unknown, variables: Data | undefined): RequestSections | undefined {
    const hints = this.#options.hints();
    if (!hints.any || plan.fetches.some((f) => f.operation === 'mutation')) return undefined;
    return new RequestSections(this, hints, context, variables);
  }

  policyOf(hints: CacheHints, fetch: Fetch, step: FetchStep): SectionPolicy {
    const memo = this.#policies.get(step);
    if (memo?.version === hints.version) return memo.policy;
    const policy = sectionPolicy(this.#schema, hints, fetch, step, this.#options.defaultStaleMs ?? configDefaults.cacheStaleSeconds * 1000);
    this.#policies.set(step, { version: hints.version, policy });
    return policy;
  }

  get options(): SectionCacheOptions {
    return this.#options;
  }

  now(): number {
    return this.#now();
  }

  /** Entity tags of an object: one per `@key` of its type whose fields it carries. */
  entityTagsOf(typeName: string, object: Data, into: Set<string> | Map<string, ReturnedEntity>): void {
    for (const fields of this.#options.keyFieldsOf(typeName)) {
      const key: Data = {};
      let complete = true;
      for (const field of fields) {
        const value = object[field];
        if (value === undefined || value === null || value instanceof Error) {
          complete = false;
          break;
        }
        key[field] = value;
      }
      if (!complete) continue;
      const tag = entityTag(typeName, key);
      if (into instanceof Set) into.add(tag);
      else into.set(tag, { typeName, key });
    }
  }

  /**
   * The entities in a mutation's merged answer: walked along the client's operation, so an
   * object's type is known from the schema where the answer carries no `__typename`.
   */
  mutationEntities(document: DocumentNode, operationName: string | null | undefined, data: Data): ReturnedEntity[] {
    const tags = new Map<string, ReturnedEntity>();
    const { operation, fragments } = analyseOperation(document, operationName);
    const root = this.#schema.getMutationType();
    if (!operation || !root) return [];
    const walk = (value: unknown, type: GraphQLNamedType, selectionSet: SelectionSetNode | undefined): void => {
      if (value === null || typeof value !== 'object' || value instanceof Error || !selectionSet) return;
      if (Array.isArray(value)) {
        for (const item of value) walk(item, type, selectionSet);
        return;
      }
      const object = value as Data;
      const concrete = typeof object.__typename === 'string' ? (this.#schema.getType(object.__typename) ?? type) : type;
      if (isObjectType(concrete)) this.entityTagsOf(concrete.name, object, tags);
      if (!isObjectType(concrete) && !isInterfaceType(concrete)) return;
      const fields = concrete.getFields();
      const visitSelections = (set: SelectionSetNode) => {
        for (const selection of set.selections) {
          if (selection.kind === Kind.FIELD) {
            const field = fields[selection.name.value];
            if (field) walk(object[selection.alias?.value ?? selection.name.value], getNamedType(field.type), selection.selectionSet);
          } else if (selection.kind === Kind.INLINE_FRAGMENT) {
            visitSelections(selection.selectionSet);
          } else {
            const fragment = fragments.get(selection.name.value);
            if (fragment) visitSelections(fragment.selectionSet);
          }
        }
      };
      visitSelections(selectionSet);
    };
    walk(data, root, operation.selectionSet);
    return [...tags.values()];
  }

  /**
   * The purge tags of a stored part: its subgraph; its types and every entity in its value (objects
   * with a `__typename` and their key fields), plus the entity it was looked up by (its answer need not
   * repeat its key); each type and entity tag also within the subgraph, for a purge naming both
   * (`--type T --subgraph S`). Made from the value by whichever router reads the part.
   */
  tagsOf(fetch: Fetch, step: FetchStep, part: UsablePart, value: unknown, representation: Data | undefined): string[] {
    const named = new Set(part.policy.types.map(typeTag));
    this.#collectEntityTags(value, named);
    if (step.entityType !== undefined && representation) this.entityTagsOf(step.entityType, representation, named);
    const subgraph = subgraphTag(fetch.subgraph);
    const tags = [subgraph];
    for (const tag of named) tags.push(tag, withinSubgraph(subgraph, tag));
    return tags;
  }

  #collectEntityTags(value: unknown, into: Set<string>): void {
    if (value === null || typeof value !== 'object' || value instanceof Error) return;
    if (Array.isArray(value)) {
      for (const item of value) this.#collectEntityTags(item, into);
      return;
    }
    const object = value as Data;
    if (typeof object.__typename === 'string') this.entityTagsOf(object.__typename, object, into);
    for (const key of Object.keys(object)) {
      const field = object[key];
      if (field !== null && typeof field === 'object') this.#collectEntityTags(field, into);
    }
  }
}

/** One request's use of the cache: look-ups, stores, and the notes for its `Cache-Control` header. */
export class RequestSections {
  readonly #cache: SectionCache;
  readonly #hints: CacheHints;
  readonly #viewer: CacheViewer;
  readonly #state: RequestState;
  readonly #variables: Data | undefined;
  readonly #context: unknown;
  /** The purges known when the request began: a part fetched now is newer than every one of them. */
  readonly purgeSeq: number;

  constructor(cache: SectionCache, hints: CacheHints, context: unknown, variables: Data | undefined) {
    this.#cache = cache;
    this.#hints = hints;
    this.#viewer = cache.options.viewerOf(context);
    this.#state = requestStateOf(context);
    this.#variables = variables;
    this.#context = context;
    this.purgeSeq = cache.options.purges.latestSeq;
  }

  /** The step's part if this request may read and store it; undefined (and the response uncacheable) otherwise. */
  usable(fetch: Fetch, step: FetchStep, count: number): UsablePart | undefined {
    const policy = this.#cache.policyOf(this.#hints, fetch, step);
    const notes = this.notes();
    if (policy.maxAgeMs === 0) {
      notes.uncacheable = true;
      return undefined;
    }
    const isPrivate = policy.scope === 'private' || (policy.scope === undefined && this.#viewer.perUserToken);
    if (isPrivate && this.#viewer.id === undefined) {
      notes.uncacheable = true;
      this.#cache.options.onResult?.(fetch.subgraph, typeOf(step), 'bypass', count);
      return undefined;
    }
    if (isPrivate) notes.private = true;
    return { policy, scopeKey: isPrivate ? `u:${this.#viewer.id}` : 'public' };
  }

  /** The key of a part: graph, subgraph, selection, viewer, variables, and the representation of an entity. */
  keyOf(fetch: Fetch, part: UsablePart, representation?: Data): string {
    const variables = part.policy.variables.length === 0 ? '' : JSON.stringify(part.policy.variables.map((name) => this.#variables?.[name] ?? null));
    return `${this.#cache.options.graphHash}|${fetch.subgraph}|${part.policy.signature}|${part.scopeKey}|${variables}|${representation ? JSON.stringify(representation) : ''}`;
  }

  /**
   * Reads keys: a fresh copy, a stale one, or nothing (counted as hits and misses; stale counted when
   * served). At once when the store answers at once (memory decides every key); a promise otherwise.
   * `representations` (an entity step's, in the order of `keys`) name the entities for purge tags.
   */
  read(fetch: Fetch, step: FetchStep, part: UsablePart, keys: readonly string[], representations?: readonly Data[]): SectionRead[] | Promise<SectionRead[]> {
    const found = this.#cache.options.store.getMany(keys);
    if (found instanceof Promise) return found.then((sections) => this.#reads(fetch, step, part, sections, representations));
    return this.#reads(fetch, step, part, found, representations);
  }

  #reads(fetch: Fetch, step: FetchStep, part: UsablePart, sections: readonly (CachedSection | undefined)[], representations: readonly Data[] | undefined): SectionRead[] {
    const { purges, onResult } = this.#cache.options;
    // A rule that lowers a max age applies to the copies already held, not only to the next ones.
    const policyMaxAgeMs = part.policy.maxAgeMs;
    const now = this.#cache.now();
    let hits = 0;
    let oldest = 0;
    const reads: SectionRead[] = [];
    for (let index = 0; index < sections.length; index++) {
      const section = sections[index];
      // The tags are made (from the value) only when a purge newer than the section could name one;
      // a part whose text is unreadable is no part at all.
      if (!section || purges.isPurged(section, () => this.#tagsOf(section, fetch, step, part, representations?.[index]))) {
        reads.push({});
        continue;
      }
      const ageMs = now - section.fetchedAt;
      const maxAgeMs = Math.min(section.maxAgeMs, policyMaxAgeMs);
      if (ageMs <= maxAgeMs) {
        const fresh = parsePart(section.json);
        if (fresh === UNREADABLE) {
          reads.push({});
          continue;
        }
        hits += 1;
        oldest = Math.max(oldest, ageMs);
        this.noteFresh(maxAgeMs - ageMs);
        reads.push({ fresh });
      } else if (ageMs <= section.maxAgeMs + section.staleMs) {
        reads.push({ stale: { json: section.json, ageMs } });
      } else {
        reads.push({});
      }
    }
    if (hits > 0) {
      onResult?.(fetch.subgraph, typeOf(step), 'hit', hits);
      const tracer = this.#cache.options.tracer;
      if (tracer) recordCacheSpan(tracer, fetch.subgraph, this.#context, { outcome: 'hit', hits, misses: sections.length - hits, ageMs: oldest });
    }
    if (sections.length > hits) onResult?.(fetch.subgraph, typeOf(step), 'miss', sections.length - hits);
    return reads;
  }

  /** The section's purge tags, made once. An unreadable section needs none: neither its fresh nor its stale read is ever served. */
  #tagsOf(section: CachedSection, fetch: Fetch, step: FetchStep, part: UsablePart, representation: Data | undefined): readonly string[] {
    if (section.tags) return section.tags;
    const value = parsePart(section.json);
    if (value === UNREADABLE) return [];
    return (section.tags = this.#cache.tagsOf(fetch, step, part, value, representation));
  }

  /** A fetched part went out: its full max age is left. */
  noteFetched(part: UsablePart): void {
    this.noteFresh(part.policy.maxAgeMs);
  }

  /** Stale copies stood in for failed parts (the answer is then partial, hence never cached). */
  noteStale(fetch: Fetch, step: FetchStep, count: number, oldestMs: number, failureCode: string): void {
    this.#cache.options.onResult?.(fetch.subgraph, typeOf(step), 'stale', count);
    if (this.#state) (this.#state.stale ??= []).push({ subgraph: fetch.subgraph, ageMs: Math.round(oldestMs), failureCode });
    const tracer = this.#cache.options.tracer;
    if (tracer) recordCacheSpan(tracer, fetch.subgraph, this.#context, { outcome: 'stale', hits: count, ageMs: oldestMs, failureCode });
  }

  staleAllowed(fetch: Fetch): boolean {
    return this.#cache.options.staleAllowed?.(fetch.subgraph) ?? true;
  }

  /**
   * Stores answered parts (values as JSON text, taken before the runner merges anything into them).
   * No purge tags: a reader makes them from the value, and only when a purge asks (read above).
   */
  write(part: UsablePart, entries: readonly (readonly [key: string, value: unknown])[], callDeadlineAt?: number): void {
    if (entries.length === 0) return;
    // Past the deadline the request is over; what arrives then was not asked for in time. A deferred
    // part's call has its own deadline (`callDeadlineAt`), later than the request's.
    const deadlineAt = callDeadlineAt ?? this.#state.deadlineAt;
    if (deadlineAt !== undefined && performance.now() > deadlineAt) return;
    const fetchedAt = this.#cache.now();
    const { maxAgeMs, staleMs } = part.policy;
    const purgeSeq = this.purgeSeq;
    const sections: (readonly [string, CachedSection])[] = [];
    for (const [key, value] of entries) sections.push([key, { json: JSON.stringify(value), fetchedAt, maxAgeMs, staleMs, purgeSeq }]);
    this.#cache.options.store.setMany(sections);
  }

  private noteFresh(freshForMs: number): void {
    const notes = this.notes();
    notes.freshForMs = Math.min(notes.freshForMs, freshForMs);
  }

  private notes(): CacheNotes {
    return (this.#state.cache ??= { uncacheable: false, freshForMs: Infinity, private: false });
  }
}

function typeOf(step: FetchStep): string {
  return step.entityType ?? 'Query';
}
