// The estimated cost a request carries (made by plugins/cost/estimate-cost.ts, read by the rate limit and the subgraph executors).

/** A cost and its attribution to the subgraphs that resolve the costed fields. */
export interface CostEstimate {
  total: number;
  /**
   * Per subgraph (registered name) its share of `total`; every subgraph resolving a selected field has
   * an entry. With a plan, the subgraphs its fetches select the fields from; a field no fetch selects
   * (denied) counts in `total` only.
   */
  bySubgraph: Record<string, number>;
  /** Why the number may surprise: slicing-argument rule broken, operation not found. Empty normally. */
  notes: string[];
}
