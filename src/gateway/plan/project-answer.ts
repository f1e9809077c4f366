// The client's answer from a plan run's merged tree: compiled once per document (and per value of its condition variables), a walk per request (answer-walk.ts).
import {
  getVariableValues,
  isInterfaceType,
  isObjectType,
  Kind,
  visit,
  type ASTVisitor,
  type DocumentNode,
  type ExecutionResult,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  type GraphQLTypeResolver,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { analyseOperation } from '../../request/operation-analysis.js';
import { Selections, runPart, runRoot } from './answer-walk.js';

type Data = Record<string, unknown>;

/**
 * The projection of one operation: the merged tree in, the client's answer out. Undefined from
 * `projectionOf` means graphql-js `execute` shapes this request (introspection, or a condition
 * variable that is not a boolean, whose error graphql-js reports).
 */
export type Projection = (tree: Data) => ExecutionResult;

/**
 * The projection of a deferred part's selections (gateway/deliver/): the merged tree's object where
 * the part applies in, the part's answer out, its errors located below `path` (the place's response
 * path). A non-null field that fails nulls the part's whole `data`, the part's fragment being where
 * the null stops (incremental delivery RFC).
 */
export type PartProjection = (source: Data, path: readonly (string | number)[]) => ExecutionResult;

export interface AnswerProjector {
  projectionOf(document: DocumentNode, operationName: string | null | undefined, variables: Readonly<Data> | undefined): Projection | undefined;
  /**
   * The projection of `selectionSet` (a part of `document`, whose fragments it may spread) on an
   * object of `typeName`; undefined where `projectionOf` would be (graphql-js shapes the request).
   */
  partProjectionOf(document: DocumentNode, operationName: string | null | undefined, variables: Readonly<Data> | undefined, selectionSet: SelectionSetNode, typeName: string): PartProjection | undefined;
}

/**
 * Why not graphql-js `execute` over resolvers that read the tree (what this replaces, and still
 * the reference in tests): per field and per request it builds a resolve-info object, a path
 * object, argument values and promise checks, and it collects each object's fields again. Here the
 * fields of every position are collected once per document (and per value of the `@skip`/
 * `@include` variables), each field's completion is a closure chosen by its type, and a request
 * only walks the tree. The answer is the same, by the spec's execution rules (GraphQL spec 6.4):
 * fields in collected order, leaves serialised by their type, abstract types resolved by
 * `__typename`, a failed field's error at its path, nulls propagated to the nearest nullable
 * position, and the fields after a propagated null left out as graphql-js leaves them. One addition:
 * an object of an interface that the plan did not need the concrete type of (from an
 * `@interfaceObject`, only fields of the interface asked) carries the interface's name, and is
 * projected on the interface itself (graphql-js, given `interfaceObjectTypeResolver`, on one of its
 * implementations, which answers the same such fields; an interface without one it cannot project).
 */
export function createAnswerProjector(schema: GraphQLSchema): AnswerProjector {
  const compiled = new WeakMap<DocumentNode, Map<string, Compiled | null>>();

  const compiledOf = (document: DocumentNode, operationName: string | null | undefined): Compiled | null => {
    let byName = compiled.get(document);
    if (!byName) compiled.set(document, (byName = new Map()));
    const name = operationName ?? '';
    let entry = byName.get(name);
    if (entry === undefined) {
      entry = compileOperation(schema, document, operationName);
      byName.set(name, entry);
    }
    return entry;
  };

  return {
    projectionOf(document, operationName, variables) {
      return compiledOf(document, operationName)?.forConditions(variables)?.whole;
    },
    partProjectionOf(document, operationName, variables, selectionSet, typeName) {
      return compiledOf(document, operationName)?.forConditions(variables)?.part(selectionSet, typeName);
    },
  };
}

/** The projections of one operation for one set of condition values: the whole answer's, and its deferred parts' (made on first use). */
interface Variant {
  readonly whole: Projection;
  part(selectionSet: SelectionSetNode, typeName: string): PartProjection | undefined;
}

interface Compiled {
  forConditions(variables: Readonly<Data> | undefined): Variant | undefined;
}

/** At most this many projections per operation, one per combination of condition values seen. */
const MAX_CONDITION_VARIANTS = 64;

function compileOperation(schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined): Compiled | null {
  // GetOperation, as every reader of the document picks it (decision 015).
  const analysis = analyseOperation(document, operationName);
  const operation = analysis.operation;
  if (!operation) return null;
  const rootType = schema.getRootType(operation.operation);
  if (!rootType) return null;
  // graphql-js's CollectFields reads fragments from a plain record.
  const fragments: Record<string, FragmentDefinitionNode> = Object.assign(Object.create(null) as Record<string, FragmentDefinitionNode>, Object.fromEntries(analysis.fragments));
  const conditionVariables = conditionVariablesOf(operation, fragments);

  const build = (values: Data): Variant | undefined => {
    const root = new Selections(schema, fragments, values, rootType, operation.selectionSet);
    // Introspection is answered by graphql-js from the API schema: it reads no merged tree.
    if (asksIntrospection(root)) return undefined;
    const parts = new WeakMap<SelectionSetNode, Map<string, Selections | null>>();
    return {
      whole: (tree) => runRoot(root, tree),
      part(selectionSet, typeName) {
        let byType = parts.get(selectionSet);
        if (!byType) parts.set(selectionSet, (byType = new Map()));
        let selections = byType.get(typeName);
        if (selections === undefined) {
          const type = schema.getType(typeName);
          selections = type && (isObjectType(type) || isInterfaceType(type)) ? new Selections(schema, fragments, values, type, selectionSet) : null;
          if (selections && asksIntrospection(selections)) selections = null;
          byType.set(typeName, selections);
        }
        const compiledPart = selections;
        return compiledPart ? (source, path) => runPart(compiledPart, source, path) : undefined;
      },
    };
  };

  if (conditionVariables.length === 0) {
    const projection = build({});
    return { forConditions: () => projection };
  }
  const variants = new Map<string, Variant | undefined>();
  const definitions = operation.variableDefinitions?.filter((definition) => conditionVariables.includes(definition.variable.name.value)) ?? [];
  return {
    forConditions(variables) {
      let signature = '';
      for (const name of conditionVariables) {
        const value = variables?.[name];
        signature += value === true ? 't' : value === false ? 'f' : value === undefined ? 'u' : 'x';
      }
      // Anything but true, false or absent (null, a default's null): graphql-js reports it.
      if (signature.includes('x')) return undefined;
      let projection = variants.get(signature);
      if (projection === undefined && !variants.has(signature)) {
        const coerced = getVariableValues(schema, definitions, (variables ?? {}) as Data);
        if (coerced.errors) return undefined;
        for (const name of conditionVariables) if (typeof coerced.coerced[name] !== 'boolean') return undefined;
        projection = build(coerced.coerced);
        if (variants.size < MAX_CONDITION_VARIANTS) variants.set(signature, projection);
      }
      return projection;
    },
  };
}

/** Whether a position selects `__schema` or `__type`: graphql-js answers those from the API schema. */
function asksIntrospection(selections: Selections): boolean {
  for (const nodes of selections.fieldNodes.values()) {
    const fieldName = nodes[0].name.value;
    if (fieldName === '__schema' || fieldName === '__type') return true;
  }
  return false;
}

/** Names of the variables that `@skip(if:)` and `@include(if:)` read anywhere in the operation or its fragments. */
function conditionVariablesOf(operation: OperationDefinitionNode, fragments: Record<string, FragmentDefinitionNode>): string[] {
  const names = new Set<string>();
  const visitor: ASTVisitor = {
    Directive(node) {
      if (node.name.value !== 'skip' && node.name.value !== 'include') return;
      for (const argument of node.arguments ?? []) if (argument.value.kind === Kind.VARIABLE) names.add(argument.value.name.value);
    },
  };
  visit(operation, visitor);
  for (const fragment of Object.values(fragments)) visit(fragment, visitor);
  return [...names].sort();
}

/**
 * graphql-js's type resolution for the reference projection (`execute` over the merged tree): by
 * `__typename`, except that an object carrying an interface's own name is taken as its first
 * implementation, which answers the interface's fields alike (see createAnswerProjector).
 */
export const interfaceObjectTypeResolver: GraphQLTypeResolver<unknown, unknown> = function interfaceObjectTypeResolver(value, _context, info, abstract) {
  const name = typeof value === 'object' && value !== null ? (value as Data).__typename : undefined;
  if (typeof name !== 'string' || name !== abstract.name || !isInterfaceType(abstract)) return name as string | undefined;
  return info.schema.getPossibleTypes(abstract)[0]?.name ?? name;
};
