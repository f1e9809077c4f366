// The ops page: GET /dashboard answers a self-contained HTML page that polls /metrics and draws live charts.
import type { Plugin } from 'graphql-yoga';
import { renderDashboardPage, type DashboardPageOptions } from '../dashboard/dashboard-page.js';

export interface DashboardOptions extends DashboardPageOptions {
  /** Path of the page. Default `/dashboard`. */
  endpoint?: string;
}

/**
 * Serves the page before yoga parses anything (like useMetrics), so it answers even when no graph is
 * composed. The page is built once, here; a request only wraps the same string in a response. It
 * shows nothing that /metrics does not already show to whoever can reach it.
 */
export function useDashboard(options: DashboardOptions = {}): Plugin {
  const endpoint = options.endpoint ?? '/dashboard';
  const page = renderDashboardPage(options);
  const headers: Record<string, string> = {
    'content-type': 'text/html; charset=utf-8',
    // Always fetched afresh: the page is small, and a cached copy would outlive a router upgrade.
    'cache-control': 'no-store',
    'content-security-policy': page.contentSecurityPolicy,
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
  };
  return {
    onRequest({ request, url, endResponse, fetchAPI }) {
      if (url.pathname === endpoint && request.method === 'GET') endResponse(new fetchAPI.Response(page.html, { status: 200, headers }));
    },
  };
}
