// The ops dashboard as ops see it, in a real headless Chromium: live subgraph, operation and subscription rows, the error state, who gets the page.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_FAULT_SETTINGS } from '../../subgraphs/index.js';
import { setPolicy } from '../../src/registry/policy-store.js';
import { SETTINGS_ELEMENT_ID } from '../../src/dashboard/dashboard-page.js';
import type { DashboardSettings } from '../../src/dashboard/dashboard-script.js';
import { computeView, parsePrometheus, type Snapshot } from '../../src/dashboard/prometheus-math.js';
import { databaseKind } from '../helpers/database.js';
import { eventually } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/stack.js';

/** Debian's Chromium (`apt-get install chromium`; .ci/run installs it), driven by playwright-core. */
const CHROMIUM = '/usr/bin/chromium';
/** Screenshots land here (git-ignored) for a person to look at. */
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));
// CI must run the browser test; a machine without Chromium skips it, saying why.
const browserMissing = !existsSync(CHROMIUM) && !process.env.CI;

const TRAFFIC = /* GraphQL */ `query DashboardTraffic { products(first: 3) { id name reviews { rating } inventory { inStock } } }`;
const BURST = /* GraphQL */ `query DashboardBurst { products(first: 1) { id } }`;
const WAIT = { timeout: 15_000 };
/** The demo's stock feed; each test subscribes under its own operation name, so its row starts fresh. */
const stockSubscription = (operation: string) => /* GraphQL */ `subscription ${operation} { inventoryChanged(productId: "2") { inStock } }`;

/** A subscription over SSE (`accept: text/event-stream`): wait for text in its stream, or leave. */
async function subscribeOverSse(url: string, query: string): Promise<{ until(pattern: RegExp): Promise<void>; leave(): Promise<void> }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify({ query }) });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  return {
    async until(pattern) {
      while (!pattern.test(text)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the stream ended before ${pattern}: ${text}`);
        text += decoder.decode(value, { stream: true });
      }
    },
    leave: () => reader.cancel(),
  };
}

describe(`ops dashboard (${databaseKind} database)`, () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  const dashboardUrl = (router = stack.router) => router.url.replace(/graphql$/, 'dashboard');

  describe('who gets the page', () => {
    it('serves a self-contained page outside production: HTML, never cached, a CSP that admits only its own script and style', async () => {
      const response = await fetch(dashboardUrl());
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(response.headers.get('cache-control')).toBe('no-store');
      const csp = response.headers.get('content-security-policy') ?? '';
      expect(csp).toMatch(/default-src 'none'/);
      expect(csp).toMatch(/script-src 'sha256-[\w+/=]+'(;|$)/);
      expect(csp).not.toContain('unsafe');
      expect(await response.text()).toContain('<title>Switchyard ops</title>');
    });

    it('answers 404 in production unless the dashboard setting turns it on', async () => {
      const production = await stack.startRouter({ nodeEnv: 'production', authMode: 'off' });
      expect((await fetch(dashboardUrl(production))).status).toBe(404);
      expect((await fetch(production.url.replace(/graphql$/, 'metrics'))).status).toBe(200);
      const enabled = await stack.startRouter({ nodeEnv: 'production', authMode: 'off', dashboard: true });
      expect((await fetch(dashboardUrl(enabled))).status).toBe(200);
      await Promise.all([production.close(), enabled.close()]);
    });
  });

  describe('top operations by client, from the operation registry', () => {
    it('lists the busiest clients with their most executed operations and counts, and no document text', async () => {
      for (let i = 0; i < 3; i++) await stack.query(TRAFFIC, { headers: { 'graphql-client-name': 'storefront', 'graphql-client-version': '2.0' } });
      await stack.query(BURST, { headers: { 'graphql-client-name': 'storefront', 'graphql-client-version': '2.1' } });
      await stack.query(BURST, { headers: { 'graphql-client-name': 'ops-script' } });
      type Top = { clients: { clientName: string; total: number; operations: { operationName: string; count: number }[] }[] };
      let top: Top | undefined;
      await eventually(
        async () => {
          const response = await fetch(`${dashboardUrl()}/operations`);
          top = (await response.json()) as Top;
          return response.status === 200 && top.clients.some((c) => c.clientName === 'storefront' && c.total === 4) && top.clients.some((c) => c.clientName === 'ops-script');
        },
        { what: 'the recorded operations to reach the ops page', timeoutMs: 20_000 },
      );
      const storefront = top!.clients.find((c) => c.clientName === 'storefront')!;
      // Both versions of the client summed; its busiest operation first.
      expect(storefront.operations.map(({ operationName, count }) => ({ operationName, count }))).toEqual([
        { operationName: 'DashboardTraffic', count: 3 },
        { operationName: 'DashboardBurst', count: 1 },
      ]);
      expect(top!.clients.indexOf(storefront)).toBeLessThan(top!.clients.findIndex((c) => c.clientName === 'ops-script'));
      expect(JSON.stringify(top)).not.toContain('products(');
    });
  });

  const inventoryAdmin = (route: string) => stack.subgraphs.inventory.running.url.replace(/\/graphql$/, `/admin/${route}`);
  /** Upstream subscriptions the inventory subgraph holds: a pushed change reaches the router only once it has one. */
  const upstreamsAtInventory = async () => ((await (await fetch(inventoryAdmin('subscriptions'))).json()) as { open: number }).open;
  /** A stock change of product 2, as the inventory subgraph's admin API makes one: every subscriber gets it. */
  const pushStock = async (inStock: number) => {
    const response = await fetch(inventoryAdmin('inventory'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ productId: '2', inStock }) });
    expect(response.status).toBe(200);
  };

  describe('subscriptions, as the page reads them', () => {
    it('counts an open subscription, its events out and their time to complete, and the upstream it holds; 0 once the client left', async () => {
      // The metric names the page itself reads (its settings block), over this router's /metrics.
      const html = await (await fetch(dashboardUrl())).text();
      const settings = JSON.parse(new RegExp(`<script type="application/json" id="${SETTINGS_ELEMENT_ID}">([\\s\\S]*?)</script>`).exec(html)![1]) as DashboardSettings;
      const read = async (): Promise<Snapshot> => ({ at: performance.now(), samples: parsePrometheus(await (await fetch(stack.router.url.replace(/graphql$/, 'metrics'))).text()) });
      const stream = await subscribeOverSse(stack.router.url, stockSubscription('DashboardStock'));
      try {
        await eventually(async () => (await upstreamsAtInventory()) === 1, { what: 'the inventory subgraph to hold the upstream subscription' });
        const before = await read();
        await pushStock(7);
        await stream.until(/"inStock":7/);
        const view = computeView(before, await read(), settings.names);
        const row = view.subscriptions.find((s) => s.name === 'DashboardStock');
        expect(row).toMatchObject({ open: 1, droppedRate: 0 });
        expect(row!.eventRate).toBeGreaterThan(0);
        expect(row!.p50).toBeGreaterThan(0);
        expect(row!.p99).toBeGreaterThanOrEqual(row!.p50!);
        expect(view.upstreams).toEqual([{ name: 'inventory', open: 1 }]);
      } finally {
        await stream.leave();
      }
      // The row stays at 0, as an operation's does; the upstream closes with its last client.
      await eventually(
        async () => {
          const view = computeView(undefined, await read(), settings.names);
          return view.subscriptions.find((s) => s.name === 'DashboardStock')?.open === 0 && view.upstreams[0]?.open === 0;
        },
        { what: 'the subscription and its upstream to end at the router' },
      );
    });
  });

  describe.skipIf(browserMissing)(`in a headless browser${browserMissing ? ` (skipped: no ${CHROMIUM}; apt-get install -y chromium)` : ''}`, () => {
    let userDataDir: string;
    let context: BrowserContext;
    let page: Page;
    /** Console errors and uncaught exceptions: a CSP violation or a script error shows up here. */
    const pageErrors: string[] = [];

    beforeAll(async () => {
      expect(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install -y chromium`).toBe(true);
      // The queue gauges exist only for operations with a capacity.
      await setPolicy(stack.db, 'DashboardBurst', { maxConcurrency: 1, queueLength: 3, maxWaitMs: 10_000 });
      await eventually(() => stack.router.policies.resolve('DashboardBurst').maxConcurrency === 1, { what: 'the DashboardBurst policy to reach the router' });
      userDataDir = await mkdtemp(path.join(tmpdir(), 'switchyard-chromium-'));
      context = await chromium.launchPersistentContext(userDataDir, {
        executablePath: CHROMIUM,
        headless: true,
        viewport: { width: 1280, height: 860 },
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      });
      page = context.pages()[0] ?? (await context.newPage());
      page.on('console', (message) => {
        if (message.type() === 'error') pageErrors.push(message.text());
      });
      page.on('pageerror', (error) => pageErrors.push(String(error)));
      await page.goto(dashboardUrl());
    }, 60_000);

    afterAll(async () => {
      await context?.close();
      if (userDataDir) await rm(userDataDir, { recursive: true, force: true });
      for (const { subgraph } of Object.values(stack.subgraphs)) subgraph.faults.set(DEFAULT_FAULT_SETTINGS);
    });

    type Table = 'subgraphs' | 'operations' | 'subscriptions';
    const row = (table: Table, name: string): Locator =>
      page.locator(`#${table} tbody tr`).filter({ has: page.getByRole('rowheader', { name, exact: true }) });
    /** A cell of a row once its text matches `pattern` (waits for the page's next reads). */
    const cellOnce = async (table: Table, name: string, column: number, pattern: RegExp): Promise<string> => {
      const cell = row(table, name).locator('td').nth(column).filter({ hasText: pattern });
      await cell.waitFor(WAIT);
      return cell.innerText();
    };
    // Columns after the row header. Subgraphs: circuit, calls, errors, latency. Operations: requests, in flight, waiting, rejected.
    // Subscriptions: open, events out, time to complete, dropped.
    const NONZERO = /[1-9]/;

    it('goes live and lists every subgraph with its circuit state', async () => {
      await page.getByRole('status').filter({ hasText: /^Live/ }).waitFor(WAIT);
      for (const name of ['product', 'reviews', 'inventory']) expect(await cellOnce('subgraphs', name, 0, /./)).toBe('closed');
      expect(await page.title()).toBe('Switchyard ops');
      expect(pageErrors).toEqual([]);
    });

    it('shows each subgraph’s call rate, error share and p50/p99 latency once traffic flows', async () => {
      // Half of inventory's answers fail: its row shows errors, and the responses missing it count as partial.
      stack.subgraphs.inventory.subgraph.faults.set({ errorRate: 0.5 });
      for (let i = 0; i < 20; i++) await stack.query(TRAFFIC);
      stack.subgraphs.inventory.subgraph.faults.set(DEFAULT_FAULT_SETTINGS);
      for (const name of ['product', 'reviews', 'inventory']) {
        expect(await cellOnce('subgraphs', name, 1, NONZERO)).toMatch(/^\d+(\.\d)?k?\/s$/);
        expect(await cellOnce('subgraphs', name, 3, /ms/)).toMatch(/^[\d.]+ m?s \/ [\d.]+ m?s$/);
      }
      expect(await cellOnce('subgraphs', 'inventory', 2, NONZERO)).toMatch(/%$/);
      expect(await cellOnce('subgraphs', 'product', 2, /%/)).toBe('0%');
      expect(await cellOnce('operations', 'DashboardTraffic', 0, NONZERO)).toMatch(/\/s$/);
      await page.locator('#requests').filter({ hasText: NONZERO }).waitFor(WAIT);
      await page.locator('#partial').filter({ hasText: NONZERO }).waitFor(WAIT);
      expect(await page.locator('#subgraphs .spark path').count()).toBeGreaterThanOrEqual(12);
      expect(pageErrors).toEqual([]);
    });

    it('shows an operation queue filling up: in flight, waiting, and the requests it turned away', async () => {
      // Capacity 1 and room for 3: six requests at once leave one running, three waiting, two refused.
      stack.subgraphs.product.subgraph.faults.set({ latencyMs: 700 });
      const burst = Promise.all(Array.from({ length: 6 }, () => stack.query(BURST)));
      try {
        // Both from one read of the page: a row where something waits behind the one running request.
        const busy = row('operations', 'DashboardBurst').filter({ has: page.locator('td:nth-of-type(3)', { hasText: NONZERO }) });
        await busy.waitFor(WAIT);
        const [inFlight, waiting] = await Promise.all([busy.locator('td').nth(1).innerText(), busy.locator('td').nth(2).innerText()]);
        expect(Number(inFlight)).toBe(1);
        expect(Number(waiting)).toBeGreaterThanOrEqual(1);
        await mkdir(ARTIFACTS, { recursive: true });
        await page.screenshot({ path: path.join(ARTIFACTS, 'dashboard.png'), fullPage: true });
      } finally {
        const answers = await burst;
        stack.subgraphs.product.subgraph.faults.set(DEFAULT_FAULT_SETTINGS);
        expect(answers.filter((a) => a.body.errors?.[0]?.extensions?.code === 'QUEUE_FULL')).toHaveLength(2);
      }
      expect(await cellOnce('operations', 'DashboardBurst', 3, NONZERO)).toMatch(/\/s$/);
      expect(await cellOnce('operations', 'DashboardBurst', 2, /^0$/)).toBe('0');
      expect(pageErrors).toEqual([]);
    }, 60_000);

    it('shows the top operations by client, read from the registry', async () => {
      await stack.query(TRAFFIC, { headers: { 'graphql-client-name': 'checkout-web' } });
      await eventually(async () => JSON.stringify(await (await fetch(`${dashboardUrl()}/operations`)).json()).includes('checkout-web'), {
        what: 'checkout-web to be recorded',
        timeoutMs: 20_000,
      });
      // The page reads the registry every 10 s; a reload reads it at once.
      await page.reload();
      const client = page.locator('#clients tbody tr').filter({ has: page.getByRole('rowheader', { name: /^checkout-web · 1$/ }) });
      await client.waitFor(WAIT);
      expect(await client.locator('td').allInnerTexts()).toEqual(['DashboardTraffic', '1', expect.any(String)]);
      expect(await page.locator('#clients-empty').isHidden()).toBe(true);
      expect(pageErrors).toEqual([]);
    });

    it('shows a subscribed operation: subscriptions open, events out, time to complete an event, the upstream per subgraph', async () => {
      const stream = await subscribeOverSse(stack.router.url, stockSubscription('DashboardWatch'));
      try {
        expect(await cellOnce('subscriptions', 'DashboardWatch', 0, /^1$/)).toBe('1');
        await eventually(async () => (await upstreamsAtInventory()) === 1, { what: 'the inventory subgraph to hold the upstream subscription' });
        await pushStock(9);
        await stream.until(/"inStock":9/);
        expect(await cellOnce('subscriptions', 'DashboardWatch', 1, NONZERO)).toMatch(/\/s$/);
        expect(await cellOnce('subscriptions', 'DashboardWatch', 2, /ms/)).toMatch(/^[\d.]+ m?s \/ [\d.]+ m?s$/);
        expect(await cellOnce('subscriptions', 'DashboardWatch', 3, /./)).toBe('0.0/s');
        await page.locator('#upstreams-list .upstream').filter({ hasText: /^inventory 1$/ }).waitFor(WAIT);
        expect(await page.locator('#subscriptions-empty').isHidden()).toBe(true);
        await mkdir(ARTIFACTS, { recursive: true });
        await page.screenshot({ path: path.join(ARTIFACTS, 'dashboard-subscriptions.png'), fullPage: true });
      } finally {
        await stream.leave();
      }
      // The client left: its row stays at 0, and the upstream it held closed.
      expect(await cellOnce('subscriptions', 'DashboardWatch', 0, /^0$/)).toBe('0');
      await page.locator('#upstreams-list .upstream').filter({ hasText: /^inventory 0$/ }).waitFor(WAIT);
      expect(pageErrors).toEqual([]);
    });

    it('says so, and greys the numbers out, when /metrics stops answering', async () => {
      await stack.router.close();
      const status = page.getByRole('status').filter({ hasText: /Cannot read \/metrics/ });
      await status.waitFor(WAIT);
      expect(await status.innerText()).toMatch(/numbers shown are from .+; retrying every 1 s/);
      expect(await page.locator('body').getAttribute('data-state')).toBe('error');
      expect(await page.title()).toBe('Switchyard ops (metrics unreachable)');
      // The last numbers stay visible (greyed out): ops still see what the router looked like.
      expect(await row('subgraphs', 'product').count()).toBe(1);
      await page.screenshot({ path: path.join(ARTIFACTS, 'dashboard-unreachable.png'), fullPage: true });
    });
  });
});
