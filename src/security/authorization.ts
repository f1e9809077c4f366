// Authorization decisions: table rules (principal → coordinate) and @authenticated / @requiresScopes, once per document and principal set.
import { defaultFieldResolver, getNamedType, isAbstractType, isObjectType, type DocumentNode, type GraphQLSchema } from 'graphql';
import { BoundedMap } from '../cache/bounded-map.js';
import { INTROSPECTION, type PermissionBook } from '../registry/permission-store.js';
import { analyseOperation, type OperationAnalysis } from '../request/operation-analysis.js';
import { requestStateOf } from '../request/request-state.js';
import type { Principal } from './authentication/principal.js';
import { delegationInfo, pruneDenied } from './prune-denied.js';

/** What a field or type demands of the caller, from the subgraphs' SDL (read by src/gateway/supergraph/authorization-facts.ts). */
export interface Requirement {
  authenticated: boolean;
  /** `@requiresScopes(scopes: [["a", "b"], ["c"]])`: any one group, every scope of it. */
  scopes?: readonly (readonly string[])[];
}

/** The principals a caller counts as: `sub:`, `scope:`, `client:`, `role:`, and `authenticated`; or only `anonymous`. */
export function principalsOf(principal: Principal | undefined): ReadonlySet<string> {
  if (!principal) return new Set(['anonymous']);
  const set = new Set<string>(['authenticated', `sub:${principal.subject}`]);
  for (const scope of principal.scopes) set.add(`scope:${scope}`);
  if (principal.clientId) set.add(`client:${principal.clientId}`);
  for (const role of principal.roles ?? []) set.add(`role:${role}`);
  return set;
}

function meets(requirement: Requirement | undefined, principals: ReadonlySet<string>): boolean {
  if (!requirement) return true;
  if (requirement.authenticated && !principals.has('authenticated')) return false;
  if (requirement.scopes && requirement.scopes.length > 0) return requirement.scopes.some((group) => group.every((scope) => principals.has(`scope:${scope}`)));
  return true;
}

interface FieldUse {
  coordinate: string;
  returnType: string;
  root: boolean;
}

import type { Decision } from '../request/decision.js';

export type { Decision };

const ALLOWED: Decision = { denied: new Set(), refused: false };

/**
 * Decisions kept per document and schema (least recently used dropped first): one per rule version,
 * operation and decisive principal set, so a document usually holds a handful; the bound only stops
 * a caller cycling through scope sets from growing one document's memo without end.
 */
const DECISIONS_PER_DOCUMENT = 256;

export interface AuthorizerOptions {
  book: PermissionBook;
  /** Root fields without any rule: allowed (`open`) or denied (`closed`). Nested fields without rules are always allowed. */
  defaultPolicy: 'open' | 'closed';
}

/**
 * 1. The fields an operation reads (their coordinates, return types, whether at the root) are listed
 *    once per document, operation and schema, from the operation's analysis (decision 015): only the
 *    operation that runs and the fragments it reaches, since the document's other operations do not
 *    execute; a field selected on an interface counts as read on each of its object types too.
 * 2. A decision is computed once per schema, document, operation, rule version and decisive
 *    principal set (a principal no rule names and that is no scope cannot change it), and memoised
 *    (DECISIONS_PER_DOCUMENT at most). The schema is part of the key because a swap can change the
 *    SDL's requirements while clients keep sending the same (cached) document.
 * 3. A coordinate with table rules needs one of their principals; one without follows the default
 *    (`closed` applies to root fields: entry points must be granted). `@authenticated` and
 *    `@requiresScopes` on the field, or on the type it returns, must hold as well.
 * 4. `operation:Name` rules guard a whole operation.
 * 5. A decision that denies fields without refusing the request carries the operation with those
 *    fields pruned (see prune-denied.ts), computed with it and memoised with it: no subgraph is asked
 *    for them, and a request pays for pruning only the first time its document meets its principals.
 * 6. The `introspection` rule says who may introspect in production (`mayIntrospect`, asked by
 *    use-introspection-permission, decision 036): it names no field, so no decision reads it.
 */
export class Authorizer {
  readonly #book: PermissionBook;
  readonly #defaultPolicy: 'open' | 'closed';
  readonly #uses = new WeakMap<GraphQLSchema, WeakMap<OperationAnalysis, FieldUse[]>>();
  readonly #decisions = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, BoundedMap<string, Decision>>>();

  constructor(options: AuthorizerOptions) {
    this.#book = options.book;
    this.#defaultPolicy = options.defaultPolicy;
  }

  #fieldUses(schema: GraphQLSchema, analysis: OperationAnalysis): FieldUse[] {
    let bySchema = this.#uses.get(schema);
    if (!bySchema) this.#uses.set(schema, (bySchema = new WeakMap()));
    let uses = bySchema.get(analysis);
    if (uses) return uses;
    const found = new Map<string, FieldUse>();
    const roots = new Set([schema.getQueryType()?.name, schema.getMutationType()?.name, schema.getSubscriptionType()?.name]);
    for (const { coordinate, parentType: parent, field } of analysis.selectedFields(schema)) {
      if (!found.has(coordinate)) found.set(coordinate, { coordinate, returnType: getNamedType(field.type).name, root: roots.has(parent.name) });
      if (!isAbstractType(parent)) continue;
      // Selected on an interface, the field is read from whichever object type the value turns out
      // to be: each one's rules and requirements apply, or `{ node { secret } }` would bypass a rule
      // on `Product.secret` (the guards sit on object types).
      for (const type of schema.getPossibleTypes(parent)) {
        const own = type.getFields()[field.name];
        const concrete = `${type.name}.${field.name}`;
        if (own && !found.has(concrete)) found.set(concrete, { coordinate: concrete, returnType: getNamedType(own.type).name, root: false });
      }
    }
    uses = [...found.values()];
    bySchema.set(analysis, uses);
    return uses;
  }

  decide(schema: GraphQLSchema, requirements: ReadonlyMap<string, Requirement>, document: DocumentNode, operationName: string | null | undefined, principals: ReadonlySet<string>): Decision {
    const key = `${this.#book.version}|${operationName ?? ''}|${this.#decisiveKey(principals)}`;
    let bySchema = this.#decisions.get(schema);
    if (!bySchema) this.#decisions.set(schema, (bySchema = new WeakMap()));
    let perDocument = bySchema.get(document);
    if (!perDocument) bySchema.set(document, (perDocument = new BoundedMap(DECISIONS_PER_DOCUMENT)));
    const cached = perDocument.get(key);
    if (cached) return cached;
    const decision = this.#decide(schema, requirements, document, operationName, principals);
    perDocument.set(key, decision);
    return decision;
  }

  /**
   * The principals that can change a decision, as a key: those some rule names, every scope (the SDL's
   * `@requiresScopes` reads them), and `authenticated`/`anonymous`. Each user carries their own
   * `sub:`; leaving out the ones no rule names lets every user with the same scopes share a decision
   * instead of computing one per user.
   */
  #decisiveKey(principals: ReadonlySet<string>): string {
    const decisive: string[] = [];
    for (const principal of principals) {
      if (principal.startsWith('scope:') || principal === 'authenticated' || principal === 'anonymous' || this.#book.names(principal)) decisive.push(principal);
    }
    return decisive.sort().join(' ');
  }

  /**
   * Whether one of the caller's principals holds the `introspection` rule (decision 036): read live
   * from the same book as every other rule. No rule at all means nobody: the production default.
   */
  mayIntrospect(principals: ReadonlySet<string>): boolean {
    const rules = this.#book.principalsFor(INTROSPECTION);
    if (rules) for (const principal of rules) if (principals.has(principal)) return true;
    return false;
  }

  #allowed(coordinate: string, principals: ReadonlySet<string>, root: boolean): boolean {
    const rules = this.#book.principalsFor(coordinate);
    if (rules) {
      for (const principal of rules) if (principals.has(principal)) return true;
      return false;
    }
    return !(root && this.#defaultPolicy === 'closed');
  }

  #decide(schema: GraphQLSchema, requirements: ReadonlyMap<string, Requirement>, document: DocumentNode, operationName: string | null | undefined, principals: ReadonlySet<string>): Decision {
    const analysis = analyseOperation(document, operationName);
    const operation = analysis.operation;
    const name = operation?.name?.value;
    if (name && this.#book.principalsFor(`operation:${name}`) && !this.#allowed(`operation:${name}`, principals, false)) return { denied: new Set(), refused: true };
    const denied = new Set<string>();
    let roots = 0;
    let deniedRoots = 0;
    for (const use of this.#fieldUses(schema, analysis)) {
      if (use.root) roots++;
      const ok = this.#allowed(use.coordinate, principals, use.root) && meets(requirements.get(use.coordinate), principals) && meets(requirements.get(use.returnType), principals);
      if (!ok) {
        denied.add(use.coordinate);
        if (use.root) deniedRoots++;
      }
    }
    if (denied.size === 0) return ALLOWED;
    // A rule on an interface field holds for every type implementing it: the guards sit on object types.
    for (const coordinate of [...denied]) {
      const [typeName, fieldName] = coordinate.split('.') as [string, string];
      const type = schema.getType(typeName);
      if (type && isAbstractType(type)) for (const possible of schema.getPossibleTypes(type)) if (possible.getFields()[fieldName]) denied.add(`${possible.name}.${fieldName}`);
    }
    const refused = roots > 0 && deniedRoots === roots;
    if (refused || !operation) return { denied, refused };
    return { denied, refused, pruned: pruneDenied(schema, operation, [...analysis.fragments.values()], denied) };
  }
}

/**
 * Wraps every field resolver of the schema with a guard. Done once per built schema.
 *
 * 1. A request whose decision denies nothing costs two property reads per field: its state, then its
 *    `decision` (set by use-authorization only when it denies something).
 * 2. When the decision denies the field's coordinate, the resolver throws `makeError(coordinate)`
 *    instead of running; graphql-js puts null at the path (at every index of a list) and bubbles it
 *    to the nearest nullable parent.
 * 3. Any other resolver runs with the resolve info of the pruned operation where its field nodes
 *    lead to pruned selections: the stitching layer builds subgraph documents, for root fields and
 *    for entity look-ups alike, from that info, so no subgraph is ever asked for a denied field.
 */
export function installGuards(schema: GraphQLSchema, makeError: (coordinate: string) => Error): void {
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      if (field.name.startsWith('__')) continue;
      const coordinate = `${type.name}.${field.name}`;
      const resolve = field.resolve ?? defaultFieldResolver;
      field.resolve = function guardedResolve(source, args, context, info) {
        const decision = requestStateOf(context).decision;
        if (decision === undefined) return resolve(source, args, context, info);
        if (decision.denied.has(coordinate)) throw makeError(coordinate);
        return resolve(source, args, context, decision.pruned ? delegationInfo(info, decision.pruned) : info);
      };
    }
  }
}
