// Static cost estimate of one operation (IBM GraphQL Cost Directives, "Static Query Analysis"), split per subgraph.
import { getNamedType, isAbstractType, isLeafType, type DocumentNode, type FieldNode, type GraphQLField, type GraphQLObjectType, type GraphQLSchema } from 'graphql';
import type { CostMetadata, ListSizeSettings } from './cost-metadata.js';
import { childPosition, type PlanPlacement } from './plan-placement.js';
import {
  addScaled,
  argumentsCost,
  charge,
  chargedSubgraph,
  collectFields,
  emptyTally,
  fieldCostInfo,
  isIntrospectionField,
  isListField,
  ownWeight,
  resolveValue,
  selectOperation,
  times,
  toCostEstimate,
  type CostContext,
  type CostEstimate,
  type CostOptions,
  type Tally,
} from './cost-rules.js';

export type { CostDefaults, CostEstimate, CostOptions } from './cost-rules.js';

/**
 * Estimates what an operation will cost before it runs, from the document, the variables and the
 * supergraph's `@cost`/`@listSize` metadata. Pure: the same inputs give the same estimate, so the caller
 * may memoise it per document and variables. One walk over the operation, each field costed once per
 * distinct position (a fragment reused in many places is not re-walked).
 *
 * The rules (IBM GraphQL Cost Directives; the field cost of "Static Query Analysis"):
 * 1. Operation and variables: the operation is chosen as execution would (`operationName`, or the only
 *    one); a variable takes the request's value, else its default. No operation: cost 0 and a note.
 * 2. Field collection: the fields of a selection set are collected for the concrete type being
 *    resolved, as execution does (GraphQL spec, "CollectFields()"): `@skip`/`@include` with a literal or
 *    variable condition are honoured; a fragment (named or inline) counts where it is used, once per
 *    position: a spread repeated at the same position, or a field selected twice under one response key,
 *    executes once and counts once; the same fragment at another position counts again.
 *    `__typename` and the other introspection fields cost 0.
 * 3. Own weight of a field, per object or value it returns ("The Cost Directive"): its `@cost`; else, for
 *    a root field of a mutation, `mutationFieldCost` (default 10); else `@cost` on the returned type;
 *    else `compositeFieldCost` (1) for an object, interface or union and `leafFieldCost` (0) for a
 *    scalar or enum.
 * 4. Arguments ("The Cost Directive" on arguments and input fields): each argument given a value adds
 *    its `@cost` (or its scalar or enum type's), and each set field of an input object value adds its
 *    own, once per call of the field (so they multiply with the lists above the field, not its own).
 * 5. Lists ("The List Size Directive"): a list field costs size × (own weight + cost of its selection),
 *    the composite field's own weight included, as the leading federation routers do. Its size:
 *    a. `slicingArguments`: the value of the slicing argument given (a variable's value included); when
 *       several are given, the largest; when none is, the largest default among them; when
 *       `requireOneSlicingArgument` (default true) and not exactly one is given, the same and a note;
 *    b. else `assumedSize`; else `listSize` (default 10);
 *    c. `sizedFields`: the size from (a)/(b) is the size of the named child list fields (cursor
 *       connections: `edges`, `nodes`) instead of the field's own, which then counts as one object (or
 *       the default size if it is a list itself).
 * 6. Abstract types: a field returning an interface or union costs its most expensive possible type
 *    (own weight of that type plus its collected selection), the MAX over type conditions, not the sum,
 *    since each returned object has exactly one type.
 * 7. Per subgraph: each field's own weight and argument cost, times the sizes of the lists above and
 *    around it, is charged to the subgraph that serves it. Given the operation's query plan
 *    (`placement`), that is the subgraph whose fetch selects the field at its path (root or
 *    `_entities` step; a field served through `@provides` goes to the providing subgraph), and a field
 *    no fetch selects (denied) adds to `total` only. Without one, the owner rule: its only owner; for a
 *    field several subgraphs resolve, the parent field's subgraph when it is one of them, else the
 *    first owner. `total` does not depend on the split.
 */
export function estimateCost(schema: GraphQLSchema, metadata: CostMetadata, document: DocumentNode, options: CostOptions = {}): CostEstimate {
  const notes = new Set<string>();
  const selected = selectOperation(schema, metadata, document, options, notes);
  const tally = emptyTally();
  if (selected) {
    const { context, operation, rootType } = selected;
    const walk: Walk = { context, memo: new Map(), nodeIds: new Map(), placement: options.placement };
    const mutation = operation.operation === 'mutation';
    for (const group of collectFields(context, rootType, [operation.selectionSet]).values()) {
      addScaled(tally, estimateField(walk, group, { parentType: rootType, parentSubgraph: undefined, upstreamSize: undefined, mutationRoot: mutation, position: '' }), 1);
    }
  }
  return toCostEstimate(tally, notes);
}

/** State of one estimate: field costs already computed per position, so shared fragments are walked once. */
interface Walk {
  context: CostContext;
  memo: Map<string, Tally>;
  nodeIds: Map<FieldNode, number>;
  /** Where the plan fetches each field (rule 7); absent: the owner rule. */
  placement: PlanPlacement | undefined;
}

/** Where a collected field is costed: everything besides its nodes that its cost depends on. */
interface FieldPosition {
  readonly parentType: GraphQLObjectType;
  /** The subgraph its parent field was charged to (the owner rule prefers it). */
  readonly parentSubgraph: string | undefined;
  /** The size a parent's `@listSize(sizedFields:)` gives this field's list (rule 5c). */
  readonly upstreamSize: number | undefined;
  /** Whether it is a root field of a mutation (rule 3). */
  readonly mutationRoot: boolean;
  /** The parent objects' response path (plan-placement.ts); read only with a plan. */
  readonly position: string;
}

/**
 * The cost of one collected field (all nodes sharing its response key) for ONE object of its parent
 * type. Memoised on the nodes and everything else the result depends on; results are never mutated.
 */
function estimateField(walk: Walk, group: readonly FieldNode[], at: FieldPosition): Tally {
  const { parentType, parentSubgraph, upstreamSize, mutationRoot, position } = at;
  const node = group[0];
  const field = isIntrospectionField(node) ? undefined : parentType.getFields()[node.name.value];
  if (!field) return emptyTally();
  // With a plan, where a field is fetched depends on its path, so a fragment is costed per path.
  const key = memoKey(walk, group, at);
  const known = walk.memo.get(key);
  if (known) return known;

  const { context } = walk;
  const info = fieldCostInfo(context, parentType, field.name);
  const responseKey = node.alias?.value ?? node.name.value;
  const subgraph = walk.placement ? walk.placement.subgraphOf(context.schema, position, responseKey, parentType) : chargedSubgraph(context, parentType, info, parentSubgraph);
  const childAt = walk.placement ? childPosition(position, responseKey) : '';
  const settings = info?.listSize;
  const sizesChildren = settings !== undefined && settings.sizedFields.length > 0;
  const size = !isListField(field) ? 1 : (upstreamSize ?? (settings && !sizesChildren ? listSize(context, settings, node, field, parentType) : context.defaults.listSize));
  const tally = emptyTally();
  charge(tally, subgraph, argumentsCost(context, node, field, info));

  const named = getNamedType(field.type);
  if (isLeafType(named)) {
    charge(tally, subgraph, times(size, ownWeight(context, info, named, mutationRoot)));
  } else {
    const childSize = sizesChildren ? listSize(context, settings, node, field, parentType) : undefined;
    const candidates: readonly GraphQLObjectType[] = isAbstractType(named) ? context.schema.getPossibleTypes(named) : [named as GraphQLObjectType];
    let most: Tally | undefined;
    for (const objectType of candidates) {
      const branch = emptyTally();
      charge(branch, subgraph, ownWeight(context, info, objectType, mutationRoot));
      for (const childGroup of collectFields(context, objectType, group.map((f) => f.selectionSet)).values()) {
        const sized = sizesChildren && settings.sizedFields.includes(childGroup[0].name.value) ? childSize : undefined;
        addScaled(branch, estimateField(walk, childGroup, { parentType: objectType, parentSubgraph: subgraph, upstreamSize: sized, mutationRoot: false, position: childAt }), 1);
      }
      if (!most || branch.total > most.total) most = branch;
    }
    // An interface no type implements yet still costs its own weight.
    if (most) addScaled(tally, most, size);
    else charge(tally, subgraph, times(size, ownWeight(context, info, named, mutationRoot)));
  }
  walk.memo.set(key, tally);
  return tally;
}

/** The key of a field's cost: its nodes and everything of its position the cost depends on (the path only with a plan). */
function memoKey(walk: Walk, group: readonly FieldNode[], at: FieldPosition): string {
  const { parentType, parentSubgraph, upstreamSize, mutationRoot } = at;
  const position = walk.placement ? at.position : '';
  let ids = '';
  for (const node of group) {
    let id = walk.nodeIds.get(node);
    if (id === undefined) walk.nodeIds.set(node, (id = walk.nodeIds.size));
    ids += `${id},`;
  }
  return `${ids}|${parentType.name}|${parentSubgraph ?? ''}|${upstreamSize ?? ''}|${mutationRoot ? 'm' : ''}|${position}`;
}

/** Rule 5a/5b: the size of the list a field (or its sized fields) returns. */
function listSize(context: CostContext, settings: ListSizeSettings, node: FieldNode, field: GraphQLField<unknown, unknown>, parentType: GraphQLObjectType): number {
  if (settings.slicingArguments.length > 0) {
    let sizes: number[] = [];
    for (const name of settings.slicingArguments) {
      const argument = node.arguments?.find((a) => a.name.value === name);
      const value = argument && resolveValue(context, argument.value);
      if (typeof value === 'number' && Number.isFinite(value)) sizes.push(value);
    }
    const given = sizes.length;
    if (given === 0) {
      sizes = field.args.flatMap((arg) => (settings.slicingArguments.includes(arg.name) && typeof arg.defaultValue === 'number' ? [arg.defaultValue] : []));
    }
    if (settings.requireOneSlicingArgument && given !== 1) {
      const coordinate = `${parentType.name}.${field.name}`;
      const fallback = sizes.length > 0 ? 'the largest default' : settings.assumedSize !== undefined ? 'assumedSize' : 'the default list size';
      context.notes.add(
        given > 1
          ? `${coordinate}: ${given} slicing arguments given where @listSize requires one; used the largest`
          : `${coordinate}: no slicing argument given where @listSize requires one; used ${fallback}`,
      );
    }
    if (sizes.length > 0) return Math.max(0, ...sizes);
  }
  return settings.assumedSize ?? context.defaults.listSize;
}
