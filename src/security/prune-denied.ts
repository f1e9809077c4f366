// Denied selections taken out of an operation, so that delegation never asks a subgraph for a field the caller may not read.
import {
  Kind,
  getNamedType,
  isAbstractType,
  isInterfaceType,
  isObjectType,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLNamedType,
  type GraphQLResolveInfo,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionNode,
  type SelectionSetNode,
} from 'graphql';

import type { PrunedOperation } from '../request/decision.js';

export type { PrunedOperation };

/** What an emptied selection set keeps: a selection set may not be empty (GraphQL spec §2.4), and `__typename` costs a subgraph nothing. */
const TYPENAME: FieldNode = { kind: Kind.FIELD, name: { kind: Kind.NAME, value: '__typename' } };

interface Pruned {
  set: SelectionSetNode;
  /** Delegating through this set would differ: a selection went, or a spread fragment was pruned. */
  changed: boolean;
}

/**
 * Takes out of `operation` (and of every fragment of `document`) each field the request's guards
 * would answer with FORBIDDEN, so the stitching layer, which builds subgraph documents from the
 * field nodes and fragments it is given, never requests it. Undefined when nothing is taken out.
 *
 * 1. A field goes when its coordinate is denied on an object parent type, or, on an interface or
 *    union parent, on every possible type: exactly the fields whose guard throws whatever the runtime
 *    type (the guards sit on object types), so nothing the client sees changes.
 * 2. Unchanged subtrees keep their node identity (the stitching layer memoises plans by node); an
 *    emptied selection set (field, inline fragment or fragment definition) keeps `__typename`.
 * 3. Each fragment definition is pruned once, in its own right: the parent type of its fields is
 *    fixed by its type condition, whatever spreads it.
 * 4. Variables used only in pruned parts need no care: the stitching layer rebuilds each subgraph
 *    document and declares only the variables that document uses.
 */
export function pruneDenied(schema: GraphQLSchema, operation: OperationDefinitionNode, fragments: readonly FragmentDefinitionNode[], denied: ReadonlySet<string>): PrunedOperation | undefined {
  const fields = new Map<FieldNode, FieldNode>();
  const definitions = new Map(fragments.map((fragment) => [fragment.name.value, fragment]));
  const prunedFragments = new Map<string, Pruned>();
  const visiting = new Set<string>();

  const isDenied = (parent: GraphQLNamedType, field: string): boolean => {
    if (isObjectType(parent)) return denied.has(`${parent.name}.${field}`);
    if (!isAbstractType(parent)) return false;
    const possible = schema.getPossibleTypes(parent);
    return possible.length > 0 && possible.every((type) => denied.has(`${type.name}.${field}`));
  };

  const pruneFragment = (name: string): Pruned | undefined => {
    const done = prunedFragments.get(name);
    if (done) return done;
    const definition = definitions.get(name);
    // Unknown or cyclic spreads cannot pass validation; leave them to the executor.
    if (!definition || visiting.has(name)) return undefined;
    visiting.add(name);
    const type = schema.getType(definition.typeCondition.name.value);
    const pruned = type ? pruneSet(definition.selectionSet, type) : { set: definition.selectionSet, changed: false };
    visiting.delete(name);
    prunedFragments.set(name, pruned);
    return pruned;
  };

  const pruneSet = (set: SelectionSetNode, parent: GraphQLNamedType): Pruned => {
    let selections: SelectionNode[] | undefined;
    let changed = false;
    const replace = (index: number, node: SelectionNode | undefined) => {
      selections ??= set.selections.slice(0, index);
      if (node) selections.push(node);
    };
    set.selections.forEach((selection, index) => {
      let next: SelectionNode | undefined = selection;
      if (selection.kind === Kind.FIELD) {
        const name = selection.name.value;
        const definition = !name.startsWith('__') && (isObjectType(parent) || isInterfaceType(parent)) ? parent.getFields()[name] : undefined;
        if (definition && isDenied(parent, name)) {
          next = undefined;
          changed = true;
        } else if (definition && selection.selectionSet) {
          const inner = pruneSet(selection.selectionSet, getNamedType(definition.type));
          if (inner.changed) {
            next = inner.set === selection.selectionSet ? selection : { ...selection, selectionSet: inner.set };
            fields.set(selection, next);
            changed = true;
          }
        }
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const type = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : parent;
        const inner = type ? pruneSet(selection.selectionSet, type) : undefined;
        if (inner?.changed) {
          if (inner.set !== selection.selectionSet) next = { ...selection, selectionSet: inner.set };
          changed = true;
        }
      } else if (pruneFragment(selection.name.value)?.changed) {
        changed = true;
      }
      if (next !== selection) replace(index, next);
      else selections?.push(selection);
    });
    if (!selections) return { set, changed };
    return { set: { ...set, selections: selections.length > 0 ? selections : [TYPENAME] }, changed: true };
  };

  const root = schema.getRootType(operation.operation);
  if (!root) return undefined;
  const prunedRoot = pruneSet(operation.selectionSet, root);
  if (!prunedRoot.changed) return undefined;
  const record: Record<string, FragmentDefinitionNode> = Object.create(null);
  for (const [name, definition] of definitions) {
    const pruned = pruneFragment(name);
    record[name] = pruned && pruned.set !== definition.selectionSet ? { ...definition, selectionSet: pruned.set } : definition;
  }
  return {
    operation: prunedRoot.set === operation.selectionSet ? operation : { ...operation, selectionSet: prunedRoot.set },
    fragments: record,
    fields,
  };
}

/**
 * The resolve info a resolver should delegate with: `info` itself when none of its field nodes is
 * affected (no allocation), else a copy seeing the pruned nodes, fragments and operation. graphql-js
 * keeps executing the client's document, so the response still has every field, denied ones null
 * with their error, in the client's order.
 */
export function delegationInfo(info: GraphQLResolveInfo, pruned: PrunedOperation): GraphQLResolveInfo {
  const { fieldNodes } = info;
  let mapped: FieldNode[] | undefined;
  for (let i = 0; i < fieldNodes.length; i++) {
    const replacement = pruned.fields.get(fieldNodes[i]);
    if (replacement === undefined) continue;
    mapped ??= fieldNodes.slice();
    mapped[i] = replacement;
  }
  if (!mapped) return info;
  return { ...info, fieldNodes: mapped, fragments: pruned.fragments, operation: pruned.operation };
}
