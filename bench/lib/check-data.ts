// Before timing: every variant must answer the sample requests with the same data, or the comparison means nothing.
import { createHash } from 'node:crypto';
import { toLoadRequest } from './requests.js';
import type { GraphQLRequestBody } from './types.js';

export interface DataCheck {
  /** sha256 of the JSON of every sample answer's `data`, in order (first 12 hex digits). */
  hash: string;
}

/**
 * Sends each sample request once and hashes `JSON.stringify(data)` of the answers. Throws when an answer is
 * not 200, carries `errors`, or has no data: a gateway that fails the sample would be timed failing.
 */
export async function hashSampleData(
  url: string,
  requests: readonly GraphQLRequestBody[],
  headersFor?: (index: number) => Record<string, string> | undefined,
): Promise<DataCheck> {
  const hash = createHash('sha256');
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
  }
  return { hash: hash.digest('hex').slice(0, 12) };
}
