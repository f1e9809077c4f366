// The ops dashboard's arithmetic over Prometheus metrics: parsing the text exposition format, counter increases and rates, error ratios, histogram quantiles, and the view the page draws.
//
// Every function here is self-contained (it calls only other functions of this file, and reads no
// module-level value and no import), because the dashboard page embeds their source text in its
// script (dashboard-script.ts lists them); the unit tests in prometheus-math.test.ts run them in Node.

/** One sample line of the Prometheus text exposition format. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of one successful read of the metrics endpoint, with its monotonic time in ms. */
export interface Snapshot {
  at: number;
  samples: Sample[];
}

/** The metric names the page reads (from src/telemetry/metric-names.ts, so the page and the exporter agree). */
export interface DashboardMetricNames {
  requests: string;
  partialResponses: string;
  subgraphRequests: string;
  subgraphDuration: string;
  circuitState: string;
  /** The section cache's look-ups (`{subgraph,type,result}`). */
  cacheRequests: string;
  queueInflight: string;
  queueWaiting: string;
  queueRejected: string;
  /** Client subscriptions open now (gauge, `{operation}`). */
  subscriptionsActive: string;
  /** Subscription events sent to clients, and not sent because a client had too many waiting (`{operation}`). */
  subscriptionEventsOut: string;
  subscriptionEventsDropped: string;
  /** Time to complete one subscription event with its entity fetches (histogram, `{operation}`). */
  subscriptionEventDuration: string;
  /** Upstream subscriptions open now (gauge, `{subgraph}`). */
  subscriptionUpstreams: string;
}

export type CircuitLabel = 'closed' | 'open' | 'half-open' | 'unknown';

export interface SubgraphRow {
  name: string;
  /** Calls per second over the window (every attempt counts); null without a previous read. */
  requestRate: number | null;
  /**
   * Share (0..1) of calls in the window that failed: outcomes other than `ok`, among those that said
   * something about the subgraph. `cancelled` (the client left, or a hedge's losing attempt) is left
   * out of both counts, as the circuit breaker leaves it out. Null when no call ended in the window.
   */
  errorRate: number | null;
  /** Latency percentiles over the window, in seconds; null when there was no call. */
  p50: number | null;
  p99: number | null;
  circuit: CircuitLabel;
  /** Share (0..1) of the section cache's look-ups in the window that it answered fresh; null when it had none. */
  cacheHitRatio: number | null;
}

export interface OperationRow {
  name: string;
  requestRate: number | null;
  /** Queue gauges: null for an operation that has no queue (no `max_concurrency` policy). */
  inFlight: number | null;
  waiting: number | null;
  /** Queue refusals per second (full, timeout, aborted); null without a previous read or without a queue. */
  rejectedRate: number | null;
}

/** One subscribed operation (the `operation` label of the subscription metrics). */
export interface SubscriptionRow {
  name: string;
  /** Client subscriptions open now; 0 once they all ended (the series stays, as a queue's does). */
  open: number | null;
  /** Events sent to clients per second: one event to three clients counts three. Null without a previous read. */
  eventRate: number | null;
  /** Time to complete an event (from the subgraph's event to its answer, entity fetches included) over the window, in seconds; null when none completed. */
  p50: number | null;
  p99: number | null;
  /** Events not sent per second (a slow client had too many waiting, or too many were being completed); null without a previous read. */
  droppedRate: number | null;
}

/** Upstream subscriptions open to one subgraph now, each shared by the clients with the same document, variables and token holder. */
export interface UpstreamRow {
  name: string;
  open: number;
}

export interface DashboardView {
  /** Length of the window the rates cover, in seconds (0 on the first read). */
  windowSeconds: number;
  requestRate: number | null;
  partialRate: number | null;
  subgraphs: SubgraphRow[];
  operations: OperationRow[];
  subscriptions: SubscriptionRow[];
  /** Only subgraphs that held an upstream subscription since the router started. */
  upstreams: UpstreamRow[];
}

/**
 * Parses the Prometheus text exposition format (version 0.0.4) into samples.
 * 1. `#` lines (HELP, TYPE) and blank lines carry no sample and are skipped.
 * 2. A sample is `name{label="value",...} value [timestamp]`; label values may escape `\\`, `\"` and
 *    `\n`, and may hold spaces, commas and braces, so labels are read character by character.
 * 3. Values are floats, or `NaN`, `+Inf`, `-Inf`. A line that does not parse is skipped, so one odd
 *    line cannot blank the page.
 */
export function parsePrometheus(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    let i = 0;
    while (i < line.length && line[i] !== '{' && line[i] !== ' ' && line[i] !== '\t') i++;
    const name = line.slice(0, i);
    if (name === '') continue;
    const labels: Record<string, string> = {};
    if (line[i] === '{') {
      i++;
      let ok = false;
      for (;;) {
        while (line[i] === ' ' || line[i] === ',') i++;
        if (line[i] === '}') {
          i++;
          ok = true;
          break;
        }
        const eq = line.indexOf('=', i);
        if (eq < 0 || line[eq + 1] !== '"') break;
        const key = line.slice(i, eq).trim();
        let value = '';
        let j = eq + 2;
        for (; j < line.length && line[j] !== '"'; j++) {
          if (line[j] === '\\' && j + 1 < line.length) {
            j++;
            value += line[j] === 'n' ? '\n' : line[j];
          } else value += line[j];
        }
        if (j >= line.length) break;
        labels[key] = value;
        i = j + 1;
      }
      if (!ok) continue;
    }
    const valueText = line.slice(i).trim().split(/\s+/)[0] ?? '';
    const value = valueText === '+Inf' ? Infinity : valueText === '-Inf' ? -Infinity : valueText === 'NaN' ? NaN : Number(valueText);
    if (valueText === '' || (Number.isNaN(value) && valueText !== 'NaN')) continue;
    samples.push({ name, labels, value });
  }
  return samples;
}

/** A stable identity for a label set (order of labels does not matter). */
export function seriesKey(labels: Record<string, string>): string {
  return JSON.stringify(
    Object.keys(labels)
      .sort()
      .map((key) => [key, labels[key]]),
  );
}

/**
 * How much the counter `metric` grew between two reads, summed per group (`groupBy` returns the
 * group of a series, or undefined to leave it out). A series missing from `before` started at 0
 * (prom-client creates a series on its first increment); a value that went down means the router
 * restarted, and the counter grew by its whole new value.
 */
export function counterIncrease(before: Sample[], after: Sample[], metric: string, groupBy: (labels: Record<string, string>) => string | undefined): Map<string, number> {
  const previous = new Map<string, number>();
  for (const sample of before) if (sample.name === metric) previous.set(seriesKey(sample.labels), sample.value);
  const increase = new Map<string, number>();
  for (const sample of after) {
    if (sample.name !== metric) continue;
    const group = groupBy(sample.labels);
    if (group === undefined) continue;
    const was = previous.get(seriesKey(sample.labels)) ?? 0;
    const grown = sample.value >= was ? sample.value - was : sample.value;
    increase.set(group, (increase.get(group) ?? 0) + grown);
  }
  return increase;
}

/**
 * The buckets of histogram `metric` as they grew between two reads, per value of `label`: each
 * bucket's increase (counterIncrease), so quantileFromBuckets describes the window, not the
 * process's whole life. Series without the label or without `le` are left out.
 */
export function windowBuckets(before: Sample[], after: Sample[], metric: string, label: string): Map<string, { le: number; count: number }[]> {
  const grown = counterIncrease(before, after, `${metric}_bucket`, (labels) => (labels[label] === undefined || labels.le === undefined ? undefined : JSON.stringify([labels[label], labels.le])));
  const buckets = new Map<string, { le: number; count: number }[]>();
  for (const [key, count] of grown) {
    const [group, le] = JSON.parse(key) as [string, string];
    const list = buckets.get(group) ?? [];
    list.push({ le: le === '+Inf' ? Infinity : Number(le), count });
    buckets.set(group, list);
  }
  return buckets;
}

/** The latest value of a gauge per value of `label`. */
export function gaugeBy(samples: Sample[], metric: string, label: string): Map<string, number> {
  const values = new Map<string, number>();
  for (const sample of samples) {
    if (sample.name !== metric) continue;
    const key = sample.labels[label];
    if (key !== undefined) values.set(key, sample.value);
  }
  return values;
}

/**
 * Estimates the `q` quantile (0..1) from cumulative histogram buckets (`le` upper bounds, `+Inf`
 * last), the way Prometheus's histogram_quantile does:
 * 1. The target rank is q × the total count (the `+Inf` bucket); no observation means no answer (null).
 * 2. The first bucket whose cumulative count reaches the rank holds the quantile.
 * 3. Within it, observations are assumed spread evenly: interpolate linearly between its lower bound
 *    (the previous bucket's `le`, or 0) and its `le`.
 * 4. A rank in the `+Inf` bucket cannot be interpolated: the highest finite bound is the answer.
 */
export function quantileFromBuckets(q: number, buckets: { le: number; count: number }[]): number | null {
  // Cumulative counts never decrease; a counter reset in one bucket and not the next must not make them.
  let highest = 0;
  const sorted = [...buckets]
    .sort((a, b) => a.le - b.le)
    .map((bucket) => ({ le: bucket.le, count: (highest = Math.max(highest, bucket.count)) }));
  const total = sorted.length ? sorted[sorted.length - 1].count : 0;
  if (!(total > 0)) return null;
  const rank = q * total;
  for (let i = 0; i < sorted.length; i++) {
    if (sorted[i].count < rank) continue;
    const lowerBound = i > 0 ? sorted[i - 1].le : 0;
    const lowerCount = i > 0 ? sorted[i - 1].count : 0;
    if (sorted[i].le === Infinity) return i > 0 ? lowerBound : null;
    const inBucket = sorted[i].count - lowerCount;
    if (inBucket <= 0) return lowerBound;
    return lowerBound + (sorted[i].le - lowerBound) * ((rank - lowerCount) / inBucket);
  }
  return null;
}

/** The breaker gauge's value as ops read it: 0 closed, 1 open, 2 half-open. */
export function circuitLabel(value: number | undefined): CircuitLabel {
  if (value === 0) return 'closed';
  if (value === 1) return 'open';
  if (value === 2) return 'half-open';
  return 'unknown';
}

/**
 * Everything the page shows, from two reads of the metrics: `before` (the oldest read still inside the
 * window, or undefined on the first read) and `after` (the latest). Rates are increases divided by
 * the time between the two reads; percentiles come from the histogram buckets' increases, so they
 * describe the window, not the process's whole life. Gauges come from `after` alone.
 */
export function computeView(before: Snapshot | undefined, after: Snapshot, names: DashboardMetricNames): DashboardView {
  const seconds = before ? (after.at - before.at) / 1000 : 0;
  const windowed = before !== undefined && seconds > 0;
  const increase = (metric: string, groupBy: (labels: Record<string, string>) => string | undefined) =>
    windowed ? counterIncrease(before.samples, after.samples, metric, groupBy) : new Map<string, number>();
  const rate = (grown: number | undefined) => (windowed ? (grown ?? 0) / seconds : null);
  const sum = (values: Map<string, number>) => [...values.values()].reduce((a, b) => a + b, 0);

  const calls = increase(names.subgraphRequests, (labels) => labels.subgraph);
  const settled = increase(names.subgraphRequests, (labels) => (labels.outcome === 'cancelled' ? undefined : labels.subgraph));
  const failed = increase(names.subgraphRequests, (labels) => (labels.outcome === 'ok' || labels.outcome === 'cancelled' ? undefined : labels.subgraph));
  const buckets = windowed ? windowBuckets(before.samples, after.samples, names.subgraphDuration, 'subgraph') : new Map<string, { le: number; count: number }[]>();
  const circuits = gaugeBy(after.samples, names.circuitState, 'subgraph');
  const cacheHits = increase(names.cacheRequests, (labels) => (labels.result === 'hit' ? labels.subgraph : undefined));
  const cacheLookups = increase(names.cacheRequests, (labels) => (labels.result === 'hit' || labels.result === 'miss' ? labels.subgraph : undefined));
  const subgraphNames = new Set<string>([...circuits.keys()]);
  for (const sample of after.samples) {
    if ((sample.name === names.subgraphRequests || sample.name === `${names.subgraphDuration}_count`) && sample.labels.subgraph !== undefined) subgraphNames.add(sample.labels.subgraph);
  }
  const subgraphs: SubgraphRow[] = [...subgraphNames].sort().map((name) => {
    const ended = settled.get(name) ?? 0;
    const histogram = buckets.get(name) ?? [];
    return {
      name,
      requestRate: rate(calls.get(name)),
      errorRate: windowed && ended > 0 ? (failed.get(name) ?? 0) / ended : null,
      p50: windowed ? quantileFromBuckets(0.5, histogram) : null,
      p99: windowed ? quantileFromBuckets(0.99, histogram) : null,
      circuit: circuitLabel(circuits.get(name)),
      cacheHitRatio: windowed && (cacheLookups.get(name) ?? 0) > 0 ? (cacheHits.get(name) ?? 0) / cacheLookups.get(name)! : null,
    };
  });

  const byOperation = (labels: Record<string, string>) => labels.operation;
  const requests = increase(names.requests, byOperation);
  const rejected = increase(names.queueRejected, byOperation);
  const inFlight = gaugeBy(after.samples, names.queueInflight, 'operation');
  const waiting = gaugeBy(after.samples, names.queueWaiting, 'operation');
  const operationNames = new Set<string>([...inFlight.keys(), ...waiting.keys()]);
  for (const sample of after.samples) {
    if ((sample.name === names.requests || sample.name === names.queueRejected) && sample.labels.operation !== undefined) operationNames.add(sample.labels.operation);
  }
  const queued = (name: string) => inFlight.has(name) || waiting.has(name) || rejected.has(name);
  const operations: OperationRow[] = [...operationNames].sort().map((name) => ({
    name,
    requestRate: rate(requests.get(name)),
    inFlight: inFlight.get(name) ?? null,
    waiting: waiting.get(name) ?? null,
    rejectedRate: queued(name) ? rate(rejected.get(name)) : null,
  }));

  // Subscriptions: listed like operations, from the gauge or a counter in the latest read.
  const open = gaugeBy(after.samples, names.subscriptionsActive, 'operation');
  const eventsOut = increase(names.subscriptionEventsOut, byOperation);
  const dropped = increase(names.subscriptionEventsDropped, byOperation);
  const eventBuckets = windowed ? windowBuckets(before.samples, after.samples, names.subscriptionEventDuration, 'operation') : new Map<string, { le: number; count: number }[]>();
  const subscribedNames = new Set<string>(open.keys());
  for (const sample of after.samples) {
    if ((sample.name === names.subscriptionEventsOut || sample.name === names.subscriptionEventsDropped) && sample.labels.operation !== undefined) subscribedNames.add(sample.labels.operation);
  }
  const subscriptions: SubscriptionRow[] = [...subscribedNames].sort().map((name) => ({
    name,
    open: open.get(name) ?? null,
    eventRate: rate(eventsOut.get(name)),
    p50: windowed ? quantileFromBuckets(0.5, eventBuckets.get(name) ?? []) : null,
    p99: windowed ? quantileFromBuckets(0.99, eventBuckets.get(name) ?? []) : null,
    droppedRate: rate(dropped.get(name)),
  }));
  const upstreamsOpen = gaugeBy(after.samples, names.subscriptionUpstreams, 'subgraph');
  const upstreams: UpstreamRow[] = [...upstreamsOpen.keys()].sort().map((name) => ({ name, open: upstreamsOpen.get(name)! }));

  return {
    windowSeconds: windowed ? seconds : 0,
    requestRate: rate(sum(increase(names.requests, () => ''))),
    partialRate: rate(sum(increase(names.partialResponses, () => ''))),
    subgraphs,
    operations,
    subscriptions,
    upstreams,
  };
}
