// The client's answer from a plan run's merged tree: compiled once per document, a walk per request.
import {
  getVariableValues,
  GraphQLError,
  isInterfaceType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  Kind,
  locatedError,
  visit,
  type ASTVisitor,
  type DocumentNode,
  type ExecutionResult,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLAbstractType,
  type GraphQLInterfaceType,
  type GraphQLLeafType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type GraphQLTypeResolver,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
// graphql-js's own field collection (`@internal`, a stable module of graphql 16): the compiled walk
// must order and merge fields exactly as `execute` does, conditions and fragments included.
import { collectFields, collectSubfields } from 'graphql/execution/collectFields.js';
import { analyseOperation } from '../../request/operation-analysis.js';
import { inspect } from 'graphql/jsutils/inspect.js';

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

/** What one request's walk carries: the current path (copied only into an error) and the errors so far. */
interface Walk {
  path: (string | number)[];
  errors: GraphQLError[];
}

type Complete = (value: unknown, walk: Walk) => unknown;

interface CompiledField {
  readonly key: string;
  /** `__typename` answers the position's type name, whatever the tree holds. */
  readonly typeName?: string;
  readonly complete: Complete;
  readonly nonNull: boolean;
  readonly nodes: readonly FieldNode[];
}

/** The collected fields of one object type at one position, their completions made on first use. */
class Selections {
  readonly fieldNodes: Map<string, readonly FieldNode[]>;
  private compiledFields?: CompiledField[];

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly fragments: Record<string, FragmentDefinitionNode>,
    private readonly variables: Data,
    /** An interface for an object the plan left with the interface's name (see `runtimeType`). */
    private readonly type: GraphQLObjectType | GraphQLInterfaceType,
    /** The operation's selection set at the root; below it, the field nodes whose sub-selections merge (collectSubfields). */
    from: SelectionSetNode | readonly FieldNode[],
  ) {
    // graphql-js's collection takes an interface as well: a condition applies when the interface is it or implements it.
    const runtime = type as GraphQLObjectType;
    this.fieldNodes = 'kind' in from ? collectFields(schema, fragments, variables, runtime, from) : collectSubfields(schema, fragments, variables, runtime, from);
  }

  get fields(): CompiledField[] {
    return (this.compiledFields ??= this.compile());
  }

  private compile(): CompiledField[] {
    const fields: CompiledField[] = [];
    const definitions = this.type.getFields();
    for (const [key, nodes] of this.fieldNodes) {
      const fieldName = nodes[0].name.value;
      if (fieldName === '__typename') {
        fields.push({ key, typeName: this.type.name, complete: identity, nonNull: true, nodes });
        continue;
      }
      const definition = definitions[fieldName];
      // graphql-js leaves out a field its type does not have (validation refused it already).
      if (!definition) continue;
      const site: Site = { parentName: this.type.name, fieldName, nodes };
      fields.push({ key, complete: this.completion(definition.type, site), nonNull: isNonNullType(definition.type), nodes });
    }
    return fields;
  }

  /** The completion of a value of `type` (GraphQL spec 6.4.3 CompleteValue), made once per position. */
  private completion(type: GraphQLOutputType, site: Site): Complete {
    if (isNonNullType(type)) {
      const inner = this.completion(type.ofType, site);
      return (value, walk) => {
        if (value instanceof Error) throw value;
        const completed = inner(value, walk);
        if (completed === null) throw new Error(`Cannot return null for non-nullable field ${site.parentName}.${site.fieldName}.`);
        return completed;
      };
    }
    if (isListType(type)) {
      const item = this.completion(type.ofType, site);
      const itemNonNull = isNonNullType(type.ofType);
      return (value, walk) => {
        if (value instanceof Error) throw value;
        if (value === null || value === undefined) return null;
        return completeList(value, item, itemNonNull, site, walk);
      };
    }
    if (isLeafType(type)) {
      return (value) => {
        if (value instanceof Error) throw value;
        if (value === null || value === undefined) return null;
        return serializeLeaf(type, value);
      };
    }
    if (isObjectType(type)) {
      let selections: Selections | undefined;
      return (value, walk) => {
        if (value instanceof Error) throw value;
        if (value === null || value === undefined) return null;
        selections ??= this.subSelections(type, site);
        return completeObject(selections, value as Data, walk);
      };
    }
    const abstract = type as GraphQLAbstractType;
    const byType = new Map<string, Selections>();
    return (value, walk) => {
      if (value instanceof Error) throw value;
      if (value === null || value === undefined) return null;
      const runtime = this.runtimeType(abstract, value, site);
      let selections = byType.get(runtime.name);
      if (!selections) byType.set(runtime.name, (selections = this.subSelections(runtime, site)));
      return completeObject(selections, value as Data, walk);
    };
  }

  private subSelections(type: GraphQLObjectType | GraphQLInterfaceType, site: Site): Selections {
    return new Selections(this.schema, this.fragments, this.variables, type, site.nodes);
  }

  /**
   * The object type an abstract position holds, by the value's `__typename`, with graphql-js's
   * errors; the interface itself for an object that carries its name (planned as the interface).
   */
  private runtimeType(abstract: GraphQLAbstractType, value: unknown, site: Site): GraphQLObjectType | GraphQLInterfaceType {
    const name = typeof value === 'object' && value !== null ? (value as Data).__typename : undefined;
    if (typeof name !== 'string') {
      // The schema has no isTypeOf functions, so a value without `__typename` resolves to no type.
      throw new GraphQLError(
        `Abstract type "${abstract.name}" must resolve to an Object type at runtime for field "${site.parentName}.${site.fieldName}". Either the "${abstract.name}" type should provide a "resolveType" function or each possible type should provide an "isTypeOf" function.`,
        { nodes: site.nodes },
      );
    }
    if (name === abstract.name && isInterfaceType(abstract)) return abstract;
    const runtime = this.schema.getType(name);
    if (runtime == null) throw new GraphQLError(`Abstract type "${abstract.name}" was resolved to a type "${name}" that does not exist inside the schema.`, { nodes: site.nodes });
    if (!isObjectType(runtime)) throw new GraphQLError(`Abstract type "${abstract.name}" was resolved to a non-object type "${name}".`, { nodes: site.nodes });
    if (!this.schema.isSubType(abstract, runtime)) throw new GraphQLError(`Runtime Object type "${runtime.name}" is not a possible type for "${abstract.name}".`, { nodes: site.nodes });
    return runtime;
  }
}

interface Site {
  readonly parentName: string;
  readonly fieldName: string;
  readonly nodes: readonly FieldNode[];
}

const identity: Complete = (value) => value;

function serializeLeaf(type: GraphQLLeafType, value: unknown): unknown {
  const serialized = type.serialize(value);
  if (serialized === null || serialized === undefined) {
    throw new Error(`Expected \`${inspect(type)}.serialize(${inspect(value)})\` to return non-nullable value, returned: ${inspect(serialized)}`);
  }
  return serialized;
}

/**
 * An object's fields in collected order. A field that fails is null with its error, located at its
 * path; a non-null one throws on to the parent (the fields after it are not walked, as in graphql-js).
 */
function completeObject(selections: Selections, source: Data, walk: Walk): Data {
  const answer: Data = {};
  const fields = selections.fields;
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i];
    let value: unknown;
    if (field.typeName !== undefined) value = field.typeName;
    else {
      walk.path.push(field.key);
      try {
        value = field.complete(source[field.key], walk);
      } catch (raw) {
        const error = locatedError(raw, field.nodes, walk.path.slice());
        walk.path.pop();
        if (field.nonNull) throw error;
        walk.errors.push(error);
        value = null;
        setKey(answer, field.key, value);
        continue;
      }
      walk.path.pop();
    }
    setKey(answer, field.key, value);
  }
  return answer;
}

/** An alias may be `__proto__`: it must be an own property of the answer, not its prototype. */
function setKey(answer: Data, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(answer, key, { value, enumerable: true, writable: true, configurable: true });
  else answer[key] = value;
}

function completeList(value: unknown, item: Complete, itemNonNull: boolean, site: Site, walk: Walk): unknown[] {
  if (!Array.isArray(value)) {
    if (typeof value !== 'object' || value === null || typeof (value as Iterable<unknown>)[Symbol.iterator] !== 'function') {
      throw new GraphQLError(`Expected Iterable, but did not find one for field "${site.parentName}.${site.fieldName}".`);
    }
    value = Array.from(value as Iterable<unknown>);
  }
  const items = value as unknown[];
  const answer = new Array<unknown>(items.length);
  for (let index = 0; index < items.length; index++) {
    walk.path.push(index);
    try {
      answer[index] = item(items[index], walk);
    } catch (raw) {
      const error = locatedError(raw, site.nodes, walk.path.slice());
      walk.path.pop();
      if (itemNonNull) throw error;
      walk.errors.push(error);
      answer[index] = null;
      continue;
    }
    walk.path.pop();
  }
  return answer;
}

/** The root: a failed non-null root field makes `data` null (GraphQL spec 6.4.4). */
function runRoot(root: Selections, tree: Data): ExecutionResult {
  const walk: Walk = { path: [], errors: [] };
  let data: Data | null;
  try {
    data = completeObject(root, tree, walk);
  } catch (error) {
    walk.errors.push(error as GraphQLError);
    data = null;
  }
  return walk.errors.length === 0 ? { data } : { errors: walk.errors, data };
}

/** A deferred part at its place: a failed non-null field nulls the part's data (the fragment is where the null stops). */
function runPart(selections: Selections, source: Data, path: readonly (string | number)[]): ExecutionResult {
  const walk: Walk = { path: [...path], errors: [] };
  let data: Data | null;
  try {
    data = completeObject(selections, source, walk);
  } catch (error) {
    walk.errors.push(error as GraphQLError);
    data = null;
  }
  return walk.errors.length === 0 ? { data } : { errors: walk.errors, data };
}
