// What a subgraph request asks for at its root (fields, entity representations), and results shaped like it.
import { Kind, type DocumentNode, type OperationDefinitionNode, type ExecutionResult, type GraphQLError } from 'graphql';
import type { ExecutionRequest } from '@graphql-tools/utils';

interface RootField {
  /** Key in the response data (alias or name). */
  responseKey: string;
  /** For `_entities(representations: $var)`: the variable holding the representations. */
  representationsVariable?: string;
}

const shapes = new WeakMap<DocumentNode, RootField[]>();

/** The root fields of a subgraph request's operation; computed once per document object. */
function rootFieldsOf(document: DocumentNode): RootField[] {
  let fields = shapes.get(document);
  if (!fields) {
    const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
    fields = [];
    for (const selection of operation?.selectionSet.selections ?? []) {
      if (selection.kind !== Kind.FIELD) continue;
      const representations = selection.name.value === '_entities' ? selection.arguments?.find((a) => a.name.value === 'representations') : undefined;
      fields.push({
        responseKey: selection.alias?.value ?? selection.name.value,
        representationsVariable: representations?.value.kind === Kind.VARIABLE ? representations.value.name.value : undefined,
      });
    }
    shapes.set(document, fields);
  }
  return fields;
}

/** The representations an `_entities` root field asks for, or undefined for any other field. */
function representationsOf(field: RootField, variables: Record<string, unknown> | undefined): unknown[] | undefined {
  if (!field.representationsVariable) return undefined;
  const value = variables?.[field.representationsVariable];
  return Array.isArray(value) ? value : [];
}

/**
 * The result of a failed call, shaped like the request: every root field is null and gets its own
 * error, and an `_entities` field gets a null and an error per representation (path `[field, i]`).
 * The stitching layer then puts each error on the client field whose entity it was, instead of
 * one error for the whole batch.
 */
export function failureResult(request: ExecutionRequest, makeError: (path: (string | number)[]) => GraphQLError): ExecutionResult {
  const data: Record<string, unknown> = {};
  const errors: GraphQLError[] = [];
  for (const field of rootFieldsOf(request.document)) {
    const representations = representationsOf(field, request.variables);
    if (representations) {
      data[field.responseKey] = representations.map(() => null);
      representations.forEach((_, index) => errors.push(makeError([field.responseKey, index])));
    } else {
      data[field.responseKey] = null;
      errors.push(makeError([field.responseKey]));
    }
  }
  if (errors.length === 0) errors.push(makeError([]));
  return { data, errors };
}
