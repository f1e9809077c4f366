// The /admin/* routes of a demo subgraph: read and change the fault switch, read and reset the counters.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { FaultSettingsError, type FaultSettings, type FaultSwitch } from './fault-switch.js';
import { sendJson } from './http-replies.js';
import type { SubgraphStats } from './subgraph-stats.js';

/** Admin bodies are a few knobs; anything bigger is a mistake or an attack. */
const MAX_ADMIN_BODY_BYTES = 64 * 1024;

export interface AdminTargets {
  faults: FaultSwitch;
  stats: SubgraphStats;
}

/**
 * Routes:
 * - `GET /admin/faults`: the fault settings;
 * - `POST /admin/faults` with a partial JSON object: changes only those knobs, answers the full state;
 *   bad input answers 400 `{ error }` and changes nothing;
 * - `GET /admin/stats`: the counters; `POST /admin/stats/reset`: zeroes them and answers the result.
 */
export function handleAdmin(req: IncomingMessage, res: ServerResponse, path: string, targets: AdminTargets): void {
  const method = req.method ?? 'GET';
  switch (path) {
    case '/admin/faults':
      if (method === 'GET') return sendJson(res, 200, targets.faults.get());
      if (method === 'POST') return void readJsonBody(req, res, (body) => changeFaults(res, targets.faults, body));
      return methodNotAllowed(req, res, 'GET, POST');
    case '/admin/stats':
      if (method === 'GET') return sendJson(res, 200, targets.stats.snapshot());
      return methodNotAllowed(req, res, 'GET');
    case '/admin/stats/reset':
      if (method === 'POST') {
        req.resume();
        targets.stats.reset();
        return sendJson(res, 200, targets.stats.snapshot());
      }
      return methodNotAllowed(req, res, 'POST');
    default:
      req.resume();
      return sendJson(res, 404, { error: `no admin route ${path}` });
  }
}

function changeFaults(res: ServerResponse, faults: FaultSwitch, body: unknown): void {
  try {
    // set() validates its input at run time, so the untrusted body can go straight in.
    sendJson(res, 200, faults.set(body as Partial<FaultSettings>));
  } catch (error) {
    if (error instanceof FaultSettingsError) return sendJson(res, 400, { error: error.message, problems: error.problems });
    throw error;
  }
}

function methodNotAllowed(req: IncomingMessage, res: ServerResponse, allow: string): void {
  req.resume();
  sendJson(res, 405, { error: `${req.method} not allowed here (allowed: ${allow})` }, { allow });
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
