// The walk of one compiled projection over a merged tree (project-answer.ts): each position's fields collected once, each field's completion a closure chosen by its type (GraphQL spec 6.4.3), errors located and nulls propagated as graphql-js does.
import {
  GraphQLError,
  isInterfaceType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  locatedError,
  type ExecutionResult,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLAbstractType,
  type GraphQLInterfaceType,
  type GraphQLLeafType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';
// graphql-js's own field collection (`@internal`, a stable module of graphql 16): the compiled walk
// must order and merge fields exactly as `execute` does, conditions and fragments included.
import { collectFields, collectSubfields } from 'graphql/execution/collectFields.js';
import { inspect } from 'graphql/jsutils/inspect.js';

type Data = Record<string, unknown>;

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
export class Selections {
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
export function runRoot(root: Selections, tree: Data): ExecutionResult {
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
export function runPart(selections: Selections, source: Data, path: readonly (string | number)[]): ExecutionResult {
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
