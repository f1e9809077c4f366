// Rule 10 of build-plan.ts: the response keys of a plan's fields (the client's as written, the plan's own where they take no other field's) and the representations read from them.
import { Kind, getNamedType, isAbstractType, isCompositeType, print, type ArgumentNode, type GraphQLObjectType, type GraphQLSchema, type SelectionSetNode } from 'graphql';
import type { OperationAnalysis } from '../../request/operation-analysis.js';
import { collectFields } from './collect-fields.js';
import type { Position, RepresentationDraft } from './plan-types.js';
import { TYPENAME } from './selection-tree.js';
import { PlanUnsupported, type SupergraphModel } from './supergraph-model.js';

/** The response keys of one plan: the client's fields at each path, and the keys the plan gave its own. Lives for one planning. */
export class ResponseKeys {
  /** The client's fields at each path, by response key: the `fieldSignature` of each field there (of any type's objects). */
  readonly #clientKeys = new Map<string, Map<string, Set<string>>>();
  /** The plan's own fields (keys, required fields) at each path: the response key of each field signature. */
  readonly #planKeys = new Map<string, Map<string, string>>();

  constructor(
    readonly model: SupergraphModel,
    readonly schema: GraphQLSchema,
    /** The client operation's analysis: its fragments and memoised CollectFields. */
    readonly analysis: OperationAnalysis,
  ) {}

  /**
   * 10. The response key a field is fetched under. The client's fields keep theirs. The plan's own
   *     fields (keys, required fields) go under their names, unless the client (any selection at the
   *     same path, of any type's objects: they may be merged into one object) or another field of the
   *     plan puts something else there: another field (`id: name`), or the same field with other
   *     arguments (`price(currency: "EUR")` beside a required `price(currency: "USD")`). Then the
   *     field takes a private key (`__sy_price`, `__sy_price_2`, ...), one per field and arguments
   *     at that path; representations read it there and carry it under its name. (Whose field it
   *     is, the client's or the plan's, is the position's `need`.)
   */
  responseKey(where: Position, key: string, name: string, args: readonly ArgumentNode[]): string {
    if (!where.need) return key;
    const at = pathKey(where.path);
    let planned = this.#planKeys.get(at);
    if (!planned) this.#planKeys.set(at, (planned = new Map()));
    const signature = fieldSignature(name, args);
    const known = planned.get(signature);
    if (known !== undefined) return known;
    const client = this.#clientKeys.get(at);
    const free = (candidate: string): boolean => {
      const held = client?.get(candidate);
      if (held && (held.size > 1 || !held.has(signature))) return false;
      for (const taken of planned.values()) if (taken === candidate) return false;
      return true;
    };
    let chosen = name;
    for (let n = 1; !free(chosen); n++) chosen = n === 1 ? `__sy_${name}` : `__sy_${name}_${n}`;
    planned.set(signature, chosen);
    return chosen;
  }

  /**
   * 10. Records the response keys of the client's fields at every path before anything is planned,
   *     so the plan's own fields never take one, whichever is planned first. Level by level: at each
   *     path, the selection sets of every object type that can be there are collected once.
   */
  recordClientKeys(rootType: GraphQLObjectType, selectionSet: SelectionSetNode): void {
    let level = new Map<string, { path: readonly string[]; types: Map<GraphQLObjectType, Set<SelectionSetNode>> }>([['', { path: [], types: new Map([[rootType, new Set([selectionSet])]]) }]]);
    while (level.size > 0) {
      const next: typeof level = new Map();
      for (const [at, { path, types }] of level) {
        let keys = this.#clientKeys.get(at);
        if (!keys) this.#clientKeys.set(at, (keys = new Map()));
        for (const [type, sets] of types) {
          for (const [key, nodes] of collectFields(this.schema, this.analysis, type, [...sets])) {
            let signatures = keys.get(key);
            if (!signatures) keys.set(key, (signatures = new Set()));
            for (const node of nodes) signatures.add(fieldSignature(node.name.value, node.arguments ?? []));
            const field = type.getFields()[nodes[0].name.value];
            const named = field && getNamedType(field.type);
            if (!named || !isCompositeType(named)) continue;
            const childPath = [...path, key];
            const childAt = pathKey(childPath);
            let child = next.get(childAt);
            if (!child) next.set(childAt, (child = { path: childPath, types: new Map() }));
            for (const possible of isAbstractType(named) ? this.schema.getPossibleTypes(named) : [named as GraphQLObjectType]) {
              let childSets = child.types.get(possible);
              if (!childSets) child.types.set(possible, (childSets = new Set()));
              for (const node of nodes) if (node.selectionSet) childSets.add(node.selectionSet);
            }
          }
        }
      }
      level = next;
    }
  }

  /**
   * 10. The representation of a field set at a path, once its fields are planned: each field under
   *     its name, read from the response key the plan fetched it under (at any depth).
   */
  representationAt(path: readonly string[], fields: string): RepresentationDraft {
    return this.#representation(this.model.fieldSetSelection(fields), path, new Map());
  }

  #representation(selectionSet: SelectionSetNode, path: readonly string[], into: RepresentationDraft): RepresentationDraft {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        // A type condition needs the object's type name beside its fields (required fields of abstract type).
        if (selection.typeCondition && !into.has(TYPENAME)) into.set(TYPENAME, { key: TYPENAME, fields: new Map() });
        this.#representation(selection.selectionSet, path, into);
        continue;
      }
      if (selection.kind !== Kind.FIELD) continue;
      const name = selection.name.value;
      const key = name === TYPENAME ? TYPENAME : this.#planKeys.get(pathKey(path))?.get(fieldSignature(name, selection.arguments ?? []));
      if (key === undefined) throw new PlanUnsupported(`the field ${name} of a representation was not planned`);
      let field = into.get(name);
      if (!field) into.set(name, (field = { key, fields: new Map() }));
      else if (field.key !== key) throw new PlanUnsupported(`a field set asks ${name} twice with different arguments`);
      if (selection.selectionSet) this.#representation(selection.selectionSet, [...path, key], field.fields);
    }
    return into;
  }
}

/** A path of objects in the answer, as one string: the response keys to it. */
export function pathKey(path: readonly string[]): string {
  return path.join('\u0000');
}

/** A field with its arguments, as written (`price(currency:"USD")`): two fields can share a response key only with the same signature. */
function fieldSignature(name: string, args: readonly ArgumentNode[]): string {
  return args.length === 0 ? name : `${name}(${args.map((a) => `${a.name.value}:${print(a.value)}`).join(',')})`;
}
