// What the supergraph's join directives say about each type and field: which subgraph can resolve it, with which keys.
import { Kind, isTypeDefinitionNode, isTypeExtensionNode, parse, type DocumentNode, type GraphQLSchema, type SelectionSetNode } from 'graphql';
import { booleanArgument, enumArgument, stringArgument } from './join-directives.js';
import { extractSubgraphSchemas } from './subgraph-schemas.js';
import { readLinkNames, type LinkNames } from '../supergraph/link-names.js';

/** One `@join__field(graph: G, ...)` of a field. */
interface JoinField {
  external: boolean;
  requires?: string;
  provides?: string;
  /** The field moved to another subgraph (`@override`), kept here only for keys. */
  usedOverridden: boolean;
  /**
   * A progressive-override label: while it is on, the subgraph that overrides (`override` set)
   * serves the field; while it is off, the one overridden. Decided per request (see `labelsFor`).
   */
  overrideLabel?: string;
  /** This graph took the field over from another (`@override(from:)`). */
  overrides: boolean;
}

/** How one subgraph knows a type: its entity keys (resolvable ones) and whether it is an interface object. */
interface TypeInGraph {
  /** Keys this subgraph can resolve the entity by (`_entities`), as field sets. */
  keys: string[];
  /** Every key this subgraph declares, resolvable or not: fields it can always return. */
  keyFields: Set<string>;
  interfaceObject: boolean;
}

interface TypeModel {
  graphs: Map<string, TypeInGraph>;
  /** Field name → its join entries per graph; a field with none is resolvable wherever its type is. */
  fields: Map<string, Map<string, JoinField>>;
  /** Fields with a `@join__field` that names no graph: no subgraph serves them as such. */
  unowned: Set<string>;
}

/** Thrown while planning an operation the planner does not model; the router then executes it by stitching. */
export class PlanUnsupported extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'PlanUnsupported';
  }
}

/**
 * An operation no plan can answer: a field it selects has no source where it is asked (no subgraph
 * resolves it there, and no entity look-up by a key the objects' subgraph can return reaches one
 * that does; a `resolvable: false` key is never looked up). Not a gap of the planner, so stitching
 * does not get it: the request is answered with one error and no data, as Apollo's planner and the
 * federation audit expect of a query the supergraph cannot satisfy.
 */
export class PlanUnsatisfiable extends PlanUnsupported {
  constructor(reason: string) {
    super(reason);
    this.name = 'PlanUnsatisfiable';
  }
}

/**
 * A plan whose subgraph document its subgraph would reject (validated against the subgraph's own
 * schema when planned). The safety net, never the design: each one is a planner bug, logged and
 * counted (`switchyard_plans_total{outcome="invalid"}`), and the document runs by stitching.
 */
export class PlanInvalid extends PlanUnsupported {
  constructor(reason: string) {
    super(reason);
    this.name = 'PlanInvalid';
  }
}

const NO_LABELS: ReadonlySet<string> = new Set();

/** A parsed field set (`id`, `price weight`, `organization { id }`): field name → its own sub-selection. */
export type FieldSetTree = Map<string, FieldSetTree>;

/**
 * In a `@provides` field set (`providedSet`), the key of what an inline fragment provides: this
 * prefix and its type condition (`... on Dog { name }` provides `name` only on Dogs). No field name
 * starts with it; `providedFor` resolves the conditions for the objects at hand.
 */
export const PROVIDED_ON = '... on ';

/**
 * The join facts of a supergraph, read once per served graph (the served graph's `Supergraph` builds
 * it, see src/gateway/supergraph/supergraph.ts). `graph` everywhere is the `join__Graph` enum value
 * (PRODUCTS); `subgraphName` maps it to the published name, for every reader of the supergraph.
 */
export class SupergraphModel {
  readonly #types = new Map<string, TypeModel>();
  /** Every type's `@join__type` graphs, whatever its kind (enums, scalars and inputs too), in supergraph order. */
  readonly #typeGraphs = new Map<string, string[]>();
  readonly #fieldSets = new Map<string, SelectionSetNode>();
  readonly subgraphName = new Map<string, string>();
  /** Every progressive-override label of the supergraph. */
  readonly overrideLabels = new Set<string>();
  readonly #document: DocumentNode;
  readonly #names: LinkNames;
  #subgraphSchemas?: Map<string, GraphQLSchema>;

  /** `names`: the join directives' names as the supergraph's `@link`s spell them (default: read from `document`). */
  constructor(document: DocumentNode, names: LinkNames = readLinkNames(document)) {
    this.#document = document;
    this.#names = names;
    for (const definition of document.definitions) {
      if (definition.kind === Kind.ENUM_TYPE_DEFINITION && definition.name.value === names.joinGraphEnum) {
        for (const value of definition.values ?? []) {
          const name = stringArgument(value.directives?.find((d) => d.name.value === names.joinGraph), 'name');
          this.subgraphName.set(value.name.value, name ?? value.name.value);
        }
        continue;
      }
      if (isTypeDefinitionNode(definition) || isTypeExtensionNode(definition)) {
        for (const directive of definition.directives ?? []) {
          const graph = directive.name.value === names.joinType ? enumArgument(directive, 'graph') : undefined;
          if (!graph) continue;
          const graphs = this.#typeGraphs.get(definition.name.value) ?? [];
          if (!graphs.includes(graph)) graphs.push(graph);
          this.#typeGraphs.set(definition.name.value, graphs);
        }
      }
      if (
        definition.kind !== Kind.OBJECT_TYPE_DEFINITION &&
        definition.kind !== Kind.INTERFACE_TYPE_DEFINITION &&
        definition.kind !== Kind.UNION_TYPE_DEFINITION
      )
        continue;
      const model: TypeModel = { graphs: new Map(), fields: new Map(), unowned: new Set() };
      for (const directive of definition.directives ?? []) {
        const graph = enumArgument(directive, 'graph');
        if (directive.name.value === names.joinType && graph) {
          const entry = model.graphs.get(graph) ?? { keys: [], keyFields: new Set<string>(), interfaceObject: false };
          const key = stringArgument(directive, 'key');
          if (key) {
            if (booleanArgument(directive, 'resolvable') !== false) entry.keys.push(key);
            for (const field of this.fieldSet(key).keys()) entry.keyFields.add(field);
          }
          if (booleanArgument(directive, 'isInterfaceObject') === true) entry.interfaceObject = true;
          model.graphs.set(graph, entry);
        }
      }
      // Which types each subgraph has at an abstract position comes from its own schema (subgraph-schemas.ts).
      if (definition.kind !== Kind.UNION_TYPE_DEFINITION) {
        for (const field of definition.fields ?? []) {
          const joins = new Map<string, JoinField>();
          for (const directive of field.directives ?? []) {
            if (directive.name.value !== names.joinField) continue;
            const graph = enumArgument(directive, 'graph');
            if (!graph) {
              model.unowned.add(field.name.value);
              continue;
            }
            const overrideLabel = stringArgument(directive, 'overrideLabel');
            if (overrideLabel) this.overrideLabels.add(overrideLabel);
            joins.set(graph, {
              external: booleanArgument(directive, 'external') === true,
              requires: stringArgument(directive, 'requires'),
              provides: stringArgument(directive, 'provides'),
              usedOverridden: booleanArgument(directive, 'usedOverridden') === true,
              overrideLabel,
              overrides: stringArgument(directive, 'override') !== undefined,
            });
          }
          if (joins.size > 0) model.fields.set(field.name.value, joins);
        }
      }
      this.#types.set(definition.name.value, model);
    }
  }

  /** Each subgraph's own schema, as the join directives describe it (built on first use). */
  subgraphSchema(graph: string): GraphQLSchema {
    this.#subgraphSchemas ??= extractSubgraphSchemas(this.#document, this.#names);
    const schema = this.#subgraphSchemas.get(graph);
    if (!schema) throw new PlanUnsupported(`no subgraph ${graph} in the supergraph`);
    return schema;
  }

  /** Subgraphs that define the type (any kind of `@join__type`). */
  graphsOf(typeName: string): Iterable<string> {
    return this.#types.get(typeName)?.graphs.keys() ?? [];
  }

  /** Whether `graph` models the interface as an object type (`@interfaceObject`): it answers `__typename` with the interface's name. */
  isInterfaceObject(typeName: string, graph: string): boolean {
    return this.#types.get(typeName)?.graphs.get(graph)?.interfaceObject ?? false;
  }

  /**
   * Whether `graph` resolves `typeName.fieldName` by itself: the type is in the graph and the field
   * is not external there, not overridden away, or is one of its key fields. A key field marked
   * `@external` in a Federation 2 type is external like any other (a Fed 1 `extend type`'s key
   * fields come without the mark): that subgraph cannot return it, so it cannot make
   * representations of the type either, and what it answers there is not the entity's value.
   */
  canResolve(typeName: string, fieldName: string, graph: string, labels: ReadonlySet<string> = NO_LABELS): boolean {
    const model = this.#types.get(typeName);
    const inGraph = model?.graphs.get(graph);
    if (!model || !inGraph) return false;
    if (inGraph.keyFields.has(fieldName)) return model.fields.get(fieldName)?.get(graph)?.external !== true;
    // A field of an interface that an `@interfaceObject` adds: no subgraph serves it on the object type itself.
    if (model.unowned.has(fieldName)) return false;
    const joins = model.fields.get(fieldName);
    if (!joins) return true;
    const entry = joins.get(graph);
    if (entry?.overrideLabel !== undefined) return !entry.external && entry.overrides === labels.has(entry.overrideLabel);
    return entry !== undefined && !entry.external && !entry.usedOverridden;
  }

  /** The subgraphs that resolve the field by themselves, in supergraph order. */
  resolversOf(typeName: string, fieldName: string, labels: ReadonlySet<string> = NO_LABELS): string[] {
    return [...this.graphsOf(typeName)].filter((graph) => this.canResolve(typeName, fieldName, graph, labels));
  }

  /** The graphs that define a type of any kind (`@join__type`), in supergraph order (what cost charges a type to). */
  typeGraphs(typeName: string): readonly string[] {
    return this.#typeGraphs.get(typeName) ?? [];
  }

  /**
   * The graphs whose `@join__field` resolves the field: not `external`, not `usedOverridden`; both
   * sides of a progressive override count. Empty when the field has no such entry (then every graph
   * of its type does, see `typeGraphs`).
   */
  fieldGraphs(typeName: string, fieldName: string): readonly string[] {
    const joins = this.#types.get(typeName)?.fields.get(fieldName);
    if (!joins) return [];
    return [...joins].filter(([, join]) => !join.external && !join.usedOverridden).map(([graph]) => graph);
  }

  /** Keys by which `graph` resolves the entity through `_entities` (none for a value type). */
  keysIn(typeName: string, graph: string): readonly string[] {
    return this.#types.get(typeName)?.graphs.get(graph)?.keys ?? [];
  }

  requiresOf(typeName: string, fieldName: string, graph: string): string | undefined {
    return this.#types.get(typeName)?.fields.get(fieldName)?.get(graph)?.requires;
  }

  providesOf(typeName: string, fieldName: string, graph: string): string | undefined {
    return this.#types.get(typeName)?.fields.get(fieldName)?.get(graph)?.provides;
  }

  /** A field set string parsed as a selection set (memoised: the same few strings come up for every plan). */
  fieldSetSelection(fields: string): SelectionSetNode {
    let selection = this.#fieldSets.get(fields);
    if (!selection) {
      const document = parse(`{ ${fields} }`, { noLocation: true });
      const operation = document.definitions[0];
      if (operation.kind !== Kind.OPERATION_DEFINITION) throw new PlanUnsupported(`cannot read the field set "${fields}"`);
      selection = operation.selectionSet;
      this.#fieldSets.set(fields, selection);
    }
    return selection;
  }

  /** A field set as a tree of field names; inline fragments count as their fields. */
  fieldSet(fields: string): FieldSetTree {
    return treeOf(this.fieldSetSelection(fields), false);
  }

  /** A `@provides` field set: what an inline fragment provides is kept under its type condition (PROVIDED_ON). */
  providedSet(fields: string): FieldSetTree {
    return treeOf(this.fieldSetSelection(fields), true);
  }
}

function treeOf(selectionSet: SelectionSetNode, conditions: boolean): FieldSetTree {
  const tree: FieldSetTree = new Map();
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      const sub = selection.selectionSet ? treeOf(selection.selectionSet, conditions) : new Map();
      const existing = tree.get(selection.name.value);
      if (existing) for (const [k, v] of sub) existing.set(k, v);
      else tree.set(selection.name.value, sub);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      if (conditions && selection.typeCondition) {
        const key = PROVIDED_ON + selection.typeCondition.name.value;
        const sub = treeOf(selection.selectionSet, conditions);
        const existing = tree.get(key);
        if (existing) for (const [k, v] of sub) existing.set(k, v);
        else tree.set(key, sub);
        continue;
      }
      // A type condition needs the object's type name beside its fields (required fields of abstract type).
      if (selection.typeCondition) tree.set('__typename', new Map());
      for (const [k, v] of treeOf(selection.selectionSet, conditions)) tree.set(k, v);
    }
  }
  return tree;
}
