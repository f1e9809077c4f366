// Random valid GraphQL queries over a schema, from a seed: the input of the differential test of the two engines.
import {
  getNamedType,
  getNullableType,
  isAbstractType,
  isCompositeType,
  isEnumType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  isRequiredArgument,
  isScalarType,
  isUnionType,
  type GraphQLArgument,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLSchema,
} from 'graphql';

/** A seeded PRNG (mulberry32): 32 bits of state, uniform floats in [0, 1), the same sequence for the same seed everywhere. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return function next() {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Values for argument `arg` of `Type.field`, keyed `Type.field.arg` (ids that hit real data, and a few that miss). */
export type KnownValues = Readonly<Record<string, readonly unknown[]>>;

export interface GenerateOptions {
  /** Values to use for arguments by coordinate `Type.field.arg`; arguments of other String/ID coordinates get "1". Default none. */
  knownValues?: KnownValues;
  /** Deepest field nesting below the root (root fields are depth 1). Default 4. */
  maxDepth?: number;
  /** Most selections (fields, fragments) in one document; keeps documents under the router's token limit. Default 40. */
  maxSelections?: number;
  /** Most aliases in one document (the router allows 30). Default 8. */
  maxAliases?: number;
  /** Most @skip/@include directives in one document (the router allows 50). Default 6. */
  maxDirectives?: number;
}

export interface GeneratedQuery {
  query: string;
  variables: Record<string, unknown>;
}

/** A value we could not produce for a required argument: the field is left out. */
const CANNOT = Symbol('cannot produce');

/**
 * What the validator's OverlappingFieldsCanBeMerged rule (spec 5.3.2) looks at, per selection set: every response key
 * maps to one field name, arguments and return type, and the sub-selections of one key merge into one scope. The
 * generator keeps that true by construction: a key already used with another signature gets a fresh alias instead.
 */
interface Scope {
  keys: Map<string, { signature: string; child: Scope }>;
}

const newScope = (): Scope => ({ keys: new Map() });

/**
 * Generates one query document and its variables.
 *
 * 1. Root fields of Query are picked at random; required arguments get a known value, an enum value, a small int,
 *    as a literal or a variable; a field whose required arguments cannot be produced is never picked.
 * 2. Each selection set gets one to four selections: fields (sometimes aliased, sometimes twice under two keys with
 *    other arguments), `__typename`, inline fragments and named fragments whose type condition can apply to the
 *    parent (itself, an interface or union containing it, or a possible type of an abstract parent; spec 5.5.2.3).
 * 3. Fields, fragments and spreads sometimes carry `@skip`/`@include` with a literal or a Boolean! variable.
 * 4. Below `maxDepth` only leaves and `__typename` are selected; budgets keep the document within the router's limits.
 */
export function generateQuery(schema: GraphQLSchema, seed: number, options: GenerateOptions = {}): GeneratedQuery {
  const random = mulberry32(seed);
  const known = options.knownValues ?? {};
  const maxDepth = options.maxDepth ?? 4;
  let selectionsLeft = options.maxSelections ?? 40;
  let aliasesLeft = options.maxAliases ?? 8;
  let directivesLeft = options.maxDirectives ?? 6;
  const variables: Record<string, unknown> = {};
  const variableTypes: string[] = [];
  const fragments: string[] = [];
  let aliasCount = 0;

  const chance = (p: number) => random() < p;
  const int = (n: number) => Math.floor(random() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)];

  function newVariable(type: string, value: unknown): string {
    const name = `v${variableTypes.length}`;
    variableTypes.push(`$${name}: ${type}`);
    variables[name] = value;
    return `$${name}`;
  }

  /** A GraphQL literal of a JS value of input type `type` (JSON, with enum values unquoted and object keys bare). */
  function literal(type: GraphQLInputType, value: unknown): string {
    if (value === null) return 'null';
    const nullable = getNullableType(type);
    if (isListType(nullable)) return `[${(value as unknown[]).map((v) => literal(nullable.ofType, v)).join(', ')}]`;
    if (isInputObjectType(nullable)) {
      const fields = nullable.getFields();
      return `{${Object.entries(value as Record<string, unknown>)
        .map(([k, v]) => `${k}: ${literal(fields[k].type, v)}`)
        .join(', ')}}`;
    }
    if (isEnumType(nullable)) return String(value);
    return JSON.stringify(value);
  }

  /** A JS value of input type `type` for argument coordinate `coordinate`, or CANNOT. */
  function inputValue(type: GraphQLInputType, coordinate: string, depth = 0): unknown {
    const values = known[coordinate];
    if (values?.length) return pick(values);
    const nullable = getNullableType(type);
    if (isListType(nullable)) {
      const item = inputValue(nullable.ofType, coordinate, depth + 1);
      return item === CANNOT ? CANNOT : [item];
    }
    if (isEnumType(nullable)) {
      const members = nullable.getValues();
      return members.length ? pick(members).name : CANNOT;
    }
    if (isInputObjectType(nullable)) {
      if (depth > 2) return CANNOT;
      const out: Record<string, unknown> = {};
      for (const field of Object.values(nullable.getFields())) {
        const required = isNonNullType(field.type) && field.defaultValue === undefined;
        if (!required && chance(0.5)) continue;
        const value = inputValue(field.type, `${coordinate}.${field.name}`, depth + 1);
        if (value === CANNOT) {
          if (required) return CANNOT;
          continue;
        }
        out[field.name] = value;
      }
      return out;
    }
    if (isScalarType(nullable)) {
      switch (nullable.name) {
        case 'Int':
          return int(6);
        case 'Float':
          return pick([0, 1.5, 10]);
        case 'Boolean':
          return chance(0.5);
        case 'String':
        case 'ID':
          return '1';
      }
    }
    return CANNOT;
  }

  /** The printed arguments of a field, or CANNOT when a required one cannot be produced. */
  function argumentsOf(parent: GraphQLNamedType, field: GraphQLField<unknown, unknown>): string | typeof CANNOT {
    const printed: string[] = [];
    for (const arg of field.args as readonly GraphQLArgument[]) {
      const required = isRequiredArgument(arg);
      if (!required && chance(0.5)) continue;
      const value = inputValue(arg.type, `${parent.name}.${field.name}.${arg.name}`);
      if (value === CANNOT) {
        if (required) return CANNOT;
        continue;
      }
      const asVariable = chance(0.3);
      printed.push(`${arg.name}: ${asVariable ? newVariable(String(arg.type), value) : literal(arg.type, value)}`);
    }
    return printed.length ? `(${printed.join(', ')})` : '';
  }

  /** Sometimes ` @skip(if: …)` or ` @include(if: …)`, with a literal or a Boolean! variable. */
  function conditions(): string {
    if (directivesLeft <= 0 || !chance(0.12)) return '';
    directivesLeft--;
    const name = chance(0.5) ? 'skip' : 'include';
    const value = chance(0.5);
    return ` @${name}(if: ${chance(0.5) ? newVariable('Boolean!', value) : String(value)})`;
  }

  /** Types a fragment inside a selection set on `parent` may be conditioned on. */
  function fragmentTargets(parent: GraphQLCompositeType): GraphQLCompositeType[] {
    const possible = (t: GraphQLCompositeType): readonly GraphQLObjectType[] => (isAbstractType(t) ? schema.getPossibleTypes(t) : [t]);
    const parentPossible = new Set(possible(parent).map((t) => t.name));
    return Object.values(schema.getTypeMap()).filter(
      (t): t is GraphQLCompositeType => isCompositeType(t) && !t.name.startsWith('__') && possible(t).some((p) => parentPossible.has(p.name)),
    );
  }

  /** Fields of `parent` (not introspection) a selection may use. */
  function fieldsOf(parent: GraphQLCompositeType): GraphQLField<unknown, unknown>[] {
    if (isUnionType(parent)) return [];
    return Object.values(parent.getFields()).filter((f) => !f.name.startsWith('__'));
  }

  /** One field selection on `parent`, or undefined when none could be made. */
  function fieldSelection(parent: GraphQLCompositeType, scope: Scope, depth: number, leavesOnly: boolean): string | undefined {
    const candidates = fieldsOf(parent).filter((f) => !leavesOnly || isLeafType(getNamedType(f.type)));
    if (!candidates.length) return undefined;
    const field = pick(candidates);
    // A field given up after its arguments were made must take its variables with it (no unused variables, spec 5.8.4).
    const mark = variableTypes.length;
    const giveUp = () => {
      for (const declared of variableTypes.splice(mark)) delete variables[declared.slice(1, declared.indexOf(':'))];
      return undefined;
    };
    const args = argumentsOf(parent, field);
    if (args === CANNOT) return giveUp();
    const signature = `${field.name}${args}:${String(field.type)}`;
    // A variable in the arguments makes the signature unique to this position; literal args compare as printed.
    let key = field.name;
    const wantAlias = aliasesLeft > 0 && chance(0.2);
    const taken = scope.keys.get(key);
    if (wantAlias || (taken && taken.signature !== signature)) {
      if (aliasesLeft <= 0) return giveUp();
      aliasesLeft--;
      key = `a${aliasCount++}_${field.name}`;
    }
    let entry = scope.keys.get(key);
    if (!entry) {
      entry = { signature, child: newScope() };
      scope.keys.set(key, entry);
    }
    const head = `${key === field.name ? '' : `${key}: `}${field.name}${args}${conditions()}`;
    const named = getNamedType(field.type);
    if (!isCompositeType(named)) return head;
    return `${head} ${selectionSet(named, entry.child, depth + 1)}`;
  }

  /** A fragment (inline or named) on a type that can apply to `parent`; its fields share the parent's scope. */
  function fragmentSelection(parent: GraphQLCompositeType, scope: Scope, depth: number): string {
    const targets = fragmentTargets(parent);
    // Abstract parents favour their possible types, where the interesting type conditions are.
    const target = isAbstractType(parent) && chance(0.7) ? pick(schema.getPossibleTypes(parent)) : pick(targets);
    const body = selectionSet(target, scope, depth);
    if (chance(0.4)) {
      const name = `F${fragments.length}`;
      fragments.push(`fragment ${name} on ${target.name} ${body}`);
      const spread = `...${name}${conditions()}`;
      // The same fragment spread twice in one selection set is legal and must answer once.
      return chance(0.1) ? `${spread} ...${name}` : spread;
    }
    const omitCondition = target === parent && chance(0.5);
    return `...${omitCondition ? '' : ` on ${target.name}`}${conditions()} ${body}`;
  }

  function selectionSet(parent: GraphQLCompositeType, scope: Scope, depth: number): string {
    const leavesOnly = depth >= maxDepth;
    const wanted = 1 + int(4);
    const selections: string[] = [];
    for (let i = 0; i < wanted * 3 && selections.length < wanted; i++) {
      if (selectionsLeft <= 0) break;
      const roll = random();
      let selection: string | undefined;
      if (roll < 0.1) selection = `__typename${conditions()}`;
      else if (roll < (isUnionType(parent) ? 1 : 0.8)) {
        selection = isUnionType(parent) ? (leavesOnly ? undefined : fragmentSelection(parent, scope, depth)) : fieldSelection(parent, scope, depth, leavesOnly);
      } else if (!leavesOnly) selection = fragmentSelection(parent, scope, depth);
      if (selection === undefined) continue;
      selectionsLeft--;
      selections.push(selection);
    }
    // A selection set is never empty; __typename is valid on every composite type.
    if (!selections.length) selections.push('__typename');
    return `{ ${selections.join(' ')} }`;
  }

  const root = schema.getQueryType();
  if (!root) throw new Error('the schema has no query type');
  const body = selectionSet(root, newScope(), 1);
  const header = variableTypes.length ? `query Q(${variableTypes.join(', ')})` : 'query Q';
  return { query: [`${header} ${body}`, ...fragments].join('\n'), variables };
}
