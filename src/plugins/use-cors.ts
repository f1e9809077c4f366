// CORS by allow-list (decision 037): preflights answered from the live allow-list, allowed origins' answers marked for the browser, refusals logged at debug.
import type { Plugin } from 'graphql-yoga';
import type { CorsBook, CorsRule } from '../registry/cors-book.js';
import type { Logger } from '../telemetry/logger.js';

export interface CorsOptions {
  /** The allow-list in force, kept current by the registry's change feed. */
  book: CorsBook;
  /** Refused origins are logged here at debug. */
  logger: Logger;
}

/**
 * Response headers of the router's own a browser script may read cross-origin (only the CORS-safelisted
 * ones are readable otherwise): whether the answer is complete, the request id to quote, when to retry.
 */
const EXPOSED_HEADERS = 'retry-after, switchyard-completed, x-request-id';

/** Which answers depend on which request headers: every answer on `Origin`, a preflight's also on what it asks for. */
const VARY = 'Origin';
const PREFLIGHT_VARY = 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers';

/**
 * Ours rather than yoga's `cors` option (whatwg-node's useCORS), which is in the way three times:
 * it sends no `Vary: Origin` when it answers one origin and none at all on a refused one, so a shared
 * cache may hand one origin's answer to another; it sends `Access-Control-Allow-Credentials: true`
 * unless told otherwise; and it drops a max age of 0. createRouter turns yoga's off (`cors: false`).
 *
 * 1. Every OPTIONS request is a preflight's (the router serves OPTIONS for nothing else): 204 at once,
 *    before any other plugin looks at it. Allowed, it carries the rule's headers; refused, none at all.
 * 2. Every answer says `Vary: Origin`. An allowed cross-origin request's answer gets
 *    `Access-Control-Allow-Origin` (the origin itself, never `*`), credentials when the rule allows them,
 *    and the exposed headers; a refused one's answer gets nothing, and the browser keeps it from the page.
 * 3. A request whose `Origin` is the router's own host (GraphiQL, the ops page) is not cross-origin:
 *    nothing to add, nothing to log.
 */
export function useCors(options: CorsOptions): Plugin {
  const { book, logger } = options;
  return {
    onRequest({ request, endResponse, fetchAPI }) {
      if (request.method !== 'OPTIONS') return;
      // Safari waits for a body on a 204 without a length.
      endResponse(new fetchAPI.Response(null, { status: 204, headers: { 'content-length': '0' } }));
    },
    onResponse({ request, response }) {
      const preflight = request.method === 'OPTIONS';
      appendVary(response.headers, preflight ? PREFLIGHT_VARY : VARY);
      const origin = request.headers.get('origin');
      if (origin === null || isOwnHost(origin, request.headers.get('host'))) return;
      const rule = book.ruleFor(origin);
      if (!rule) {
        logger.debug({ origin, method: preflight ? request.headers.get('access-control-request-method') : request.method, url: request.url, preflight }, 'cross-origin request refused: origin not in the CORS allow-list');
        return;
      }
      if (preflight) setPreflightHeaders(response.headers, rule, request.headers.get('access-control-request-headers'));
      response.headers.set('access-control-allow-origin', origin);
      if (rule.credentials) response.headers.set('access-control-allow-credentials', 'true');
      if (!preflight) response.headers.set('access-control-expose-headers', EXPOSED_HEADERS);
    },
  };
}

function setPreflightHeaders(headers: Headers, rule: CorsRule, requested: string | null): void {
  headers.set('access-control-allow-methods', rule.methods.join(', '));
  // No list: the headers the preflight asks for (the origin is what is trusted, not a header name).
  const allowed = rule.headers ? rule.headers.join(', ') : requested;
  if (allowed) headers.set('access-control-allow-headers', allowed);
  if (rule.maxAgeSeconds !== undefined) headers.set('access-control-max-age', String(rule.maxAgeSeconds));
}

/** Adds to `Vary` what another plugin's value does not hold yet. */
function appendVary(headers: Headers, names: string): void {
  const current = headers.get('vary');
  if (!current) {
    headers.set('vary', names);
    return;
  }
  const present = new Set(current.split(',').map((name) => name.trim().toLowerCase()));
  const missing = names.split(', ').filter((name) => !present.has(name.toLowerCase()));
  if (missing.length > 0 && !present.has('*')) headers.set('vary', `${current}, ${missing.join(', ')}`);
}

/** Whether `origin` names the host the request was sent to (a page the router served calling it back). */
function isOwnHost(origin: string, host: string | null): boolean {
  if (host === null) return false;
  const start = origin.indexOf('://');
  return start > 0 && origin.slice(start + 3) === host;
}
