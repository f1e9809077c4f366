// A deferred query over HTTP: its payloads read from the multipart body (deferSpec=20220824) and merged into the one answer they stand for.
import {
  getNamedType,
  getNullableType,
  isListType,
  isNonNullType,
  isObjectType,
  isInterfaceType,
  Kind,
  parse,
  SchemaMetaFieldDef,
  TypeMetaFieldDef,
  TypeNameMetaFieldDef,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';
import { meros } from 'meros/browser';

/** What a client that reads Apollo's incremental format sends (and plain JSON for an answer that is not streamed). */
export const DEFER_ACCEPT = 'multipart/mixed;deferSpec=20220824, application/json';

type Path = readonly (string | number)[];

export interface PayloadError {
  message?: string;
  path?: Path;
  extensions?: Record<string, unknown>;
}

/** One payload of the stream: the initial one (`data`, `errors`) or a later one (`incremental`), each with `hasNext`. */
export interface Payload {
  data?: unknown;
  errors?: PayloadError[];
  incremental?: { data?: unknown; items?: unknown; path: Path; label?: string; errors?: PayloadError[] }[];
  hasNext?: boolean;
  extensions?: Record<string, unknown>;
}

export interface DeferredResponse {
  status: number;
  contentType: string;
  /** Whether the body was multipart (a stream of payloads) rather than one JSON answer. */
  streamed: boolean;
  payloads: Payload[];
}

export interface PostDeferredOptions {
  variables?: Record<string, unknown>;
  operationName?: string;
  headers?: Record<string, string>;
  /** Default `DEFER_ACCEPT`. */
  accept?: string;
}

/**
 * Posts a query and reads every payload. A multipart body is split by meros (the multipart reader Apollo's and The
 * Guild's HTTP executors use), each part parsed as JSON; any other body is one answer (a refusal, or a query whose
 * `@defer`s are all off).
 */
export async function postDeferred(url: string, query: string, options: PostDeferredOptions = {}): Promise<DeferredResponse> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: options.accept ?? DEFER_ACCEPT, ...options.headers },
    body: JSON.stringify({ query, variables: options.variables, operationName: options.operationName }),
  });
  const contentType = response.headers.get('content-type') ?? '';
  const parts = await meros<Payload>(response);
  if (parts instanceof Response) {
    const text = await parts.text();
    try {
      return { status: response.status, contentType, streamed: false, payloads: [JSON.parse(text)] };
    } catch {
      throw new Error(`not JSON (HTTP ${response.status}, ${contentType}): ${text.slice(0, 200)}`);
    }
  }
  const payloads: Payload[] = [];
  for await (const part of parts) {
    if (!part.json) throw new Error(`a part that is not JSON (${part.headers['content-type'] ?? 'no content-type'}): ${String(part.body).slice(0, 200)}`);
    payloads.push(part.body);
  }
  return { status: response.status, contentType, streamed: true, payloads };
}

export interface MergedAnswer {
  data: unknown;
  errors: PayloadError[];
  /** Where the payloads break the format (hasNext, a part with nowhere to go, `@stream` items): each one a test failure. */
  problems: string[];
}

export interface MergeOptions {
  /**
   * Whether the value at a response path may be null (`responseNullability`). Needed when a part failed (its `data` is
   * null): the answer without `@defer` nulls the nearest nullable position at or above the part's place, so the merge
   * does too. Without it, such a part is a problem.
   */
  nullableAt?: (path: Path) => boolean;
}

/**
 * The one answer a stream of payloads stands for.
 * 1. The initial payload's `data` and `errors` are the start.
 * 2. Each later payload's `incremental[]` entries are taken in order: `data` is merged deep into the object at `path`
 *    (objects by key, lists by index, anything else replaced); `errors` are appended.
 * 3. An entry with `data: null` is a part one of whose non-null fields failed: the RFC stops the null at the part's
 *    boundary (the rest of the answer stands), where the answer without `@defer` bubbles it on to the nearest nullable
 *    position (spec 6.4.4, "Handling Field Errors"). The merge bubbles it likewise, from the part's own place upwards:
 *    the first nullable position is nulled, or `data` when there is none.
 * 4. An entry whose place is null or absent (a part under a position nulled since) adds its errors only.
 * 5. `hasNext` must be true on every payload but the last, and false there.
 */
export function mergePayloads(payloads: readonly Payload[], options: MergeOptions = {}): MergedAnswer {
  const problems: string[] = [];
  if (payloads.length === 0) return { data: undefined, errors: [], problems: ['no payload'] };
  const [initial, ...later] = payloads;
  const answer: { data: unknown } = { data: clone(initial.data) };
  const errors: PayloadError[] = [...(initial.errors ?? [])];
  if (initial.incremental) problems.push('the initial payload has incremental entries');
  payloads.forEach((payload, index) => {
    const last = index === payloads.length - 1;
    if (payloads.length === 1 && payload.hasNext === undefined) return;
    if (payload.hasNext !== !last) problems.push(`payload ${index} of ${payloads.length} has hasNext: ${String(payload.hasNext)}`);
  });
  for (const [index, payload] of later.entries()) {
    if (payload.data !== undefined || payload.errors) problems.push(`later payload ${index + 1} has data or errors outside incremental`);
    for (const entry of payload.incremental ?? []) {
      errors.push(...(entry.errors ?? []));
      if (entry.items !== undefined) {
        problems.push(`@stream items at ${entry.path.join('.')}: not merged`);
        continue;
      }
      if (entry.data === null) {
        if (!options.nullableAt) problems.push(`the part at ${entry.path.join('.') || '(root)'} failed and no nullability was given to bubble its null`);
        else bubbleNull(answer, entry.path, options.nullableAt);
        continue;
      }
      const target = valueAt(answer.data, entry.path);
      if (target === null || target === undefined) continue;
      if (typeof target !== 'object' || Array.isArray(target)) {
        problems.push(`the part at ${entry.path.join('.') || '(root)'} lands on ${JSON.stringify(target)}, not an object`);
        continue;
      }
      mergeInto(target as Record<string, unknown>, entry.data);
    }
  }
  return { data: answer.data, errors, problems };
}

/** 2. Merges `source` into `target`: objects by key, lists by index; leaves replace. */
function mergeInto(target: Record<string, unknown> | unknown[], source: unknown): void {
  for (const [key, value] of Object.entries(source as object)) {
    const current = (target as Record<string, unknown>)[key];
    const bothLists = Array.isArray(current) && Array.isArray(value);
    const bothObjects = isObject(current) && isObject(value);
    if (bothLists || bothObjects) mergeInto(current as Record<string, unknown>, value);
    else (target as Record<string, unknown>)[key] = clone(value);
  }
}

/** 3. Nulls the nearest nullable position at or above `path` (or the whole `data`). */
function bubbleNull(answer: { data: unknown }, path: Path, nullableAt: (path: Path) => boolean): void {
  for (let length = path.length; length > 0; length--) {
    const at = path.slice(0, length);
    if (!nullableAt(at)) continue;
    const parent = valueAt(answer.data, at.slice(0, -1));
    if (parent !== null && typeof parent === 'object') (parent as Record<string | number, unknown>)[at[length - 1]] = null;
    return;
  }
  answer.data = null;
}

function valueAt(data: unknown, path: Path): unknown {
  let value = data;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string | number, unknown>)[key];
  }
  return value;
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
const clone = <T>(value: T): T => (value === undefined ? value : structuredClone(value));

/**
 * Whether the value at each response path of an operation may be null, from the schema and the document: the response
 * keys are followed through fields, inline fragments and spreads (whatever their type conditions), list indexes
 * through list types. The overlap rule (spec 5.3.2, SameResponseShape) gives every field under one response key the
 * same nullability, so the first one found answers. A path the document does not select is nullable.
 */
export function responseNullability(schema: GraphQLSchema, query: string | DocumentNode, operationName?: string): (path: Path) => boolean {
  const document = typeof query === 'string' ? parse(query) : query;
  const operations = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
  const operation = operationName ? operations.find((o) => o.name?.value === operationName) : operations[0];
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const root = operation && schema.getRootType(operation.operation);

  return function nullableAt(path) {
    if (!operation || !root) return true;
    let sets: { set: SelectionSetNode; parent: GraphQLNamedType }[] = [{ set: operation.selectionSet, parent: root }];
    let type: GraphQLOutputType | undefined;
    for (const key of path) {
      if (typeof key === 'number') {
        const list = type && getNullableType(type);
        if (!list || !isListType(list)) return true;
        type = list.ofType;
        continue;
      }
      const found: { field: GraphQLField<unknown, unknown>; set?: SelectionSetNode }[] = [];
      const collect = (set: SelectionSetNode, parent: GraphQLNamedType, seen: Set<string>) => {
        for (const selection of set.selections) {
          if (selection.kind === Kind.FIELD) {
            if ((selection.alias ?? selection.name).value !== key) continue;
            const field = fieldOf(schema, parent, selection.name.value);
            if (field) found.push({ field, set: selection.selectionSet });
          } else if (selection.kind === Kind.INLINE_FRAGMENT) {
            collect(selection.selectionSet, (selection.typeCondition && schema.getType(selection.typeCondition.name.value)) || parent, seen);
          } else if (!seen.has(selection.name.value)) {
            const fragment = fragments.get(selection.name.value);
            const on = fragment && schema.getType(fragment.typeCondition.name.value);
            if (fragment && on) collect(fragment.selectionSet, on, new Set(seen).add(selection.name.value));
          }
        }
      };
      for (const { set, parent } of sets) collect(set, parent, new Set());
      if (found.length === 0) return true;
      type = found[0].field.type;
      sets = found.flatMap(({ field, set }) => (set ? [{ set, parent: getNamedType(field.type) }] : []));
    }
    return type === undefined || !isNonNullType(type);
  };
}

function fieldOf(schema: GraphQLSchema, parent: GraphQLNamedType, name: string): GraphQLField<unknown, unknown> | undefined {
  if (name === TypeNameMetaFieldDef.name) return TypeNameMetaFieldDef;
  if (parent === schema.getQueryType()) {
    if (name === SchemaMetaFieldDef.name) return SchemaMetaFieldDef;
    if (name === TypeMetaFieldDef.name) return TypeMetaFieldDef;
  }
  return isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[name] : undefined;
}
