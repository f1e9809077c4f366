// The ops page: GET /dashboard answers an HTML page that polls /metrics and draws live charts, its script a content-hashed file under /dashboard/assets/; GET /dashboard/operations, the top operations by client.
import type { Plugin } from 'graphql-yoga';
import { renderDashboardPage, type DashboardPageOptions } from '../dashboard/dashboard-page.js';
import type { ClientOperations } from '../registry/operation-log.js';

export interface DashboardOptions extends Omit<DashboardPageOptions, 'operationsUrl' | 'assetPrefix'> {
  /** Path of the page. Default `/dashboard`; the operations JSON is `<endpoint>/operations`, its script under `<endpoint>/assets/`. */
  endpoint?: string;
  /** Reads the top operations by client from the operation registry. Absent (no database, or recording off): the page has no such section. */
  topOperations?: () => Promise<ClientOperations[]>;
  /** How long, in ms, one read of the top operations answers every page that asks. Default 5,000. */
  topOperationsTtlMs?: number;
}

const SECURITY_HEADERS: Record<string, string> = {
  // Always fetched afresh: the page is small, and a cached copy would outlive a router upgrade.
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

/** A file's path names its content (dashboard-page.ts), so a browser never needs to ask again: as GraphiQL's files (use-graphiql-assets.ts). */
const ASSET_CACHE_CONTROL = 'public, max-age=31536000, immutable';

/**
 * Serves the page before yoga parses anything (like useMetrics), so it answers even when no graph is
 * composed. The page and its script file are built once, here; a request only wraps the same bytes in a response.
 * The operations endpoint shows operation names (already labels in /metrics), client names and counts,
 * never document text. Its read is shared: however many pages are open, the registry is read at most
 * once per `topOperationsTtlMs`, and one failed read answers 503 without being kept.
 */
export function useDashboard(options: DashboardOptions = {}): Plugin {
  const endpoint = options.endpoint ?? '/dashboard';
  const operationsPath = `${endpoint}/operations`;
  const { topOperations } = options;
  const ttlMs = options.topOperationsTtlMs ?? 5_000;
  const page = renderDashboardPage({ ...options, operationsUrl: topOperations ? operationsPath : undefined, assetPrefix: `${endpoint}/assets/` });
  const headers: Record<string, string> = { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': page.contentSecurityPolicy, ...SECURITY_HEADERS };
  let cached: { at: number; body: Promise<string> } | undefined;

  function readOperations(): Promise<string> {
    if (cached && Date.now() - cached.at < ttlMs) return cached.body;
    const body = topOperations!().then((clients) => JSON.stringify({ windowHours: 24, clients }));
    const entry = { at: Date.now(), body };
    cached = entry;
    body.catch(() => {
      if (cached === entry) cached = undefined;
    });
    return body;
  }

  return {
    async onRequest({ request, url, endResponse, fetchAPI }) {
      if (request.method !== 'GET') return;
      const file = page.files.get(url.pathname);
      if (url.pathname === endpoint) endResponse(new fetchAPI.Response(page.html, { status: 200, headers }));
      else if (file) {
        endResponse(new fetchAPI.Response(file.body, { status: 200, headers: { 'content-type': file.contentType, 'cache-control': ASSET_CACHE_CONTROL, 'x-content-type-options': 'nosniff' } }));
      } else if (url.pathname === operationsPath && topOperations) {
        try {
          endResponse(new fetchAPI.Response(await readOperations(), { status: 200, headers: { 'content-type': 'application/json; charset=utf-8', ...SECURITY_HEADERS } }));
        } catch {
          endResponse(new fetchAPI.Response(JSON.stringify({ error: 'the operation registry cannot be read' }), { status: 503, headers: { 'content-type': 'application/json; charset=utf-8', ...SECURITY_HEADERS } }));
        }
      }
    },
  };
}
