// One served graph's supergraph, parsed once: the document, its @link names, and every fact the router reads from it.
import { createHash } from 'node:crypto';
import { parse, print, type DocumentNode } from 'graphql';
import type { CacheHint } from '../../cache/cache-hints.js';
import type { Requirement } from '../../security/authorization.js';
import { SupergraphModel } from '../plan/supergraph-model.js';
import { readRequirements } from './authorization-facts.js';
import { readCacheHints } from './cache-hint-facts.js';
import { readCostFacts, type CostMetadata } from './cost-facts.js';
import { readLinkNames, type LinkNames } from './link-names.js';

/**
 * The supergraph of one served graph, built once when the graph is prepared (graph-sources.ts) and
 * carried by it (`served.supergraph`); every reader takes its facts from here instead of parsing the
 * SDL again (decision 014).
 *
 * 1. The SDL is parsed once, and the names its `@link`s give the spec directives are resolved once
 *    (link-names.ts), for every reader: a rename means the same thing to authorization, cost, cache
 *    hints and the planner.
 * 2. Each group of facts is read on first use and kept: the join facts (the planner's
 *    `SupergraphModel`, whose `subgraphName` every reader maps graphs with), the cost facts, the
 *    authorization requirements, the `@cacheControl` hints. A router with the planner off never
 *    builds the join facts' subgraph schemas; one without a section cache never reads hints.
 * 3. Immutable once built: a new composition is a new `Supergraph`, swapped in with its graph.
 */
export class Supergraph {
  readonly document: DocumentNode;
  readonly names: LinkNames;
  #sdl: string | undefined;
  #hash: string | undefined;
  #join: SupergraphModel | undefined;
  #cost: CostMetadata | undefined;
  #requirements: ReadonlyMap<string, Requirement> | undefined;
  #cacheHints: ReadonlyMap<string, CacheHint> | undefined;

  private constructor(document: DocumentNode, sdl: string | undefined) {
    this.document = document;
    this.#sdl = sdl;
    this.names = readLinkNames(document);
  }

  /** Parses the SDL (the one parse of this graph's supergraph). */
  static fromSdl(sdl: string): Supergraph {
    return new Supergraph(parse(sdl, { noLocation: true }), sdl);
  }

  /** Wraps a document parsed elsewhere (tests, and planners built from a document). */
  static fromDocument(document: DocumentNode): Supergraph {
    return new Supergraph(document, undefined);
  }

  /** The SDL text (printed from the document when it was built from one). */
  get sdl(): string {
    return (this.#sdl ??= print(this.document));
  }

  /** A short hash of the SDL: section cache keys of one graph never meet another's. */
  get hash(): string {
    return (this.#hash ??= createHash('sha256').update(this.sdl).digest('base64url').slice(0, 16));
  }

  /** Join facts: which subgraph resolves what, keys, `@provides`/`@requires`/`@override`/`@interfaceObject`. */
  get join(): SupergraphModel {
    return (this.#join ??= new SupergraphModel(this.document, this.names));
  }

  /** `join__Graph` value (PRODUCT) → the name the subgraph was registered with (product), in enum order. */
  get subgraphNames(): ReadonlyMap<string, string> {
    return this.join.subgraphName;
  }

  /** `@cost`/`@listSize` and the owning subgraphs of each type and field. */
  get cost(): CostMetadata {
    return (this.#cost ??= readCostFacts(this.document, this.names, this.join));
  }

  /** `@authenticated`/`@requiresScopes` by coordinate (`Type`, `Type.field`). */
  get requirements(): ReadonlyMap<string, Requirement> {
    return (this.#requirements ??= readRequirements(this.document, this.names));
  }

  /** `@cacheControl` hints by coordinate, before the live rules (cache-hints.ts) are laid over them. */
  get cacheHints(): ReadonlyMap<string, CacheHint> {
    return (this.#cacheHints ??= readCacheHints(this.document, this.names.cacheControl));
  }
}
