// The cost facts' types for the estimator, and a one-off reader for tests: the router reads them once per served graph (`served.supergraph.cost`).
import type { DocumentNode } from 'graphql';
import { Supergraph } from '../../gateway/supergraph/supergraph.js';
import type { CostMetadata } from '../../gateway/supergraph/cost-facts.js';

export type { CostMetadata, FieldCostInfo, ListSizeSettings, TypeCostInfo } from '../../gateway/supergraph/cost-facts.js';

/** The cost facts of a supergraph not served (tests, tools): the same reader and `@link` names as a served graph's. */
export function readCostMetadata(supergraph: string | DocumentNode): CostMetadata {
  return (typeof supergraph === 'string' ? Supergraph.fromSdl(supergraph) : Supergraph.fromDocument(supergraph)).cost;
}
