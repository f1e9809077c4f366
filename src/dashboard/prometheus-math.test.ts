// Unit tests of the dashboard's Prometheus arithmetic: text parsing, counter increases and rates, error ratios, histogram quantiles, the view.
import { describe, expect, it } from 'vitest';
import { METRIC } from '../telemetry/metric-names.js';
import { computeView, counterIncrease, gaugeBy, parsePrometheus, quantileFromBuckets, seriesKey, windowBuckets, type DashboardMetricNames, type Snapshot } from './prometheus-math.js';

const names: DashboardMetricNames = {
  requests: METRIC.requests,
  partialResponses: METRIC.partialResponses,
  subgraphRequests: METRIC.subgraphRequests,
  subgraphDuration: METRIC.subgraphDuration,
  circuitState: METRIC.circuitState,
  cacheRequests: METRIC.cacheRequests,
  queueInflight: METRIC.queueInflight,
  queueWaiting: METRIC.queueWaiting,
  queueRejected: METRIC.queueRejected,
  subscriptionsActive: METRIC.subscriptionsActive,
  subscriptionEventsOut: METRIC.subscriptionEventsOut,
  subscriptionEventsDropped: METRIC.subscriptionEventsDropped,
  subscriptionEventDuration: METRIC.subscriptionEventDuration,
  subscriptionUpstreams: METRIC.subscriptionUpstreams,
};

describe('parsePrometheus', () => {
  it('reads names, labels and values, and skips comments and blank lines', () => {
    const text = [
      '# HELP switchyard_requests_total GraphQL requests.',
      '# TYPE switchyard_requests_total counter',
      'switchyard_requests_total{operation="ProductPage",status="200"} 12',
      '',
      'switchyard_schema_version 3',
      'switchyard_x_bucket{le="+Inf",subgraph="product"} 7 1700000000000',
      'switchyard_y{a="1"} NaN',
      'switchyard_z -Inf',
      'switchyard_e 1.5e-3',
    ].join('\n');
    expect(parsePrometheus(text)).toEqual([
      { name: 'switchyard_requests_total', labels: { operation: 'ProductPage', status: '200' }, value: 12 },
      { name: 'switchyard_schema_version', labels: {}, value: 3 },
      { name: 'switchyard_x_bucket', labels: { le: '+Inf', subgraph: 'product' }, value: 7 },
      { name: 'switchyard_y', labels: { a: '1' }, value: NaN },
      { name: 'switchyard_z', labels: {}, value: -Infinity },
      { name: 'switchyard_e', labels: {}, value: 0.0015 },
    ]);
  });

  it('reads escaped label values holding quotes, backslashes, newlines, commas, braces and spaces', () => {
    const [sample] = parsePrometheus('m{operation="a \\"b\\", {c} \\\\ d\\ne",x="y"} 1\n');
    expect(sample.labels).toEqual({ operation: 'a "b", {c} \\ d\ne', x: 'y' });
    expect(sample.value).toBe(1);
  });

  it('skips a malformed line instead of failing the whole read', () => {
    const samples = parsePrometheus('good 1\nbad{a="unterminated 2\nnovalue{a="b"}\nworse abc\nalso_good{a="b",} 4\r\n');
    expect(samples).toEqual([
      { name: 'good', labels: {}, value: 1 },
      { name: 'also_good', labels: { a: 'b' }, value: 4 },
    ]);
  });
});

describe('counterIncrease', () => {
  const before = parsePrometheus('c{s="a",o="ok"} 10\nc{s="a",o="timeout"} 2\nc{s="b",o="ok"} 100\n');

  it('sums the growth of each series per group; a new series grew from 0', () => {
    const after = parsePrometheus('c{o="ok",s="a"} 15\nc{s="a",o="timeout"} 3\nc{s="b",o="ok"} 100\nc{s="b",o="http_error"} 4\n');
    expect(counterIncrease(before, after, 'c', (l) => l.s)).toEqual(new Map([['a', 6], ['b', 4]]));
    expect(counterIncrease(before, after, 'c', (l) => (l.o === 'ok' ? undefined : l.s))).toEqual(new Map([['a', 1], ['b', 4]]));
  });

  it('treats a value that went down as a restart: the counter grew by its new value', () => {
    const after = parsePrometheus('c{s="a",o="ok"} 4\n');
    expect(counterIncrease(before, after, 'c', (l) => l.s).get('a')).toBe(4);
  });
});

describe('windowBuckets', () => {
  it('gives each group the growth of its buckets between two reads, leaving out series without the label', () => {
    const before = parsePrometheus('h_bucket{le="0.1",op="a"} 5\nh_bucket{le="+Inf",op="a"} 6\n');
    const after = parsePrometheus('h_bucket{le="0.1",op="a"} 7\nh_bucket{le="+Inf",op="a"} 10\nh_bucket{le="+Inf",op="b"} 1\nh_bucket{le="+Inf"} 9\nh_count{op="a"} 10\n');
    expect(windowBuckets(before, after, 'h', 'op')).toEqual(
      new Map([
        ['a', [{ le: 0.1, count: 2 }, { le: Infinity, count: 4 }]],
        ['b', [{ le: Infinity, count: 1 }]],
      ]),
    );
  });
});

describe('quantileFromBuckets', () => {
  const buckets = (counts: [number, number][]) => counts.map(([le, count]) => ({ le, count }));

  it('interpolates linearly inside the bucket that holds the rank', () => {
    // 100 observations: 50 at most 10 ms, 90 at most 50 ms, all at most 100 ms.
    const b = buckets([
      [0.01, 50],
      [0.05, 90],
      [0.1, 100],
      [Infinity, 100],
    ]);
    expect(quantileFromBuckets(0.5, b)).toBeCloseTo(0.01);
    expect(quantileFromBuckets(0.7, b)).toBeCloseTo(0.03);
    expect(quantileFromBuckets(0.99, b)).toBeCloseTo(0.095);
    expect(quantileFromBuckets(0.25, b)).toBeCloseTo(0.005);
  });

  it('answers the highest finite bound for a rank in the +Inf bucket, and null without observations', () => {
    expect(quantileFromBuckets(0.99, buckets([[0.5, 1], [1, 2], [Infinity, 10]]))).toBe(1);
    expect(quantileFromBuckets(0.5, buckets([[0.5, 0], [Infinity, 0]]))).toBeNull();
    expect(quantileFromBuckets(0.5, [])).toBeNull();
  });

  it('accepts buckets in any order and never lets a cumulative count go down', () => {
    const b = buckets([
      [Infinity, 4],
      [0.1, 4],
      [0.05, 5],
    ]);
    expect(quantileFromBuckets(0.5, b)).toBeCloseTo(0.025);
    expect(b[0]).toEqual({ le: Infinity, count: 4 });
  });
});

describe('computeView', () => {
  const histogram = (subgraph: string, counts: number[]) =>
    [0.01, 0.1, '+Inf'].map((le, i) => `${METRIC.subgraphDuration}_bucket{le="${le}",subgraph="${subgraph}"} ${counts[i]}`).join('\n');
  const first: Snapshot = {
    at: 1_000,
    samples: parsePrometheus(
      [
        `${METRIC.requests}{operation="ProductPage",status="200"} 100`,
        `${METRIC.subgraphRequests}{subgraph="product",outcome="ok"} 100`,
        histogram('product', [80, 100, 100]),
        `${METRIC.circuitState}{subgraph="product"} 0`,
        `${METRIC.circuitState}{subgraph="inventory"} 0`,
        `${METRIC.queueInflight}{operation="ProductPage"} 0`,
        `${METRIC.queueWaiting}{operation="ProductPage"} 0`,
      ].join('\n'),
    ),
  };
  const second: Snapshot = {
    at: 11_000,
    samples: parsePrometheus(
      [
        `${METRIC.requests}{operation="ProductPage",status="200"} 140`,
        `${METRIC.requests}{operation="ProductPage",status="503"} 10`,
        `${METRIC.requests}{operation="(anonymous)",status="200"} 10`,
        `${METRIC.partialResponses}{operation="ProductPage"} 5`,
        `${METRIC.subgraphRequests}{subgraph="product",outcome="ok"} 140`,
        `${METRIC.subgraphRequests}{subgraph="inventory",outcome="ok"} 30`,
        `${METRIC.subgraphRequests}{subgraph="inventory",outcome="timeout"} 10`,
        `${METRIC.subgraphRequests}{subgraph="inventory",outcome="cancelled"} 5`,
        histogram('product', [80, 120, 140]),
        histogram('inventory', [0, 30, 40]),
        `${METRIC.circuitState}{subgraph="product"} 0`,
        `${METRIC.circuitState}{subgraph="inventory"} 2`,
        `${METRIC.queueInflight}{operation="ProductPage"} 4`,
        `${METRIC.queueWaiting}{operation="ProductPage"} 7`,
        `${METRIC.queueRejected}{operation="ProductPage",reason="full"} 15`,
        `${METRIC.queueRejected}{operation="ProductPage",reason="timeout"} 5`,
        `${METRIC.cacheRequests}{subgraph="product",type="Query",result="hit"} 30`,
        `${METRIC.cacheRequests}{subgraph="product",type="Query",result="miss"} 10`,
        `${METRIC.cacheRequests}{subgraph="product",type="Query",result="bypass"} 99`,
      ].join('\n'),
    ),
  };

  it('gives rates, error shares and percentiles over the window between two reads; a cancelled call is no error', () => {
    const view = computeView(first, second, names);
    expect(view.windowSeconds).toBe(10);
    expect(view.requestRate).toBe(6);
    expect(view.partialRate).toBe(0.5);
    expect(view.subgraphs.map((s) => s.name)).toEqual(['inventory', 'product']);
    const [inventory, product] = view.subgraphs;
    // 45 calls: 30 ok, 10 timed out, 5 cancelled (hedge losers), which tell nothing about inventory's health.
    expect(inventory).toMatchObject({ requestRate: 4.5, errorRate: 0.25, circuit: 'half-open' });
    // Window: 0 under 10 ms, 30 under 100 ms, 10 beyond (+Inf): p50 is in (10 ms, 100 ms], p99 beyond the last bound.
    expect(inventory.p50).toBeCloseTo(0.01 + 0.09 * (20 / 30));
    expect(inventory.p99).toBe(0.1);
    // Only the window counts: the 80 fast calls before it are not in product's percentiles.
    expect(product).toMatchObject({ requestRate: 4, errorRate: 0, circuit: 'closed' });
    expect(product.p50).toBeCloseTo(0.01 + 0.09 * (20 / 20));
    // Of 40 look-ups the cache answered 30; a bypass (private part, anonymous viewer) is no look-up.
    expect(product.cacheHitRatio).toBe(0.75);
    expect(inventory.cacheHitRatio).toBeNull();
    expect(view.operations).toEqual([
      { name: '(anonymous)', requestRate: 1, inFlight: null, waiting: null, rejectedRate: null },
      { name: 'ProductPage', requestRate: 5, inFlight: 4, waiting: 7, rejectedRate: 2 },
    ]);
  });

  it('shows gauges but no rate on the first read', () => {
    const view = computeView(undefined, second, names);
    expect(view).toMatchObject({ windowSeconds: 0, requestRate: null, partialRate: null });
    expect(view.subgraphs[0]).toEqual({ name: 'inventory', requestRate: null, errorRate: null, p50: null, p99: null, circuit: 'half-open', cacheHitRatio: null });
    expect(view.operations[1]).toEqual({ name: 'ProductPage', requestRate: null, inFlight: 4, waiting: 7, rejectedRate: null });
  });

  describe('subscriptions', () => {
    const eventHistogram = (operation: string, counts: number[]) =>
      [0.01, 0.1, '+Inf'].map((le, i) => `${METRIC.subscriptionEventDuration}_bucket{le="${le}",operation="${operation}"} ${counts[i]}`).join('\n');
    const opened: Snapshot = {
      at: 1_000,
      samples: parsePrometheus(
        [
          `${METRIC.subscriptionsActive}{operation="Stock"} 2`,
          `${METRIC.subscriptionEventsOut}{operation="Stock"} 10`,
          eventHistogram('Stock', [5, 5, 5]),
          `${METRIC.subscriptionsActive}{operation="Ended"} 1`,
          `${METRIC.subscriptionEventsOut}{operation="Ended"} 4`,
          `${METRIC.subscriptionUpstreams}{subgraph="inventory"} 1`,
        ].join('\n'),
      ),
    };
    const later: Snapshot = {
      at: 11_000,
      samples: parsePrometheus(
        [
          `${METRIC.subscriptionsActive}{operation="Stock"} 3`,
          `${METRIC.subscriptionEventsOut}{operation="Stock"} 40`,
          `${METRIC.subscriptionEventsDropped}{operation="Stock"} 5`,
          eventHistogram('Stock', [15, 25, 25]),
          `${METRIC.subscriptionsActive}{operation="Ended"} 0`,
          `${METRIC.subscriptionEventsOut}{operation="Ended"} 4`,
          `${METRIC.subscriptionUpstreams}{subgraph="reviews"} 0`,
          `${METRIC.subscriptionUpstreams}{subgraph="inventory"} 1`,
        ].join('\n'),
      ),
    };

    it('gives each subscribed operation its open count, events out and dropped per second, and p50/p99 time to complete an event over the window', () => {
      const view = computeView(opened, later, names);
      // Window: 10 events under 10 ms, 10 in (10 ms, 100 ms]; the 5 fast ones before it do not count.
      const [ended, stock] = view.subscriptions;
      expect(stock).toMatchObject({ name: 'Stock', open: 3, eventRate: 3, droppedRate: 0.5 });
      expect(stock.p50).toBeCloseTo(0.01);
      expect(stock.p99).toBeCloseTo(0.01 + 0.09 * (9.8 / 10));
      // An operation whose subscriptions all ended stays, at 0, as an operation's row stays.
      expect(ended).toEqual({ name: 'Ended', open: 0, eventRate: 0, p50: null, p99: null, droppedRate: 0 });
      expect(view.upstreams).toEqual([
        { name: 'inventory', open: 1 },
        { name: 'reviews', open: 0 },
      ]);
    });

    it('shows open subscriptions and upstreams but no rate or percentile on the first read', () => {
      const view = computeView(undefined, later, names);
      expect(view.subscriptions[1]).toEqual({ name: 'Stock', open: 3, eventRate: null, p50: null, p99: null, droppedRate: null });
      expect(view.upstreams).toHaveLength(2);
    });

    it('has no subscription row and no upstream where nothing subscribed', () => {
      const view = computeView(first, second, names);
      expect(view.subscriptions).toEqual([]);
      expect(view.upstreams).toEqual([]);
    });
  });

  it('lists a subgraph known only by its breaker, with no error share while it has no call', () => {
    const view = computeView(first, { at: 2_000, samples: first.samples }, names);
    expect(view.subgraphs.find((s) => s.name === 'inventory')).toEqual({ name: 'inventory', requestRate: 0, errorRate: null, p50: null, p99: null, circuit: 'closed', cacheHitRatio: null });
  });
});

describe('seriesKey and gaugeBy', () => {
  it('identifies a label set whatever the order of its labels', () => {
    expect(seriesKey({ a: '1', b: '2' })).toBe(seriesKey({ b: '2', a: '1' }));
    expect(seriesKey({ a: '1' })).not.toBe(seriesKey({ a: '1', b: '' }));
  });

  it('reads the latest value of a gauge per label value, leaving out series without the label and other metrics', () => {
    const samples = parsePrometheus('g{subgraph="a"} 1\ng{subgraph="b"} 2\ng 9\nother{subgraph="a"} 5\n');
    expect(gaugeBy(samples, 'g', 'subgraph')).toEqual(new Map([['a', 1], ['b', 2]]));
  });
});
