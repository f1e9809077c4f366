// The ops dashboard's browser code: the poll-and-render loop, sparklines and number formats; the Prometheus arithmetic it uses is in prometheus-math.ts.
//
// Every function here is self-contained (it calls only the other functions of this file, and reads no
// module-level value and no import), because the page embeds their source text as its one inline
// script (see dashboard-page.ts). What `runDashboard` needs from prometheus-math.ts it receives as an
// argument, never through an import: an imported name inside a function body is rewritten by some
// module loaders (vitest's among them), so its source text would not run on its own. The pure
// functions are unit-tested in Node; `runDashboard` needs a DOM and is checked in a real browser by
// test/integration/dashboard.test.ts.
import type { computeView as ComputeView, DashboardMetricNames, DashboardView, parsePrometheus as ParsePrometheus, Snapshot } from './prometheus-math.js';
import { circuitLabel, computeView, counterIncrease, gaugeBy, parsePrometheus, quantileFromBuckets, seriesKey, windowBuckets } from './prometheus-math.js';

/** The browser's globals that `runDashboard` uses; declared here so the file compiles without the DOM library. */
declare const document: any;

/** What runDashboard uses from prometheus-math.ts, passed in by the page script (see the opening comment). */
export interface DashboardMath {
  parsePrometheus: typeof ParsePrometheus;
  computeView: typeof ComputeView;
}

export interface DashboardSettings {
  /** URL of the Prometheus text endpoint, as the page fetches it. */
  metricsUrl: string;
  /** Time between two reads, in ms. */
  pollMs: number;
  /** Window of rates and percentiles, in ms. */
  windowMs: number;
  /** Points kept per sparkline. */
  points: number;
  /** URL of the top operations by client (JSON), or null when the router has no operation registry. */
  operationsUrl: string | null;
  /** Time between two reads of operationsUrl, in ms. */
  operationsPollMs: number;
  names: DashboardMetricNames;
}

/** What `/dashboard/operations` answers (ClientOperations, dates as ISO text). */
export interface TopOperations {
  windowHours: number;
  clients: { clientName: string; total: number; operations: { operationName: string | null; operationType: string; hash: string; count: number; lastSeen: string }[] }[];
}

/** The rows of the top-operations table: one per (client, operation), the client named on its first row only. */
export function topOperationRows(top: TopOperations): { client: string; operation: string; count: string; lastSeen: string }[] {
  const rows: { client: string; operation: string; count: string; lastSeen: string }[] = [];
  for (const client of top.clients) {
    client.operations.forEach((operation, index) => {
      rows.push({
        client: index === 0 ? `${client.clientName || '(unnamed)'} · ${client.total}` : '',
        operation: operation.operationName ?? `(anonymous ${operation.operationType} ${operation.hash.slice(0, 8)})`,
        count: String(operation.count),
        lastSeen: new Date(operation.lastSeen).toLocaleString(),
      });
    });
  }
  return rows;
}

/**
 * The SVG path of a sparkline: the newest value at the right edge, one step per read to the left,
 * `capacity` points across the width. The scale runs from 0 to the larger of `top` and the highest
 * value, so a quiet series stays flat instead of magnifying noise. Missing values (null) break the line.
 */
export function sparklinePath(values: (number | null)[], capacity: number, width: number, height: number, top = 0): string {
  const step = width / Math.max(1, capacity - 1);
  let max = top;
  for (const value of values) if (value !== null && Number.isFinite(value) && value > max) max = value;
  const parts: string[] = [];
  let drawing = false;
  const shown = values.slice(-capacity);
  shown.forEach((value, index) => {
    if (value === null || !Number.isFinite(value)) {
      drawing = false;
      return;
    }
    const x = width - (shown.length - 1 - index) * step;
    const y = max > 0 ? height - (Math.max(0, value) / max) * height : height;
    parts.push(`${drawing ? 'L' : 'M'}${Math.round(x * 10) / 10} ${Math.round(y * 10) / 10}`);
    drawing = true;
  });
  return parts.join(' ');
}

export function formatRate(value: number | null): string {
  if (value === null) return '–';
  if (value >= 1000) return `${(value / 1000).toFixed(1)}k/s`;
  if (value >= 10) return `${Math.round(value)}/s`;
  return `${value.toFixed(1)}/s`;
}

export function formatPercent(fraction: number | null): string {
  if (fraction === null) return '–';
  if (fraction === 0) return '0%';
  if (fraction < 0.001) return '<0.1%';
  if (fraction < 0.1) return `${(fraction * 100).toFixed(1)}%`;
  return `${Math.round(fraction * 100)}%`;
}

export function formatSeconds(seconds: number | null): string {
  if (seconds === null) return '–';
  if (seconds >= 1) return `${seconds.toFixed(2)} s`;
  const ms = seconds * 1000;
  if (ms < 10) return `${ms.toFixed(1)} ms`;
  return `${Math.round(ms)} ms`;
}

export function formatCount(value: number | null): string {
  return value === null ? '–' : String(Math.round(value));
}

/**
 * The page's loop, in the browser:
 * 1. Read the metrics endpoint, then schedule the next read `pollMs` after this one ends (reads never
 *    overlap, and a slow router is not piled on).
 * 2. Keep the reads of the last `windowMs`; the oldest of them and the newest give the view.
 * 3. Append each number to its sparkline series and redraw the rows in place (rows are created once
 *    per subgraph or operation; label values, which clients choose, only ever go in as text).
 * 4. A failed read (network error, non-2xx, timeout) turns the status line into an error that says
 *    what failed and when the numbers shown were last fresh, and greys them out until a read succeeds.
 */
// eslint-disable-next-line max-lines-per-function -- browser code of the ops page, shipped as one self-contained script (its source is the asset)
export function runDashboard(settings: DashboardSettings, math: DashboardMath): void {
  const SVG = 'http://www.w3.org/2000/svg';
  const WIDTH = 120;
  const HEIGHT = 28;
  const wanted = new Set<string>(Object.values(settings.names));
  wanted.add(`${settings.names.subgraphDuration}_bucket`);
  wanted.add(`${settings.names.subscriptionEventDuration}_bucket`);
  let history: Snapshot[] = [];
  let lastGood: Date | undefined;
  const series = new Map<string, (number | null)[]>();
  const rows = new Map<string, any>();
  const status = document.getElementById('status');
  const originalTitle = document.title;

  function element(tag: string, className?: string, text?: string): any {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function record(key: string, value: number | null): (number | null)[] {
    let values = series.get(key);
    if (!values) series.set(key, (values = []));
    values.push(value);
    if (values.length > settings.points) values.splice(0, values.length - settings.points);
    return values;
  }

  /** A number and a sparkline of one or more series (drawn on one scale), appended to `cell`. */
  function chartIn(cell: any, label: string): any {
    const value = element('span', 'value', '–');
    const svg = document.createElementNS(SVG, 'svg');
    svg.setAttribute('viewBox', `0 0 ${WIDTH} ${HEIGHT}`);
    svg.setAttribute('preserveAspectRatio', 'none');
    svg.setAttribute('class', 'spark');
    svg.setAttribute('role', 'img');
    svg.setAttribute('aria-label', label);
    cell.append(value, svg);
    return { cell, value, svg };
  }

  function chartCell(label: string, className = 'chart'): any {
    return chartIn(element('td', className), label);
  }

  function draw(chart: any, text: string, lines: (number | null)[][], top: number, alarm = false): void {
    chart.value.textContent = text;
    chart.cell.classList.toggle('alarm', alarm);
    let highest = top;
    for (const line of lines) for (const v of line) if (v !== null && v > highest) highest = v;
    const paths = lines.map((line, index) => {
      const path = document.createElementNS(SVG, 'path');
      path.setAttribute('d', sparklinePath(line, settings.points, WIDTH, HEIGHT - 1, highest));
      path.setAttribute('class', `line line-${index}`);
      return path;
    });
    chart.svg.replaceChildren(...paths);
  }

  function rowFor(kind: string, name: string, body: any, build: (tr: any) => any): any {
    // JSON keeps keys apart whatever a client named its operation: `[kind, name]` is never a prefix of another.
    const key = JSON.stringify([kind, name]);
    let row = rows.get(key);
    if (!row) {
      const tr = element('tr');
      tr.dataset.name = name;
      const th = element('th', 'name', name);
      th.scope = 'row';
      tr.append(th);
      row = { tr, seen: true, ...build(tr) };
      rows.set(key, row);
    }
    row.seen = true;
    body.append(row.tr);
    return row;
  }

  function renderSubgraphs(view: DashboardView): void {
    const body = document.querySelector('#subgraphs tbody');
    for (const subgraph of view.subgraphs) {
      const row = rowFor('subgraph', subgraph.name, body, (tr) => {
        const circuit = element('td', 'circuit');
        const badge = element('span', 'badge');
        circuit.append(badge);
        const rate = chartCell(`requests per second to ${subgraph.name}`);
        const errors = chartCell(`error share of calls to ${subgraph.name}`);
        const latency = chartCell(`p50 and p99 latency of ${subgraph.name}`, 'chart latency');
        const cache = chartCell(`section cache hit ratio of ${subgraph.name}`);
        tr.append(circuit, rate.cell, errors.cell, latency.cell, cache.cell);
        return { badge, rate, errors, latency, cache };
      });
      const prefix = `${JSON.stringify(['subgraph', subgraph.name])}:`;
      row.badge.textContent = subgraph.circuit;
      row.badge.dataset.state = subgraph.circuit;
      row.tr.dataset.circuit = subgraph.circuit;
      draw(row.rate, formatRate(subgraph.requestRate), [record(`${prefix}rate`, subgraph.requestRate)], 1);
      draw(row.errors, formatPercent(subgraph.errorRate), [record(`${prefix}errors`, subgraph.errorRate)], 0.1, (subgraph.errorRate ?? 0) > 0);
      draw(
        row.latency,
        `${formatSeconds(subgraph.p50)} / ${formatSeconds(subgraph.p99)}`,
        [record(`${prefix}p50`, subgraph.p50), record(`${prefix}p99`, subgraph.p99)],
        0.01,
      );
      draw(row.cache, formatPercent(subgraph.cacheHitRatio), [record(`${prefix}cache`, subgraph.cacheHitRatio)], 1);
    }
    document.getElementById('subgraphs-empty').hidden = view.subgraphs.length > 0;
  }

  function renderOperations(view: DashboardView): void {
    const body = document.querySelector('#operations tbody');
    for (const operation of view.operations) {
      const row = rowFor('operation', operation.name, body, (tr) => {
        const rate = chartCell(`requests per second of ${operation.name}`);
        const inFlight = chartCell(`requests in flight of ${operation.name}`);
        const waiting = chartCell(`requests waiting in the queue of ${operation.name}`);
        const rejected = chartCell(`queue refusals per second of ${operation.name}`);
        tr.append(rate.cell, inFlight.cell, waiting.cell, rejected.cell);
        return { rate, inFlight, waiting, rejected };
      });
      const prefix = `${JSON.stringify(['operation', operation.name])}:`;
      draw(row.rate, formatRate(operation.requestRate), [record(`${prefix}rate`, operation.requestRate)], 1);
      draw(row.inFlight, formatCount(operation.inFlight), [record(`${prefix}inflight`, operation.inFlight)], 1);
      draw(row.waiting, formatCount(operation.waiting), [record(`${prefix}waiting`, operation.waiting)], 1, (operation.waiting ?? 0) > 0);
      draw(row.rejected, formatRate(operation.rejectedRate), [record(`${prefix}rejected`, operation.rejectedRate)], 1, (operation.rejectedRate ?? 0) > 0);
    }
    document.getElementById('operations-empty').hidden = view.operations.length > 0;
  }

  function renderSubscriptions(view: DashboardView): void {
    const body = document.querySelector('#subscriptions tbody');
    for (const subscription of view.subscriptions) {
      const row = rowFor('subscription', subscription.name, body, (tr) => {
        const open = chartCell(`subscriptions open of ${subscription.name}`);
        const events = chartCell(`events sent per second of ${subscription.name}`);
        const latency = chartCell(`p50 and p99 time to complete an event of ${subscription.name}`, 'chart latency');
        const dropped = chartCell(`events dropped per second of ${subscription.name}`);
        tr.append(open.cell, events.cell, latency.cell, dropped.cell);
        return { open, events, latency, dropped };
      });
      const prefix = `${JSON.stringify(['subscription', subscription.name])}:`;
      draw(row.open, formatCount(subscription.open), [record(`${prefix}open`, subscription.open)], 1);
      draw(row.events, formatRate(subscription.eventRate), [record(`${prefix}events`, subscription.eventRate)], 1);
      draw(
        row.latency,
        `${formatSeconds(subscription.p50)} / ${formatSeconds(subscription.p99)}`,
        [record(`${prefix}p50`, subscription.p50), record(`${prefix}p99`, subscription.p99)],
        0.01,
      );
      draw(row.dropped, formatRate(subscription.droppedRate), [record(`${prefix}dropped`, subscription.droppedRate)], 1, (subscription.droppedRate ?? 0) > 0);
    }
    document.getElementById('subscriptions-empty').hidden = view.subscriptions.length > 0;
  }

  /** Upstream subscriptions per subgraph: one item each on the line under the subscriptions table, created once, its text set in place. */
  const upstreamItems = new Map<string, any>();
  function renderUpstreams(view: DashboardView): void {
    const list = document.getElementById('upstreams-list');
    const shown = new Set<string>();
    for (const upstream of view.upstreams) {
      let item = upstreamItems.get(upstream.name);
      if (!item) {
        upstreamItems.set(upstream.name, (item = element('span', 'upstream')));
        item.dataset.name = upstream.name;
      }
      item.textContent = `${upstream.name} ${formatCount(upstream.open)}`;
      list.append(item);
      shown.add(upstream.name);
    }
    for (const [name, item] of upstreamItems) {
      if (shown.has(name)) continue;
      item.remove();
      upstreamItems.delete(name);
    }
    document.getElementById('upstreams').hidden = view.upstreams.length === 0;
  }

  const cards = new Map<string, any>();
  function renderCard(id: string, label: string, text: string, value: number | null, alarm = false): void {
    let chart = cards.get(id);
    if (!chart) cards.set(id, (chart = chartIn(document.getElementById(id), label)));
    draw(chart, text, [record(`${JSON.stringify(['card', id])}:`, value)], 1, alarm);
  }

  function render(view: DashboardView): void {
    for (const row of rows.values()) row.seen = false;
    renderCard('requests', 'requests per second at the router', formatRate(view.requestRate), view.requestRate);
    renderCard('partial', 'partial responses per second', formatRate(view.partialRate), view.partialRate, (view.partialRate ?? 0) > 0);
    renderSubgraphs(view);
    renderOperations(view);
    renderSubscriptions(view);
    renderUpstreams(view);
    // A subgraph or operation that left the metrics (a new router process behind the address) leaves the page too.
    for (const [key, row] of rows) {
      if (row.seen) continue;
      row.tr.remove();
      rows.delete(key);
      for (const name of series.keys()) if (name.startsWith(`${key}:`)) series.delete(name);
    }
  }

  function showStatus(state: 'live' | 'error', text: string): void {
    document.body.dataset.state = state;
    status.dataset.state = state;
    status.textContent = text;
    document.title = state === 'error' ? `${originalTitle} (metrics unreachable)` : originalTitle;
  }

  async function poll(): Promise<void> {
    try {
      const response = await fetch(settings.metricsUrl, { cache: 'no-store', headers: { accept: 'text/plain' }, signal: AbortSignal.timeout(Math.max(3000, settings.pollMs * 2)) });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const samples = math.parsePrometheus(await response.text()).filter((sample) => wanted.has(sample.name));
      const now: Snapshot = { at: performance.now(), samples };
      history = history.filter((snapshot) => now.at - snapshot.at <= settings.windowMs);
      render(math.computeView(history[0], now, settings.names));
      history.push(now);
      lastGood = new Date();
      const span = history.length > 1 ? `rates over the last ${Math.round((now.at - history[0].at) / 1000)} s` : 'rates from the next read on';
      showStatus('live', `Live · updated ${lastGood.toLocaleTimeString()} · ${span}`);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      const since = lastGood ? `numbers shown are from ${lastGood.toLocaleTimeString()}` : 'nothing read yet';
      showStatus('error', `Cannot read ${settings.metricsUrl} (${reason}): ${since}; retrying every ${settings.pollMs / 1000} s.`);
    } finally {
      setTimeout(poll, settings.pollMs);
    }
  }

  /** Top operations by client: a table redrawn whole (a few rows, read every operationsPollMs); text only. */
  async function pollOperations(): Promise<void> {
    try {
      const response = await fetch(settings.operationsUrl!, { cache: 'no-store', headers: { accept: 'application/json' }, signal: AbortSignal.timeout(5000) });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const rows = topOperationRows(await response.json());
      const body = document.querySelector('#clients tbody');
      body.replaceChildren(
        ...rows.map((row) => {
          const tr = element('tr');
          const th = element('th', 'name', row.client);
          th.scope = 'row';
          tr.append(th, element('td', 'operation', row.operation), element('td', 'value', row.count), element('td', 'seen', row.lastSeen));
          return tr;
        }),
      );
      document.getElementById('clients-empty').hidden = rows.length > 0;
    } catch {
      // The metrics status line says when the router is unreachable; the table keeps its last rows.
    } finally {
      setTimeout(pollOperations, settings.operationsPollMs);
    }
  }

  void poll();
  if (settings.operationsUrl) void pollOperations();
}

/** The functions the page embeds (prometheus-math.ts's, then this file's), in the order their source is written into its script. */
export const DASHBOARD_FUNCTIONS = [
  parsePrometheus,
  seriesKey,
  counterIncrease,
  windowBuckets,
  gaugeBy,
  quantileFromBuckets,
  circuitLabel,
  computeView,
  sparklinePath,
  formatRate,
  formatPercent,
  formatSeconds,
  formatCount,
  topOperationRows,
  runDashboard,
] as const;
