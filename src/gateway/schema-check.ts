// The schema check behind `subgraph check` and `subgraph publish`: compose a candidate, diff the API schema, and find the operations in use that it would break.
import { buildSchema, getNamedType, GraphQLInputObjectType, isEnumType, isInputObjectType, parse, typeFromAST, validate, type DocumentNode, type GraphQLNamedType, type GraphQLSchema } from 'graphql';
import { CriticalityLevel, diff } from '@graphql-inspector/core';
import { composeSupergraph, type CompositionIssue, type SubgraphDefinition } from './compose.js';

export type ChangeLevel = 'breaking' | 'dangerous' | 'safe';

/** One difference between the served API schema and the candidate's, as @graphql-inspector/core reports it. */
export interface SchemaChange {
  level: ChangeLevel;
  /** The inspector's change type, e.g. FIELD_REMOVED, ENUM_VALUE_REMOVED, FIELD_ARGUMENT_ADDED. */
  type: string;
  message: string;
  /** The schema coordinate changed (`Review.body`, `Query.reviews.sort`), when there is one. */
  path: string | null;
}

/** An operation from the registry, as the check needs it. */
export interface CheckedOperation {
  hash: string;
  normalised: string;
  operationName: string | null;
  clientName: string;
  clientVersion: string;
  lastSeen: Date;
  count: number;
  /** Set for a trusted document (from a published manifest) rather than recorded traffic: its id. */
  trustedDocumentId?: string;
}

export interface OperationProblem {
  message: string;
  /** Where in the (normalised) document: 1-based line and column. */
  locations: { line: number; column: number }[];
}

export interface BrokenOperation {
  operation: CheckedOperation;
  problems: OperationProblem[];
}

export type SchemaCheckResult =
  | { composed: false; errors: CompositionIssue[] }
  | {
      composed: true;
      /** The candidate set's supergraph, ready to publish. */
      supergraphSdl: string;
      /** Empty when nothing was served before (no registered subgraphs, or a set that did not compose). */
      changes: SchemaChange[];
      operationsChecked: number;
      broken: BrokenOperation[];
      /** Operations that do not validate against the graph served now either: not this change's doing, so not counted as broken. */
      alreadyInvalid: number;
    };

export interface SchemaCheckInput {
  /** The registered subgraphs, as stored now. */
  current: readonly SubgraphDefinition[];
  /** The candidate: replaces the subgraph of the same name, or joins the set. */
  candidate: SubgraphDefinition;
  /** The operations in use (seen in the window). */
  operations: readonly CheckedOperation[];
}

const LEVELS: Record<string, ChangeLevel> = {
  [CriticalityLevel.Breaking]: 'breaking',
  [CriticalityLevel.Dangerous]: 'dangerous',
  [CriticalityLevel.NonBreaking]: 'safe',
};

/**
 * 1. Compose the candidate with the other registered subgraphs; composition errors end the check.
 * 2. Diff the old API schema (the current set's, when it composes) with the new one.
 * 3. Each operation is broken when (a) it no longer validates against the new API schema (a removed
 *    field, an enum value it writes inline, a new required argument...), with graphql-js's errors and
 *    their locations; or (b) a variable it declares reaches, in the old schema, an input type or enum
 *    that a breaking change touches (a nullable input field made non-null, a removed enum value): the
 *    document still validates, but the values clients send in variables would be refused.
 * A breaking change no operation uses (a field nobody queried in the window) breaks nothing, and an
 * operation the served graph already refuses is counted apart: only what this change breaks refuses it.
 */
export async function checkSchemaChange(input: SchemaCheckInput): Promise<SchemaCheckResult> {
  const next = [...input.current.filter((s) => s.name !== input.candidate.name), input.candidate];
  const composed = composeSupergraph(next);
  if (!composed.ok) return { composed: false, errors: composed.errors };
  const newSchema = buildSchema(composed.publicSdl, { assumeValidSDL: true });
  const before = input.current.length > 0 ? composeSupergraph(input.current) : undefined;
  const oldSchema = before?.ok ? buildSchema(before.publicSdl, { assumeValidSDL: true }) : undefined;
  const changes: SchemaChange[] = oldSchema
    ? (await diff(oldSchema, newSchema)).map((change) => ({
        level: LEVELS[change.criticality.level] ?? 'dangerous',
        type: String(change.type),
        message: change.message,
        path: change.path ?? null,
      }))
    : [];
  // Input types and enums a breaking change touches, by name: what variables can carry into trouble.
  const touchedInputs = new Map<string, SchemaChange[]>();
  if (oldSchema) {
    for (const change of changes) {
      if (change.level !== 'breaking' || !change.path) continue;
      const type = oldSchema.getType(change.path.split('.')[0]);
      if (type && (isInputObjectType(type) || isEnumType(type))) touchedInputs.set(type.name, [...(touchedInputs.get(type.name) ?? []), change]);
    }
  }
  const broken: BrokenOperation[] = [];
  let alreadyInvalid = 0;
  for (const operation of input.operations) {
    // An operation the served graph already refuses (after a forced publish, say) is not broken by this change.
    if (oldSchema && !validatesAgainst(operation.normalised, oldSchema)) {
      alreadyInvalid += 1;
      continue;
    }
    const problems = operationProblems(operation.normalised, newSchema, oldSchema, touchedInputs);
    if (problems.length > 0) broken.push({ operation, problems });
  }
  return { composed: true, supergraphSdl: composed.supergraphSdl, changes, operationsChecked: input.operations.length, broken, alreadyInvalid };
}

function validatesAgainst(text: string, schema: GraphQLSchema): boolean {
  try {
    return validate(schema, parse(text)).length === 0;
  } catch {
    return false;
  }
}

function operationProblems(text: string, newSchema: GraphQLSchema, oldSchema: GraphQLSchema | undefined, touchedInputs: Map<string, SchemaChange[]>): OperationProblem[] {
  let document: DocumentNode;
  try {
    document = parse(text);
  } catch (error) {
    return [{ message: `the recorded document does not parse: ${(error as Error).message}`, locations: [] }];
  }
  const problems: OperationProblem[] = validate(newSchema, document).map((error) => ({
    message: error.message,
    locations: (error.locations ?? []).map(({ line, column }) => ({ line, column })),
  }));
  if (!oldSchema || touchedInputs.size === 0) return problems;
  for (const definition of document.definitions) {
    if (definition.kind !== 'OperationDefinition') continue;
    for (const variable of definition.variableDefinitions ?? []) {
      const type = typeFromAST(oldSchema, variable.type as never);
      if (!type) continue;
      for (const name of reachableInputs(getNamedType(type))) {
        for (const change of touchedInputs.get(name) ?? []) {
          const location = variable.loc ? locationOf(text, variable.loc.start) : undefined;
          problems.push({ message: `Variable "$${variable.variable.name.value}" carries ${name}: ${change.message}`, locations: location ? [location] : [] });
        }
      }
    }
  }
  return problems;
}

/** The input object types and enums a variable of this type can carry, itself included. */
function reachableInputs(root: GraphQLNamedType): Set<string> {
  const seen = new Set<string>();
  const stack: GraphQLNamedType[] = [root];
  while (stack.length > 0) {
    const type = stack.pop()!;
    if (seen.has(type.name)) continue;
    seen.add(type.name);
    if (type instanceof GraphQLInputObjectType) for (const field of Object.values(type.getFields())) stack.push(getNamedType(field.type));
  }
  return seen;
}

function locationOf(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset).split('\n');
  return { line: before.length, column: before[before.length - 1].length + 1 };
}
