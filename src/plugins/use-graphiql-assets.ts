// Self-hosted GraphiQL: serves GraphiQL's files from the router (immutable, versioned paths) and puts the page's CSP on GraphiQL's page.
import type { Plugin } from 'graphql-yoga';
import type { GraphiQLAssets } from '../graphiql/graphiql-assets.js';
import { GRAPHIQL_CONTENT_SECURITY_POLICY } from '../graphiql/graphiql-page.js';

export interface GraphiQLAssetsOptions {
  /** The files, loaded once by the caller on first use (`lazyGraphiQLAssets`). */
  assets: () => Promise<GraphiQLAssets>;
  /** Path prefix of every file (the versioned folder follows it). Default `/graphiql/`. */
  prefix?: string;
  /** Where Yoga serves GraphiQL's page (its GraphQL endpoint). Default `/graphql`. */
  graphqlEndpoint?: string;
}

/** A file's path names its content (graphiql-assets.ts), so a browser never needs to ask again. */
const ASSET_CACHE_CONTROL = 'public, max-age=31536000, immutable';

const PAGE_HEADERS: Record<string, string> = {
  'content-type': 'text/html; charset=utf-8',
  // The page names the current files' versioned paths: a cached copy would outlive a router upgrade.
  'cache-control': 'no-store',
  'content-security-policy': GRAPHIQL_CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

/**
 * Yoga decides when to show GraphiQL (a GET of the endpoint that accepts HTML) and renders the page
 * with the router's renderer (graphiql-page.ts); this plugin does the rest:
 * 1. Files: a GET under the prefix answers the file at that exact path, before Yoga parses anything
 *    (like the ops page, it needs no composed graph). Other paths under the prefix fall through to 404.
 * 2. Page: Yoga's GraphiQL response carries only a content type; the security headers are added here.
 */
export function useGraphiQLAssets(options: GraphiQLAssetsOptions): Plugin {
  const prefix = options.prefix ?? '/graphiql/';
  const endpoint = options.graphqlEndpoint ?? '/graphql';
  return {
    async onRequest({ request, url, endResponse, fetchAPI }) {
      if (request.method !== 'GET' || !url.pathname.startsWith(prefix)) return;
      const file = (await options.assets()).files.get(url.pathname);
      if (!file) return;
      endResponse(
        new fetchAPI.Response(file.body, {
          status: 200,
          headers: { 'content-type': file.contentType, 'cache-control': ASSET_CACHE_CONTROL, 'x-content-type-options': 'nosniff' },
        }),
      );
    },
    onResponse({ request, response, setResponse, fetchAPI }) {
      if (request.method !== 'GET' || !response.headers.get('content-type')?.startsWith('text/html')) return;
      const { pathname } = new URL(request.url);
      if (pathname !== endpoint && pathname !== `${endpoint}/`) return;
      // A new response rather than headers.set(): on Yoga's response (headers given as `Content-Type`),
      // setting `content-type` adds a second header instead of replacing it.
      const headers: Record<string, string> = {};
      for (const [name, value] of response.headers) headers[name.toLowerCase()] = value;
      setResponse(new fetchAPI.Response(response.body, { status: response.status, headers: { ...headers, ...PAGE_HEADERS } }));
    },
  };
}
