// The query planner's entry point: one client query, mutation or subscription becomes fetches, one per subgraph and moment, each with its document.
import { DirectiveLocation, type DirectiveNode, type DocumentNode, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { analyseOperation, type OperationAnalysis } from '../../request/operation-analysis.js';
import { batchFetches } from './batch-fetches.js';
import { validateDocuments } from './emit-documents.js';
import type { Fetch, FetchOperation, QueryPlan } from './plan-types.js';
import { lastStage } from './stages.js';
import { FieldPlacer } from './place-fields.js';
import { planRoot } from './plan-roots.js';
import { PlanUnsupported, type SupergraphModel } from './supergraph-model.js';

export type { Fetch, FetchOperation, FetchStep, PlannedDenial, PlannedField, QueryPlan, SelectionTree } from './plan-types.js';

const NONE: ReadonlySet<string> = new Set();

/**
 * Plans a query, mutation or subscription operation against the supergraph (decision 007). Throws
 * PlanUnsatisfiable for an operation no plan can answer (3), and PlanUnsupported for what it does
 * not model (the reason says what); the caller then executes the operation by stitching. `@defer`
 * is planned as the same fetches without it (gateway/deliver/ splits the answer), `@stream`
 * answered whole. A subscription is planned as a query whose one root field is the event (13).
 * The numbers below are referred to in the code. Placing fields (1 to 4, 8 to 13) is in parts,
 * each file's first line naming the rules it holds:
 * - roots (1, 13): plan-roots.ts (planRoot, rootChoices, checkSubscriptionRoot; a subscription
 *   plan's root fetch in withSubscription here);
 * - fields in their parent's step (2) and denials (9): place-fields.ts (FieldPlacer:
 *   planSelections, planObjectFields, deny);
 * - ways (3, 4, 12): the way to a field (its subgraph, level and key) chosen in entity-paths.ts
 *   (chooseWay) among the options way-options.ts finds, from what each subgraph can resolve and
 *   be given (field-sources.ts), and followed in follow-way.ts (follow: the key and required
 *   fields, the way down, the look-up);
 * - needs and keys (3, 4, 10): the response keys and representations in response-keys.ts
 *   (responseKey, representationAt), the steps that carry them in plan-steps.ts (entityStep);
 * - interface objects (8): interface-objects.ts (planInterfaceObject);
 * - conditions (11): field-conditions.ts (includedOf, settleNeeds).
 * Ordering and batching (6) are in batch-fetches.ts; documents (5) and their validation (7) in
 * emit-documents.ts (conditions, 5 and 11, in sentConditions). Decision 019 tells why ways are chosen as they are.
 *
 * 1. Root fields are grouped by the subgraph that resolves them. A root field several subgraphs
 *    resolve is planned alone in each (its ways to what that subgraph leaves included, 12) and
 *    goes to the one that serves its whole selection with the fewest requests in sequence, then
 *    the fewest requests (one already chosen saves its root request), then the one resolving most
 *    of the selection by itself (counting what it `@provides`); one that leaves part of it with no
 *    source is never chosen. Fields with the fewest cheapest subgraphs are placed first, so a field
 *    any of several would serve joins a root fetch already needed. Mutation fields run one after
 *    another (GraphQL spec 6.2.2): each gets its own root fetch, which waits for every step of the
 *    field before it. Introspection fields (`__schema`, `__type`, `__typename`) are answered by the
 *    router from the API schema.
 * 2. Each field stays in the subgraph of its parent while that subgraph can resolve it (its own
 *    field, a key field not `@external` there, or one a parent field `@provides`: per type
 *    condition, at an abstract position), and has no `@requires` there.
 * 3. Otherwise the field moves to an entity step at the same position in a subgraph that resolves
 *    it, by a key the objects can be given; when none can be returned directly, the key's fields
 *    are themselves planned as fields (a hop through a subgraph that knows both keys, or, for a
 *    nested key, look-ups of the objects below). The key fields and `__typename` are added to the
 *    step the look-up follows, for the representations. Where no look-up reaches the field at its
 *    position, 12; how one way is chosen of several, 12 too. A field with no source where it is
 *    asked (no way reaches one at any level; a `resolvable: false` key is never looked up) makes
 *    the operation unsatisfiable (PlanUnsatisfiable): the request is refused with
 *    QUERY_PLANNING_FAILED, never run by stitching.
 * 4. A field with `@requires` gets its required fields planned at the same position first (they may
 *    come from other steps), and its entity step depends on every step that provides them. When
 *    the step of that subgraph at that position is itself needed to provide them (two subgraphs
 *    requiring fields of each other), a second step at the same position follows it.
 * 5. Every step gets its document once: nothing about a plan is computed per request. An abstract
 *    position gets a type condition for each possible type in the subgraph's own schema (below a
 *    union field several subgraphs could answer, only the members all of them have: fieldScope),
 *    and a field whose type in that subgraph differs from the supergraph's is aliased. The client's
 *    executable directives other than `@skip`/`@include` go with the fields they stand on (a
 *    fragment's with each of its fields), the operation's to each fetch whose operation type they
 *    may stand on. Each field is sent under exactly the `@skip`/`@include` that want it (11), its
 *    own and its fragments': on the field, and on inline fragments around it where one would
 *    repeat there; a field wanted in several places is sent once under each place's; the plan's own names (representations variables) never take a client's. The steps the
 *    runner reads are built with their fetch's document and frozen: emission writes nothing back.
 * 6. Entity steps of one subgraph that wait for the same steps share one request.
 * 7. Every document is validated against its subgraph's own schema (read from the join
 *    directives) before the plan is used: PlanInvalid, never a request the subgraph must reject.
 * 8. `@interfaceObject`: see planInterfaceObject (interface-objects.ts).
 * 9. A plan is made per authorization decision too: a field the caller may not read is left out
 *    of every subgraph document and answered FORBIDDEN at its path, nullability deciding what
 *    else falls; keys and required fields the plan itself needs are still fetched.
 * 10. The plan's own fields (keys, required fields, at any depth; planned at a position whose
 *     `need` is set, plan-types.ts) never share a response key with a
 *     different field, the client's or the plan's: one the client's operation uses at that path for
 *     another field, or for the same field with other arguments, goes under a private key. Each
 *     entity step's representations read every field from the key it was fetched under and carry it
 *     under its name (what the subgraph's resolver reads); `@requires` that need one field with
 *     different arguments get entity steps of their own (sharing one request, 6).
 * 11. Each planned field knows when the client's `@skip`/`@include` want it (its own and its
 *    fragments' conditions, from the operation analysis), and what the plan fetches for itself is
 *    wanted whenever what it serves is (a look-up's key whenever the look-up is made, a field's
 *    required fields whenever it is sent: settled once every field is placed): a look-up none of
 *    whose fields is wanted for the request's variables is not made, nor are the look-ups that
 *    only feed it, and, since documents send each field under those conditions (5), no field is
 *    sent whose look-ups were not made.
 * 12. A field no look-up reaches at its own position (a value type with no key where the field
 *     is) is reached from above: an entity above it looked up in a subgraph that resolves every
 *     field from there down to it (re-selected under the client's keys, lists and fragments on
 *     the way), or, in a query, the root field fetched again from such a subgraph (a shared root
 *     field: each subgraph selects what it resolves, the answers merge). Among all the ways to a
 *     field (these, the look-ups of 3 and 8, another step already holding the objects) the fewest
 *     steps one after another win, then the fewest requests, then the subgraph that answers most
 *     of the selection below the field by itself (counting what it `@provides`). The choice is made field by field;
 *     when a way was taken for fewer steps over one as cheap in requests, the operation is planned
 *     again within the first plan's last stage (stages.ts), fewest requests deciding, and the cheaper plan is kept.
 * 13. A subscription (issue 27) selects one root field (GraphQL spec 5.2.3.1; a second one, an
 *     introspection one, or `@skip`/`@include` around it is left to stitching, whose validation
 *     refuses it). It is planned as a query would be (1 to 12), with two differences: its root
 *     step, of the subgraph chosen as in 1, is the plan's only one, its document
 *     `subscription { ... }` (with the client's operation directives that may stand on a
 *     subscription), and it is `QueryPlan.subscription`; and nothing is reached by fetching the
 *     root field again from another subgraph (12), since every event comes from that one
 *     subgraph's subscription: a field only that would reach makes the operation unsatisfiable.
 *     Every other fetch is an entity fetch, a query, waiting for the root fetch (directly or
 *     not). The runner does not send the root fetch as a query: the runtime sends its document to
 *     its subgraph as a subscription and, for each event, runs the plan with the root fetch
 *     answered by the event's payload (`RunRequest.fetchOf`), the entity fetches completing it.
 */
export function buildPlan(
  model: SupergraphModel,
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName?: string | null,
  labels: ReadonlySet<string> = NONE,
  denied: ReadonlySet<string> = NONE,
): QueryPlan {
  const analysis = analyseOperation(document, operationName);
  const operation = analysis.operation;
  if (!operation) throw new PlanUnsupported('no single operation to plan');
  // 5. The operation's own directives go to every fetch whose operation type they may stand on.
  const operationDirectives: Record<FetchOperation, DirectiveNode[]> = { query: [], mutation: [], subscription: [] };
  for (const directive of operation.directives ?? []) {
    const locations = schema.getDirective(directive.name.value)?.locations ?? [];
    if (locations.includes(DirectiveLocation.QUERY)) operationDirectives.query.push(directive);
    if (locations.includes(DirectiveLocation.MUTATION)) operationDirectives.mutation.push(directive);
    if (locations.includes(DirectiveLocation.SUBSCRIPTION)) operationDirectives.subscription.push(directive);
  }
  const request: PlanRequest = { model, schema, analysis, operation, operationDirectives, labels, denied };
  const first = planOnce(request, undefined);
  // 12. Ways are chosen one field at a time; one chosen for fewer steps may save none in the whole
  // plan (a later field needs that many steps anyway). Planned again within the first plan's
  // last stage, fewest requests deciding, the cheaper plan of the two is kept.
  if (first.tradeOffs === 0) return first.plan;
  let second: QueryPlan;
  try {
    second = planOnce(request, lastStageOf(first.plan.fetches)).plan;
  } catch (error) {
    if (error instanceof PlanUnsupported) return first.plan;
    throw error;
  }
  const [a, b] = [lastStageOf(first.plan.fetches), lastStageOf(second.fetches)];
  return b < a || (b === a && second.fetches.length < first.plan.fetches.length) ? second : first.plan;
}

/** What one operation is planned for: the supergraph, the operation and its analysis, the labels switched on and the fields denied. */
interface PlanRequest {
  readonly model: SupergraphModel;
  readonly schema: GraphQLSchema;
  readonly analysis: OperationAnalysis;
  readonly operation: OperationDefinitionNode;
  /** The operation's own directives, by the operation type of the fetches they may stand on (5). */
  readonly operationDirectives: Readonly<Record<FetchOperation, readonly DirectiveNode[]>>;
  readonly labels: ReadonlySet<string>;
  readonly denied: ReadonlySet<string>;
}

function planOnce(request: PlanRequest, stageBudget: number | undefined): { plan: QueryPlan; tradeOffs: number } {
  const { model, schema, analysis, operation, operationDirectives, labels, denied } = request;
  const kind = operation.operation as FetchOperation;
  // 12, 13. Root fields are fetched again from another subgraph in a query only.
  const placer = new FieldPlacer({ model, schema, analysis, labels, denied, stageBudget, rootLookups: kind === 'query' });
  const rootType = schema.getRootType(operation.operation);
  if (!rootType) throw new PlanUnsupported(`no ${kind} type`);
  planRoot(placer, rootType, operation.selectionSet, kind);
  placer.conditions.settleNeeds();
  const definitions = new Map(analysis.variableDefinitions.map((d) => [d.variable.name.value, d]));
  const fetches = batchFetches(placer.steps.all, definitions, placer.steps.rootOperations, operationDirectives);
  // 7. The safety net: a document its subgraph must reject is never sent.
  validateDocuments(model, fetches);
  const plan: QueryPlan = { fetches, denied: placer.denials, variableDefaults: analysis.variableDefaults };
  return { plan: kind === 'subscription' ? withSubscription(plan) : plan, tradeOffs: placer.tradeOffs };
}

/**
 * 13. A subscription plan with its root fetch: the first, the only one that waits for none, every
 *     other one waiting for it (directly or not), which the runtime relies on. None when the
 *     root field is denied (9): nothing is fetched.
 */
function withSubscription(plan: QueryPlan): QueryPlan {
  const { fetches } = plan;
  if (fetches.length === 0) return plan;
  const [root, ...rest] = fetches;
  if (root.operation !== 'subscription' || rest.some((fetch) => fetch.operation !== 'query' || fetch.dependsOn.length === 0)) {
    throw new PlanUnsupported('a subscription planned with other than one root fetch');
  }
  return { ...plan, subscription: root };
}

/** The last stage of a plan's fetches (stages.ts): 0 for root fetches only. */
function lastStageOf(fetches: readonly Fetch[]): number {
  return lastStage(fetches, (fetch) => fetch.dependsOn);
}
