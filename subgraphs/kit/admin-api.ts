// The /admin/* routes of a demo subgraph: a route table of the kit's own routes (faults, stats) plus any a subgraph adds.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { FaultSettingsError, type FaultSettings, type FaultSwitch } from './fault-switch.js';
import { sendJson } from './http-replies.js';
import type { SubgraphStats } from './subgraph-stats.js';

/** Admin bodies are a few knobs; anything bigger is a mistake or an attack. */
const MAX_ADMIN_BODY_BYTES = 64 * 1024;

/** One admin route. Answers are JSON; 404, 405, 413 and a body that is not JSON are answered by the kit. */
export interface AdminRoute {
  /** Starts with `/admin/`, e.g. `/admin/inventory`. Matched exactly, without the query string. */
  readonly path: string;
  readonly method: 'GET' | 'POST';
  /** The route reads a JSON body (at most 64 KiB), handed to `handle` parsed. Default false: the body is drained and `handle` gets `undefined`. */
  readonly json?: boolean;
  /**
   * Does the work and returns the JSON answer of a 200. Throws `AdminInputError` for bad input (answered
   * 400 `{ error, problems? }`; the route must change nothing then). Any other error answers 500.
   */
  handle(body: unknown): unknown;
}

/** Bad input to an admin route: answered 400 `{ error: message, problems }`. */
export class AdminInputError extends Error {
  constructor(
    message: string,
    readonly problems: readonly string[] = [],
  ) {
    super(message);
    this.name = 'AdminInputError';
  }
}

/** Answers one `/admin/*` request; `path` is the URL path without the query string. */
export type AdminHandler = (req: IncomingMessage, res: ServerResponse, path: string) => void;

export interface KitAdminTargets {
  faults: FaultSwitch;
  stats: SubgraphStats;
}

/**
 * The routes every demo subgraph has:
 * - `GET /admin/faults`: the fault settings;
 * - `POST /admin/faults` with a partial JSON object: changes only those knobs, answers the full state;
 *   bad input answers 400 `{ error, problems }` and changes nothing;
 * - `GET /admin/stats`: the counters; `POST /admin/stats/reset`: zeroes them and answers the result;
 * - `GET /admin/subscriptions`: `{ open, connections, started, events }` (`SubscriptionCounters`, also in the stats).
 */
export function kitAdminRoutes(targets: KitAdminTargets): AdminRoute[] {
  const { faults, stats } = targets;
  return [
    { path: '/admin/faults', method: 'GET', handle: () => faults.get() },
    {
      path: '/admin/faults',
      method: 'POST',
      json: true,
      handle: function changeFaults(body) {
        try {
          // set() validates its input at run time, so the untrusted body can go straight in.
          return faults.set(body as Partial<FaultSettings>);
        } catch (error) {
          if (error instanceof FaultSettingsError) throw new AdminInputError(error.message, error.problems);
          throw error;
        }
      },
    },
    { path: '/admin/stats', method: 'GET', handle: () => stats.snapshot() },
    { path: '/admin/subscriptions', method: 'GET', handle: () => ({ ...stats.subscriptions }) },
    {
      path: '/admin/stats/reset',
      method: 'POST',
      handle: function resetStats() {
        stats.reset();
        return stats.snapshot();
      },
    },
  ];
}

/**
 * Builds the `/admin/*` handler from a route table. Checked once, here: every path starts with
 * `/admin/` and no method and path pair appears twice (a subgraph cannot shadow a kit route by accident).
 */
export function createAdminApi(routes: readonly AdminRoute[]): AdminHandler {
  const byPath = new Map<string, Map<string, AdminRoute>>();
  for (const route of routes) {
    if (!route.path.startsWith('/admin/')) throw new TypeError(`admin route ${route.path} must start with /admin/`);
    const methods = byPath.get(route.path) ?? new Map<string, AdminRoute>();
    if (methods.has(route.method)) throw new TypeError(`admin route ${route.method} ${route.path} is defined twice`);
    methods.set(route.method, route);
    byPath.set(route.path, methods);
  }

  return function handleAdmin(req, res, path) {
    const methods = byPath.get(path);
    if (methods === undefined) {
      req.resume();
      return sendJson(res, 404, { error: `no admin route ${path}` });
    }
    const route = methods.get(req.method ?? 'GET');
    if (route === undefined) {
      req.resume();
      const allow = [...methods.keys()].join(', ');
      return sendJson(res, 405, { error: `${req.method} not allowed here (allowed: ${allow})` }, { allow });
    }
    if (!route.json) {
      req.resume();
      return answer(res, route, undefined);
    }
    readJsonBody(req, res, (body) => answer(res, route, body));
  };
}

function answer(res: ServerResponse, route: AdminRoute, body: unknown): void {
  let result: unknown;
  try {
    result = route.handle(body);
  } catch (error) {
    if (error instanceof AdminInputError) {
      return sendJson(res, 400, error.problems.length > 0 ? { error: error.message, problems: error.problems } : { error: error.message });
    }
    console.error(`admin route ${route.method} ${route.path} failed:`, error);
    return sendJson(res, 500, { error: 'admin route failed' });
  }
  sendJson(res, 200, result);
}

/** Collects a small JSON body; answers 413 or 400 itself when the body is too big or not JSON. */
function readJsonBody(req: IncomingMessage, res: ServerResponse, onBody: (body: unknown) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooBig = false;
  req.on('data', function collectAdminBody(chunk: Buffer) {
    size += chunk.length;
    if (size > MAX_ADMIN_BODY_BYTES) tooBig = true;
    else chunks.push(chunk);
  });
  req.on('end', function parseAdminBody() {
    if (tooBig) return sendJson(res, 413, { error: `body larger than ${MAX_ADMIN_BODY_BYTES} bytes` });
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return sendJson(res, 400, { error: 'body is not valid JSON' });
    }
    onBody(body);
  });
}
