// What the differential test compares of two answers to one query, and a short description of where they differ.

export interface Answer {
  status: number;
  body: { data?: unknown; errors?: { path?: readonly (string | number)[]; extensions?: Record<string, unknown> }[] };
}

export interface Comparable {
  status: number;
  data: unknown;
  /** Sorted `{path, code}` pairs: messages and locations are each engine's own wording. */
  errors: { path: string; code: string }[];
}

/** The parts of an answer both engines must agree on. */
export function comparable(answer: Answer): Comparable {
  const errors = (answer.body.errors ?? [])
    .map((e) => ({ path: (e.path ?? []).join('.'), code: String(e.extensions?.code ?? '') }))
    .sort((a, b) => (a.path === b.path ? a.code.localeCompare(b.code) : a.path.localeCompare(b.path)));
  return { status: answer.status, data: answer.body.data, errors };
}

/** JSON with object keys sorted: equal answers print equal whatever order the engines wrote the keys in. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v,
  );
}

/** Where `a` and `b` differ, as `path: a-value ≠ b-value` lines (at most `limit`). */
export function differences(a: unknown, b: unknown, path = '', limit = 8, out: string[] = []): string[] {
  if (out.length >= limit) return out;
  const bothObjects = a && b && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b);
  if (!bothObjects) {
    if (canonical(a) !== canonical(b)) out.push(`${path || '(root)'}: ${canonical(a)} ≠ ${canonical(b)}`);
    return out;
  }
  const keys = [...new Set([...Object.keys(a as object), ...Object.keys(b as object)])];
  for (const key of keys) differences((a as any)[key], (b as any)[key], path ? `${path}.${key}` : key, limit, out);
  return out;
}
