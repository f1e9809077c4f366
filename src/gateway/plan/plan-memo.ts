// Plans per document: one per document object, operation, authorization decision and override labels, warmed plans found by their text.
import type { DocumentNode, GraphQLSchema } from 'graphql';
import { createDocumentText, type DocumentText } from '../../cache/document-text.js';
import { analyseOperation } from '../../request/operation-analysis.js';
import { buildPlan, type QueryPlan } from './build-plan.js';
import { PlanInvalid, PlanUnsatisfiable, PlanUnsupported, type SupergraphModel } from './supergraph-model.js';

export type PlanOutcome = 'planned' | 'unsatisfiable' | 'unsupported' | 'invalid' | 'failed';

/** What the memo reads of the planning executor's options (execute/planning-executor.ts documents each). */
export interface PlanMemoOptions {
  overrideLabels?: ReadonlySet<string>;
  random?: () => number;
  onPlanned?: (outcome: PlanOutcome, reason: string | undefined, operationName: string | undefined) => void;
  documentText?: DocumentText;
}

/** A plan, or why there is none (stitching runs it), per document object, operation, decision and labels. */
export interface PlanMemo {
  /** The labels switched on for one request (none in a supergraph without progressive overrides): drawn per call. */
  labelsForRequest(): ReadonlySet<string>;
  lookup(document: DocumentNode, operationName: string | null | undefined, on: ReadonlySet<string>, denied?: ReadonlySet<string>): QueryPlan | PlanUnsupported;
  /** Plans without labels or denials, and keeps the plans of the document by its normalised text too (decision 009). */
  warm(document: DocumentNode, operationName: string | null | undefined): QueryPlan | PlanUnsupported;
}

type PlansByName = Map<string, QueryPlan | PlanUnsupported>;

const NONE: ReadonlySet<string> = new Set<string>();

export function createPlanMemo(model: SupergraphModel, supergraphSchema: GraphQLSchema, options: PlanMemoOptions): PlanMemo {
  const plans = new WeakMap<DocumentNode, PlansByName>();
  /** Plans of requests whose decision denies fields, by the decision's denied set (decisions are memoised per document). */
  const plansByDecision = new WeakMap<ReadonlySet<string>, WeakMap<DocumentNode, PlansByName>>();
  const labels = [...model.overrideLabels].sort().map((label) => ({ label, percent: percentOf(label) }));
  const random = options.random ?? Math.random;
  const documentText = options.documentText ?? createDocumentText();
  /**
   * Warmed plans by the document's normalised text. Only `warm` adds to it, so it holds at most the
   * operations warmed (the registry's top N), unlike the per-object memo, which forgets a document
   * with yoga's parse cache.
   */
  const warmed = new Map<string, PlansByName>();

  function labelsForRequest(): ReadonlySet<string> {
    if (labels.length === 0) return NONE;
    const on = new Set<string>();
    for (const { label, percent } of labels) if (percent === undefined ? options.overrideLabels?.has(label) : random() * 100 < percent) on.add(label);
    return on;
  }

  /** The plans of a document object, by operation and labels (a warmed plan of the same text serves its first sight). */
  function plansOf(document: DocumentNode, denied: ReadonlySet<string> | undefined): PlansByName {
    let byDocument = plans;
    if (denied && denied.size > 0) {
      let decided = plansByDecision.get(denied);
      if (!decided) plansByDecision.set(denied, (decided = new WeakMap()));
      byDocument = decided;
    }
    let byName = byDocument.get(document);
    if (!byName) {
      byName = (byDocument === plans && warmed.size > 0 ? warmed.get(documentText(document)) : undefined) ?? new Map();
      byDocument.set(document, byName);
    }
    return byName;
  }

  /** Plans once; what the planner cannot do is told and kept as the reason (never thrown at the request). */
  function plan(document: DocumentNode, operationName: string | null | undefined, on: ReadonlySet<string>, denied: ReadonlySet<string> | undefined): QueryPlan | PlanUnsupported {
    try {
      const planned = buildPlan(model, supergraphSchema, document, operationName, on, denied);
      options.onPlanned?.('planned', undefined, operationName ?? undefined);
      return planned;
    } catch (error) {
      if (error instanceof PlanUnsatisfiable) {
        // No engine can answer it: a plan that refuses the request, never stitching.
        options.onPlanned?.('unsatisfiable', error.message, operationName ?? undefined);
        return { unsatisfiable: error.message, fetches: [], denied: [], variableDefaults: {} };
      }
      // A planner failure must not fail the request: stitching can still run it.
      const outcome: PlanOutcome = error instanceof PlanInvalid ? 'invalid' : error instanceof PlanUnsupported ? 'unsupported' : 'failed';
      const unsupported = error instanceof PlanUnsupported ? error : new PlanUnsupported(`the planner failed: ${(error as Error).message}`);
      options.onPlanned?.(outcome, unsupported.message, operationName ?? undefined);
      return unsupported;
    }
  }

  function lookup(document: DocumentNode, operationName: string | null | undefined, on: ReadonlySet<string>, denied?: ReadonlySet<string>): QueryPlan | PlanUnsupported {
    const byName = plansOf(document, denied);
    const name = operationName ?? soleOperationName(document);
    const key = on.size === 0 ? name : `${name}\u0000${[...on].join('\u0000')}`;
    let planned = byName.get(key);
    if (!planned) byName.set(key, (planned = plan(document, operationName, on, denied)));
    return planned;
  }

  return {
    labelsForRequest,
    lookup,
    warm(document, operationName) {
      const planned = lookup(document, operationName, NONE);
      const text = documentText(document);
      if (!warmed.has(text)) warmed.set(text, plans.get(document)!);
      return planned;
    },
  };
}

/**
 * The plan key's operation name: a request may name the only operation of its document or not, and
 * both must find the same plan (a warmed plan is made with the name the registry recorded).
 */
function soleOperationName(document: DocumentNode): string {
  const analysis = analyseOperation(document);
  return analysis.operationCount === 1 ? (analysis.operation?.name?.value ?? '') : '';
}

/** N of a `percent(N)` label; undefined for a named label. */
function percentOf(label: string): number | undefined {
  const match = /^percent\((\d+(?:\.\d+)?)\)$/.exec(label);
  return match ? Number(match[1]) : undefined;
}
