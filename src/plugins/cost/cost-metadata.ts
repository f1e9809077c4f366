// The cost facts' types for the estimator: the router reads them once per served graph (`served.supergraph.cost`).
export type { CostMetadata, FieldCostInfo, ListSizeSettings, TypeCostInfo } from '../../gateway/supergraph/cost-facts.js';
