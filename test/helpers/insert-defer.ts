// Random `@defer`s in a query document, from a seed: the same query asked in payloads, whose merged answer must equal the plain one.
import {
  Kind,
  parse,
  print,
  TypeInfo,
  visit,
  visitWithTypeInfo,
  type ArgumentNode,
  type DirectiveNode,
  type DocumentNode,
  type GraphQLSchema,
  type InlineFragmentNode,
  type SelectionNode,
  type SelectionSetNode,
} from 'graphql';
import { mulberry32 } from '../differential/generate-query.js';

export interface InsertDeferOptions {
  /** Chance that a selection starts a new deferred inline fragment (wrapping it and up to two after it). Default 0.2. */
  wrapRate?: number;
  /** Chance that an existing inline fragment or fragment spread gets `@defer` itself. Default 0.3. */
  markRate?: number;
  /** Most `@defer`s added to one document (each is a directive and about ten tokens of the router's limits). Default 6. */
  maxDefers?: number;
  /**
   * The router's directive limit (`maxDirectives`, counted as graphql-armor does: each fragment spread counts its
   * fragment's directives again). A document the `@defer`s would take over it gets fewer. Default 50.
   */
  maxDirectives?: number;
}

export interface DeferredQuery {
  query: string;
  /** `@defer`s added (0 only when the document has no place for one: a subscription, or a mutation's root fields alone). */
  defers: number;
}

/** The name of the directive (incremental delivery RFC). */
export const DEFER = 'defer';

/** A selection set that may hold a `@defer`, and the random decisions taken for it. */
interface Site {
  node: SelectionSetNode;
  /** The name of the type it selects on: a deferred fragment sometimes names it as its type condition. */
  parentType: string;
  /** Selection indexes that start a deferred inline fragment, and how many selections it takes. */
  wraps: Map<number, { length: number; directive: DirectiveNode; typed: boolean }>;
  /** Selection indexes of existing fragments (inline or spread) that get `@defer` themselves. */
  marks: Map<number, DirectiveNode>;
}

/**
 * Inserts `@defer`s into `query`, deterministically from `seed`, keeping the document valid for `schema`.
 *
 * 1. The places: every selection set of the operations and fragment definitions, except those selecting on the
 *    mutation or subscription root type (the RFC forbids `@defer` on their root fields; the router's validation
 *    refuses it). A document with a subscription is returned unchanged.
 * 2. In each place, a selection (any field, `__typename`, an inline fragment or a spread) sometimes starts a new
 *    `... @defer { }` wrapping it and up to two selections after it, sometimes with the place's type as type
 *    condition; an existing inline fragment or spread without `@defer` sometimes gets one. Wraps at different depths
 *    nest: a deferred field's own selections may hold a deferred fragment.
 * 3. Half the directives carry a label (`d0`, `d1`... unique, never one the document already has); a few carry
 *    `if: true`, and a few `if: false` (a `@defer` that does not defer), but never all of them.
 * 4. At least one `@defer` that defers is added wherever there is a place, at most `maxDefers` in all, and fewer when
 *    they would take the document over the router's directive limit (where it was not over it already).
 * Wrapping selections in an inline fragment with no condition changes neither the fields collected (spec 6.3.2) nor
 * the overlap rule's verdict (5.3.2): the document stays valid, and its answer without payloads is the same.
 */
export function insertDefer(schema: GraphQLSchema, query: string | DocumentNode, seed: number, options: InsertDeferOptions = {}): DeferredQuery {
  const document = typeof query === 'string' ? parse(query) : query;
  const limit = options.maxDirectives ?? 50;
  const before = directiveCount(document);
  // 4. Fewer @defers while they would take the document over the router's directive limit (the same seed each time).
  for (let maxDefers = options.maxDefers ?? 6; ; maxDefers--) {
    const deferred = insertOnce(schema, query, document, seed, { ...options, maxDefers });
    if (maxDefers <= 1 || directiveCount(parse(deferred.query)) <= Math.max(limit, before)) return deferred;
  }
}

function insertOnce(schema: GraphQLSchema, query: string | DocumentNode, document: DocumentNode, seed: number, options: InsertDeferOptions): DeferredQuery {
  const printed = () => (typeof query === 'string' ? query : print(query));
  if (document.definitions.some((d) => d.kind === Kind.OPERATION_DEFINITION && d.operation === 'subscription')) return { query: printed(), defers: 0 };
  const random = mulberry32(seed);
  const chance = (p: number) => random() < p;
  const int = (n: number) => Math.floor(random() * n);
  const wrapRate = options.wrapRate ?? 0.2;
  const markRate = options.markRate ?? 0.3;
  const maxDefers = options.maxDefers ?? 6;

  const sites = sitesOf(schema, document);
  if (sites.length === 0) return { query: printed(), defers: 0 };

  const taken = labelsOf(document);
  let labelCount = 0;
  const newLabel = () => {
    let label: string;
    do label = `d${labelCount++}`;
    while (taken.has(label));
    taken.add(label);
    return label;
  };
  let defers = 0;
  let deferring = 0;
  /** 3. A `@defer` with, by chance, a label and an `if`; `if: false` only when `mayBeOff` (another one defers already). */
  const directive = (mayBeOff: boolean): DirectiveNode => {
    const args: ArgumentNode[] = [];
    if (chance(0.5)) args.push(argument('label', { kind: Kind.STRING, value: newLabel() }));
    const condition = random();
    const off = mayBeOff && condition < 0.1;
    if (off) args.push(argument('if', { kind: Kind.BOOLEAN, value: false }));
    else if (condition > 0.9) args.push(argument('if', { kind: Kind.BOOLEAN, value: true }));
    if (!off) deferring++;
    defers++;
    return { kind: Kind.DIRECTIVE, name: { kind: Kind.NAME, value: DEFER }, arguments: args };
  };

  // 2. Decisions in document order, so a seed gives the same document on every run.
  for (const site of sites) {
    const selections = site.node.selections;
    for (let index = 0; index < selections.length && defers < maxDefers; index++) {
      const selection = selections[index];
      if (selection.kind !== Kind.FIELD && !hasDefer(selection) && chance(markRate)) site.marks.set(index, directive(deferring > 0));
      if (defers < maxDefers && chance(wrapRate)) {
        const length = 1 + int(Math.min(3, selections.length - index));
        site.wraps.set(index, { length, directive: directive(deferring > 0), typed: chance(0.2) });
        index += length - 1;
      }
    }
  }
  // 4. At least one that defers (the first directive always does, so none was added): a wrap of one selection of a random place.
  if (deferring === 0) {
    const site = sites[int(sites.length)];
    site.wraps.set(int(site.node.selections.length), { length: 1, directive: directive(false), typed: false });
  }

  const bySet = new Map(sites.map((site) => [site.node, site]));
  const result = visit(document, {
    SelectionSet: {
      // A new node returned from `enter` is visited in its place: the selections inside it (original nodes) are reached.
      enter(node) {
        const site = bySet.get(node);
        if (!site || (site.wraps.size === 0 && site.marks.size === 0)) return undefined;
        const out: SelectionNode[] = [];
        for (let index = 0; index < node.selections.length; ) {
          const wrap = site.wraps.get(index);
          const take = wrap?.length ?? 1;
          const inner = node.selections.slice(index, index + take).map((selection, offset) => {
            const mark = site.marks.get(index + offset);
            return mark && selection.kind !== Kind.FIELD ? { ...selection, directives: [...(selection.directives ?? []), mark] } : selection;
          });
          if (wrap) {
            const fragment: InlineFragmentNode = {
              kind: Kind.INLINE_FRAGMENT,
              typeCondition: wrap.typed ? { kind: Kind.NAMED_TYPE, name: { kind: Kind.NAME, value: site.parentType } } : undefined,
              directives: [wrap.directive],
              selectionSet: { kind: Kind.SELECTION_SET, selections: inner },
            };
            out.push(fragment);
          } else out.push(...inner);
          index += take;
        }
        return { ...node, selections: out };
      },
    },
  });
  return { query: print(result), defers };
}

/** 1. The selection sets that may hold a `@defer`, in document order. */
function sitesOf(schema: GraphQLSchema, document: DocumentNode): Site[] {
  const roots = new Set([schema.getMutationType(), schema.getSubscriptionType()].filter(Boolean));
  const typeInfo = new TypeInfo(schema);
  const sites: Site[] = [];
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      SelectionSet(node) {
        const parent = typeInfo.getParentType();
        if (parent && !roots.has(parent as never)) sites.push({ node, parentType: parent.name, wraps: new Map(), marks: new Map() });
      },
    }),
  );
  return sites;
}

function argument(name: string, value: ArgumentNode['value']): ArgumentNode {
  return { kind: Kind.ARGUMENT, name: { kind: Kind.NAME, value: name }, value };
}

function hasDefer(selection: SelectionNode): boolean {
  return selection.directives?.some((d) => d.name.value === DEFER) ?? false;
}

/** The labels of the document's own `@defer`s (a new one must differ from each). */
function labelsOf(document: DocumentNode): Set<string> {
  const labels = new Set<string>();
  visit(document, {
    Directive(node) {
      if (node.name.value !== DEFER) return;
      const label = node.arguments?.find((a) => a.name.value === 'label')?.value;
      if (label?.kind === Kind.STRING) labels.add(label.value);
    },
  });
  return labels;
}

/** The directives of the document's largest operation, each fragment spread counting its fragment's again (graphql-armor's max-directives). */
export function directiveCount(document: DocumentNode): number {
  const fragments = new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])));
  const memo = new Map<string, number>();
  const count = (node: { directives?: readonly DirectiveNode[]; selectionSet?: SelectionSetNode }): number => {
    let total = node.directives?.length ?? 0;
    for (const child of node.selectionSet?.selections ?? []) {
      if (child.kind !== Kind.FRAGMENT_SPREAD) total += count(child);
      else {
        total += child.directives?.length ?? 0;
        const name = child.name.value;
        if (!memo.has(name)) {
          memo.set(name, 0); // a cycle (invalid anyway) counts once
          const fragment = fragments.get(name);
          memo.set(name, fragment ? count(fragment) : 0);
        }
        total += memo.get(name)!;
      }
    }
    return total;
  };
  return Math.max(0, ...document.definitions.map((d) => (d.kind === Kind.OPERATION_DEFINITION ? count(d) : 0)));
}

/** The document without any `@defer`: what its merged payloads must answer like. */
export function withoutDefer(query: string): string {
  return print(visit(parse(query), { Directive: (node) => (node.name.value === DEFER ? null : undefined) }));
}
