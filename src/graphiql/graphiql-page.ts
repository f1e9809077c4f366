// The GraphiQL page: a small HTML document that links the router's own GraphiQL files, the CSP that admits only its origin, and how its fetcher reaches the endpoint.
import type { GraphiQLOptions } from 'graphql-yoga';
import type { GraphiQLAssets } from './graphiql-assets.js';
import type { OpeningTab } from './opening-tab.js';
import { SETTINGS_ELEMENT_ID, type GraphiQLSettings } from './graphiql-start.js';

/**
 * Everything the page loads, runs or connects to comes from its own origin:
 * - script-src 'self': GraphiQL's bundle and the start-up script are files; the settings are a JSON
 *   data block, which is never executed and needs no exception.
 * - worker-src 'self': the editor's workers start from their own URLs (not blob: as on Yoga's page).
 * - style-src 'self' 'unsafe-inline': the editor (Monaco) and GraphiQL's UI add `<style>` elements
 *   at run time (themes, decorations, layout); they carry no nonce, so they cannot be admitted by
 *   hash or nonce. 'unsafe-inline' here admits inline styles only; it lets nothing load from elsewhere.
 * - font-src and img-src also admit data: (fonts and icons embedded in GraphiQL's CSS and markup).
 * - connect-src 'self': the page talks to the GraphQL endpoint on the same origin, nowhere else.
 * No Trusted Types requirement (unlike the ops page): GraphiQL renders schema descriptions as
 * Markdown through innerHTML, which that requirement would refuse.
 */
export const GRAPHIQL_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "worker-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "font-src 'self' data:",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Yoga's GraphiQL options for the router's page: its title, what it opens on, and how its fetcher (Yoga's
 * GraphiQL builds it with @graphql-tools/url-loader from these options) reaches `/graphql`:
 * - subscriptionsProtocol 'SSE': a subscription is a request to `/graphql` answered with
 *   `text/event-stream` (Yoga's own processor, graphql-sse's distinct connections mode), on the same
 *   origin, so `connect-src 'self'` admits it. Named rather than left to Yoga's default
 *   (GRAPHQL_SSE, which here runs the same HTTP executor). Not 'WS': that executor puts only fixed
 *   connection parameters in `connection_init`, never the Headers tab's headers, so a token typed
 *   there would not reach the subscription.
 * - method 'POST': without a method the executor sends a subscription as a GET, its document in the
 *   URL and no JSON body, which the router's CSRF prevention refuses (400). The option applies to
 *   every operation (queries were POSTs already); a POST has a JSON body, and the Headers tab's
 *   headers (a token) go with it as HTTP headers.
 */
export function graphiqlOptions(opening: OpeningTab): GraphiQLOptions {
  return { title: 'Switchyard', subscriptionsProtocol: 'SSE', method: 'POST', ...opening };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The page for one set of options (Yoga calls its renderer per request; the page is a few hundred bytes). */
export function renderGraphiQLPage(assets: GraphiQLAssets, options: GraphiQLOptions): string {
  const { urls } = assets;
  const title = options.title ?? 'GraphiQL';
  const settings: GraphiQLSettings = { workers: urls.workers, options: { ...options } };
  // Inside <script>, `</script` would end the element early: JSON may escape `<` instead.
  const json = JSON.stringify(settings).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="${escapeHtml(urls.favicon ?? 'data:,')}">
<link rel="stylesheet" href="${escapeHtml(urls.style)}">
</head>
<body id="body" class="no-focus-outline">
<noscript>GraphiQL needs JavaScript, which is off.</noscript>
<div id="root">Loading ${escapeHtml(title)}…</div>
<script type="application/json" id="${SETTINGS_ELEMENT_ID}">${json}</script>
<script src="${escapeHtml(urls.script)}"></script>
<script src="${escapeHtml(urls.start)}"></script>
</body>
</html>
`;
}
