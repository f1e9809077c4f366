// Before timing: every variant must answer the sample requests with the same data, or the comparison means nothing.
import { createHash } from 'node:crypto';
import { toLoadRequest } from './requests.js';
import type { GraphQLRequestBody } from './types.js';

export interface DataCheck {
  /** sha256 of the JSON of every sample answer's `data`, in order (first 12 hex digits). */
  hash: string;
  /** Each sample answer's `data`, in order: to say where two variants differ when their hashes do. */
  answers: unknown[];
  /** Size of each sample answer's body in bytes (a gateway's own `extensions` included). */
  bodyBytes: number[];
}

/**
 * Sends each sample request once and hashes `JSON.stringify(data)` of the answers. Throws when an answer is
 * not 200, carries `errors`, or has no data: a gateway that fails the sample would be timed failing.
 * Key order counts: GraphQL orders response fields as the query selects them (spec §7.2.2, "Serialized Map
 * Ordering"), so gateways that follow the spec produce the same JSON.
 */
export async function hashSampleData(
  url: string,
  requests: readonly GraphQLRequestBody[],
  headersFor?: (index: number) => Record<string, string> | undefined,
): Promise<DataCheck> {
  const hash = createHash('sha256');
  const answers: unknown[] = [];
  const bodyBytes: number[] = [];
  for (const [i, request] of requests.entries()) {
    const { body, headers } = toLoadRequest(request, `check-${i}`, headersFor?.(i));
    const response = await fetch(url, { method: 'POST', headers, body });
    const text = await response.text();
    let parsed: { data?: unknown; errors?: unknown[] };
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      throw new Error(`sample ${i}: HTTP ${response.status}, body is not JSON: ${text.slice(0, 200)}`);
    }
    if (response.status !== 200 || parsed.errors !== undefined || parsed.data == null) {
      throw new Error(`sample ${i}: HTTP ${response.status}, expected 200 with data and no errors: ${text.slice(0, 300)}`);
    }
    hash.update(JSON.stringify(parsed.data)).update('\n');
    answers.push(parsed.data);
    bodyBytes.push(Buffer.byteLength(text));
  }
  return { hash: hash.digest('hex').slice(0, 12), answers, bodyBytes };
}

/**
 * Where two answers first differ, as a path and the two values (`sample 0 data.users[2].name: "a" vs "b"`),
 * or undefined when their JSON is identical. Walks objects in the first answer's key order, so a difference
 * in key order alone shows as `key order`.
 */
export function describeDifference(expected: readonly unknown[], actual: readonly unknown[]): string | undefined {
  const show = (value: unknown) => {
    const text = JSON.stringify(value) ?? 'undefined';
    return text.length > 80 ? `${text.slice(0, 77)}...` : text;
  };
  function walk(a: unknown, b: unknown, at: string): string | undefined {
    if (Array.isArray(a) && Array.isArray(b)) {
      for (let i = 0; i < Math.min(a.length, b.length); i++) {
        const found = walk(a[i], b[i], `${at}[${i}]`);
        if (found) return found;
      }
      return a.length === b.length ? undefined : `${at}: ${a.length} items vs ${b.length}`;
    }
    if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
      const keysA = Object.keys(a);
      const keysB = Object.keys(b);
      for (const key of keysA) {
        if (!(key in b)) return `${at}.${key}: ${show((a as Record<string, unknown>)[key])} vs missing`;
        const found = walk((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], `${at}.${key}`);
        if (found) return found;
      }
      const extra = keysB.find((key) => !keysA.includes(key));
      if (extra) return `${at}.${extra}: missing vs ${show((b as Record<string, unknown>)[extra])}`;
      return keysA.join() === keysB.join() ? undefined : `${at}: key order ${keysA.join(',')} vs ${keysB.join(',')}`;
    }
    return JSON.stringify(a) === JSON.stringify(b) ? undefined : `${at}: ${show(a)} vs ${show(b)}`;
  }
  for (let i = 0; i < Math.max(expected.length, actual.length); i++) {
    const found = walk(expected[i], actual[i], `sample ${i} data`);
    if (found) return found;
  }
  return undefined;
}
