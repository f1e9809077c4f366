// A small GraphQL-over-HTTP client for tests: returns status, headers and the parsed body.
export interface GraphQLResponse<T = any> {
  status: number;
  headers: Headers;
  body: { data?: T | null; errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, any> }[]; extensions?: Record<string, any> };
}

export interface PostOptions {
  variables?: Record<string, unknown>;
  operationName?: string;
  headers?: Record<string, string>;
  /** Default `application/graphql-response+json`. */
  accept?: string;
  signal?: AbortSignal;
}

export async function postGraphQL<T = any>(url: string, query: string, options: PostOptions = {}): Promise<GraphQLResponse<T>> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: options.accept ?? 'application/graphql-response+json',
      ...options.headers,
    },
    body: JSON.stringify({ query, variables: options.variables, operationName: options.operationName }),
    signal: options.signal,
  });
  const text = await response.text();
  let body: GraphQLResponse<T>['body'];
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`not JSON (HTTP ${response.status}): ${text.slice(0, 200)}`);
  }
  return { status: response.status, headers: response.headers, body };
}

/** Resolves when `check` returns true, re-checking after each `next()` event or every `intervalMs`; rejects after `timeoutMs`. */
export async function eventually(check: () => boolean | Promise<boolean>, { timeoutMs = 10_000, intervalMs = 25, what = 'condition' } = {}): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
