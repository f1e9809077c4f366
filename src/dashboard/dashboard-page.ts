// The ops dashboard page: an HTML document (inline style, settings as a JSON data block), its one script as a static file under a content-hashed path, and the CSP that admits exactly those.
import { createHash } from 'node:crypto';
import { METRIC } from '../telemetry/metric-names.js';
import { DASHBOARD_FUNCTIONS, type DashboardSettings } from './dashboard-script.js';

export interface DashboardPageOptions {
  /** URL the page reads the Prometheus text from, on the page's own origin (its CSP allows no other). Default `/metrics`. */
  metricsUrl?: string;
  /** Time between two reads of the metrics, in ms. Default 1000. */
  pollMs?: number;
  /** Window of the rates and percentiles, in ms. Default 10000. */
  windowMs?: number;
  /** Points per sparkline (one per read). Default 60: a minute at the default pace. */
  points?: number;
  /** URL of the top operations by client (JSON, same origin). Unset: the page has no such section (no operation registry). */
  operationsUrl?: string;
  /** Time between two reads of the top operations, in ms. Default 10000: the registry is written in batches, so it moves slowly. */
  operationsPollMs?: number;
  /** Path prefix of the page's static files (a content-hashed folder follows it). Default `/dashboard/assets/`. */
  assetPrefix?: string;
}

/** One static file: encoded once, so a request only wraps the same bytes in a response. */
export interface DashboardAsset {
  body: Uint8Array<ArrayBuffer>;
  contentType: string;
}

export interface DashboardPage {
  html: string;
  /**
   * Admits the page's own inline style and its script file by their SHA-256 (hash sources; the
   * script element carries the same hash as its `integrity`, which is how CSP Level 3 matches a hash
   * to a file), so no nonce is needed and the page can be built once; everything else is refused, the
   * page may only connect to its own origin, and DOM sinks that parse HTML are closed (Trusted Types).
   */
  contentSecurityPolicy: string;
  /**
   * The page's static files by full path: `<assetPrefix><content hash>/dashboard.js`. The path names
   * the bytes, so browsers may keep a file for ever (served like GraphiQL's files, use-graphiql-assets.ts).
   */
  files: ReadonlyMap<string, DashboardAsset>;
}

/** The id of the JSON data block holding the settings (a data block is never executed, so the CSP needs no exception for it). */
export const SETTINGS_ELEMENT_ID = 'dashboard-settings';

const STYLE = `
:root { color-scheme: light dark; --bg: #f5f6f8; --panel: #fff; --chart: #f0f3f8; --text: #1c2230; --muted: #5d6878; --border: #dde2ea; --line: #2f6fde; --line2: #c47f12; --ok: #1e8449; --warn: #b7791f; --bad: #c53030; }
@media (prefers-color-scheme: dark) { :root { --bg: #12151b; --panel: #1b2028; --chart: #222933; --text: #e4e8ee; --muted: #94a1b3; --border: #2b323d; --line: #6aa3ff; --line2: #e0a43a; } }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: var(--bg); color: var(--text); }
header { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 24px; padding: 14px 24px; background: var(--panel); border-bottom: 1px solid var(--border); }
h1 { margin: 0; font-size: 18px; }
h1 span { color: var(--muted); font-weight: 400; }
#status { margin: 0; padding: 3px 12px; border-radius: 999px; font-size: 13px; border: 1px solid var(--border); }
#status[data-state="live"]::before { content: "\\25CF"; color: var(--ok); margin-right: 6px; }
#status[data-state="error"] { background: var(--bad); border-color: var(--bad); color: #fff; font-weight: 600; }
body[data-state="error"] main { opacity: .45; filter: grayscale(1); }
main { display: grid; gap: 22px; padding: 18px 24px; max-width: 1180px; }
h2 { margin: 0 0 8px; font-size: 12px; font-weight: 600; letter-spacing: .06em; text-transform: uppercase; color: var(--muted); }
.cards { display: flex; flex-wrap: wrap; gap: 12px; }
.card { display: grid; grid-template-columns: 1fr auto; align-items: center; gap: 2px 16px; min-width: 240px; margin: 0; padding: 10px 14px; background: var(--panel); border: 1px solid var(--border); border-radius: 8px; }
.card figcaption { grid-column: 1 / -1; font-size: 12px; color: var(--muted); }
.card .value { font-size: 22px; }
table { border-collapse: collapse; background: var(--panel); border: 1px solid var(--border); }
th, td { padding: 6px 16px 6px 12px; text-align: left; vertical-align: middle; white-space: nowrap; border-bottom: 1px solid var(--border); }
thead th { font-size: 12px; font-weight: 600; color: var(--muted); }
tbody th { font-weight: 600; }
.value { display: inline-block; min-width: 6.5em; font-variant-numeric: tabular-nums; }
td.chart .value { min-width: 5.5em; margin-right: 8px; }
td.latency .value { min-width: 10em; }
.spark { width: 120px; height: 28px; vertical-align: middle; overflow: visible; background: var(--chart); border-radius: 3px; }
.line { fill: none; stroke: var(--line); stroke-width: 1.5; stroke-linejoin: round; vector-effect: non-scaling-stroke; }
.line-1, .key-1 { stroke: var(--line2); color: var(--line2); }
.key-0 { color: var(--line); }
.alarm .value { color: var(--bad); font-weight: 600; }
.alarm .line { stroke: var(--bad); }
.badge { display: inline-block; padding: 1px 9px; border-radius: 999px; font-size: 12px; font-weight: 600; color: #fff; background: var(--muted); }
.badge[data-state="closed"] { background: var(--ok); }
.badge[data-state="open"] { background: var(--bad); }
.badge[data-state="half-open"] { background: var(--warn); }
.empty { margin: 8px 0 0; color: var(--muted); }
.upstreams { margin: 8px 0 0; }
.upstream { font-variant-numeric: tabular-nums; }
.upstream + .upstream::before { content: " \\00B7  "; color: var(--muted); }
footer { max-width: 1180px; padding: 0 24px 24px; font-size: 12px; color: var(--muted); }
`;

/**
 * The page's script file: the embedded functions' source (the same function objects the unit tests
 * call), run in their own scope with the settings read from the page's JSON data block. It holds no
 * setting, so every router of one version serves the same file.
 */
function pageScript(): string {
  const settings = `JSON.parse(document.getElementById(${JSON.stringify(SETTINGS_ELEMENT_ID)}).textContent)`;
  return `"use strict";\n(function () {\n${DASHBOARD_FUNCTIONS.map(String).join('\n\n')}\n\nrunDashboard(${settings}, { parsePrometheus, computeView });\n})();\n`;
}

function sha256(text: string): string {
  return `sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Builds the page once; it holds no per-request value, so every request gets the same bytes. */
export function renderDashboardPage(options: DashboardPageOptions = {}): DashboardPage {
  const settings = dashboardSettings(options);
  const script = pageScript();
  const scriptHash = sha256(script);
  const scriptPath = `${options.assetPrefix ?? '/dashboard/assets/'}${createHash('sha256').update(script, 'utf8').digest('hex').slice(0, 12)}/dashboard.js`;
  const files = new Map<string, DashboardAsset>([[scriptPath, { body: Buffer.from(script), contentType: 'text/javascript; charset=utf-8' }]]);
  return { html: pageHtml(settings, scriptPath, scriptHash), contentSecurityPolicy: contentSecurityPolicy(scriptHash), files };
}

/** What the page's script reads: the options with their defaults, and the metric names it looks for. */
function dashboardSettings(options: DashboardPageOptions): DashboardSettings {
  return {
    metricsUrl: options.metricsUrl ?? '/metrics',
    pollMs: options.pollMs ?? 1_000,
    windowMs: options.windowMs ?? 10_000,
    points: options.points ?? 60,
    operationsUrl: options.operationsUrl ?? null,
    operationsPollMs: options.operationsPollMs ?? 10_000,
    names: {
      requests: METRIC.requests,
      partialResponses: METRIC.partialResponses,
      subgraphRequests: METRIC.subgraphRequests,
      cacheRequests: METRIC.cacheRequests,
      subgraphDuration: METRIC.subgraphDuration,
      circuitState: METRIC.circuitState,
      queueInflight: METRIC.queueInflight,
      queueWaiting: METRIC.queueWaiting,
      queueRejected: METRIC.queueRejected,
      subscriptionsActive: METRIC.subscriptionsActive,
      subscriptionEventsOut: METRIC.subscriptionEventsOut,
      subscriptionEventsDropped: METRIC.subscriptionEventsDropped,
      subscriptionEventDuration: METRIC.subscriptionEventDuration,
      subscriptionUpstreams: METRIC.subscriptionUpstreams,
    },
  };
}

/** The page: its layout, the settings as JSON and the script by hash. */
function pageHtml(settings: DashboardSettings, scriptPath: string, scriptHash: string): string {
  // Inside <script>, `</script` would end the element early: JSON may escape `<` instead.
  const json = JSON.stringify(settings).replace(/</g, '\\u003c');
  const metrics = escapeHtml(settings.metricsUrl);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Switchyard ops</title>
<link rel="icon" href="data:,">
<style>${STYLE}</style>
</head>
<body data-state="connecting">
<header>
<h1>Switchyard <span>ops</span></h1>
<p id="status" role="status" aria-live="polite" data-state="connecting">Reading ${metrics}…</p>
</header>
<main>
<section aria-labelledby="router-title">
<h2 id="router-title">Router</h2>
<div class="cards">
<figure class="card" id="requests"><figcaption>Requests</figcaption></figure>
<figure class="card" id="partial"><figcaption>Partial responses (a section missing or stale)</figcaption></figure>
</div>
</section>
<section aria-labelledby="subgraphs-title">
<h2 id="subgraphs-title">Subgraphs</h2>
<table id="subgraphs">
<thead><tr><th scope="col">Subgraph</th><th scope="col">Circuit</th><th scope="col">Calls</th><th scope="col">Errors</th><th scope="col">Latency <span class="key-0">p50</span> / <span class="key-1">p99</span></th><th scope="col">Cache hits</th></tr></thead>
<tbody></tbody>
</table>
<p class="empty" id="subgraphs-empty">No subgraph yet: they appear once a graph is composed.</p>
</section>
<section aria-labelledby="operations-title">
<h2 id="operations-title">Operations</h2>
<table id="operations">
<thead><tr><th scope="col">Operation</th><th scope="col">Requests</th><th scope="col">In flight</th><th scope="col">Waiting</th><th scope="col">Rejected</th></tr></thead>
<tbody></tbody>
</table>
<p class="empty" id="operations-empty">No operation yet: they appear once called.</p>
</section>
<section aria-labelledby="subscriptions-title">
<h2 id="subscriptions-title">Subscriptions</h2>
<table id="subscriptions">
<thead><tr><th scope="col">Operation</th><th scope="col">Open</th><th scope="col">Events out</th><th scope="col">Time to complete <span class="key-0">p50</span> / <span class="key-1">p99</span></th><th scope="col">Dropped</th></tr></thead>
<tbody></tbody>
</table>
<p class="empty" id="subscriptions-empty">No subscription yet: they appear once a client subscribes.</p>
<p class="upstreams" id="upstreams" hidden>Upstream subscriptions open, per subgraph: <span id="upstreams-list"></span></p>
</section>
${
  settings.operationsUrl
    ? `<section aria-labelledby="clients-title">
<h2 id="clients-title">Top operations by client (last 24 h)</h2>
<table id="clients">
<thead><tr><th scope="col">Client</th><th scope="col">Operation</th><th scope="col">Executions</th><th scope="col">Last seen</th></tr></thead>
<tbody></tbody>
</table>
<p class="empty" id="clients-empty">Nothing recorded yet: the operation registry writes what ran every second.</p>
</section>
`
    : ''
}</main>
<footer>
Read from ${metrics} every ${settings.pollMs / 1000} s. Rates, error shares and percentiles cover the last ${settings.windowMs / 1000} s; charts show the last ${settings.points} reads.
Circuit: <b>closed</b> calls flow, <b>open</b> calls are refused at once, <b>half-open</b> a few probe calls test the subgraph.
${settings.operationsUrl ? `Top operations by client are read from the operation registry (all routers) every ${settings.operationsPollMs / 1000} s; a client that sent no name shows as (unnamed).
` : ''}In flight, waiting and rejected come from operation queues: only operations with a <code>max_concurrency</code> policy (or the shared <code>*</code> queue) have them, and they count this router instance only.
Subscriptions count this router instance too: events out counts every client's copy, time to complete runs from a subgraph's event to its answer (entity fetches included), dropped are events not sent (a slow client's oldest beyond 256 waiting, or events that came while 64 were still being completed). An upstream subscription is shared by every client with the same document, variables and token holder.
</footer>
<noscript>This page reads ${metrics} with JavaScript, which is off.</noscript>
<script type="application/json" id="${SETTINGS_ELEMENT_ID}">${json}</script>
<script src="${escapeHtml(scriptPath)}" integrity="${scriptHash}"></script>
</body>
</html>
`;
}

/** Only the page's own script (by hash), its style and reads of this router are allowed. */
function contentSecurityPolicy(scriptHash: string): string {
  return [
    "default-src 'none'",
    `script-src '${scriptHash}'`,
    `style-src '${sha256(STYLE)}'`,
    "connect-src 'self'",
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
    "require-trusted-types-for 'script'",
    "trusted-types 'none'",
  ].join('; ');
}
