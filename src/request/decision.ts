// The authorization decision a request carries: which coordinates it may not read (made by security/authorization.ts).
import type { FieldNode, FragmentDefinitionNode, OperationDefinitionNode } from 'graphql';

export interface Decision {
  /** Coordinates this request may not read: their fields resolve to null with FORBIDDEN. */
  denied: ReadonlySet<string>;
  /** Every root field is denied, or the operation itself is: the request is refused whole (401/403). */
  refused: boolean;
  /** The operation without its denied selections, as the guards hand it to delegation; absent when nothing is pruned. */
  pruned?: PrunedOperation;
}

/** The operation as delegation sees it. Field nodes of the client's document map to their pruned counterparts. */
export interface PrunedOperation {
  readonly operation: OperationDefinitionNode;
  /** Every fragment of the document, pruned: what `info.fragments` holds for delegation. */
  readonly fragments: Readonly<Record<string, FragmentDefinitionNode>>;
  /**
   * The client's field nodes whose delegated selection differs, each mapped to the node delegation
   * must see: a pruned copy, or the node itself when only a fragment it spreads was pruned (the new
   * `fragments` then make the difference). A node absent here delegates unchanged.
   */
  readonly fields: ReadonlyMap<FieldNode, FieldNode>;
}
