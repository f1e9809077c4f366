// GraphiQL as client teams meet it: served by the router alone (no CDN), opening on the demo's product page (and beside it, the page with its reviews deferred and the stock subscription), checked over HTTP and in a real headless Chromium.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemo, type RunningDemo } from '../../src/cli/demo.js';
import { startRouter } from '../../src/cli/start-router.js';
import { mintDevToken } from '../../src/security/authentication/dev-token.js';
import type { FaultSettings } from '../../subgraphs/kit/fault-switch.js';
import { createTestStore, databaseKind, type TestStore } from '../helpers/database.js';
import { eventually } from '../helpers/http.js';
import { readMetric, testConfig } from '../helpers/stack.js';

/** Debian's Chromium (`apt-get install chromium`; .ci/run installs it), driven by playwright-core. */
const CHROMIUM = '/usr/bin/chromium';
/** Screenshots land here (git-ignored) for a person to look at. */
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));
// CI must run the browser test; a machine without Chromium skips it, saying why.
const browserMissing = !existsSync(CHROMIUM) && !process.env.CI;

const WAIT = { timeout: 20_000 };
const IMMUTABLE = 'public, max-age=31536000, immutable';
const VERSIONED = /^\/graphiql\/\d+\.\d+\.\d+-[0-9a-f]{12}\//;

/** What a browser asks for when it opens the endpoint. */
const openAsBrowser = (url: string) => fetch(url, { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });

/** An editor's text as a person reads it: Monaco renders spaces as no-break spaces and wraps long lines. */
const readable = (text: string) => text.replace(/\u00a0/g, ' ').replace(/\s+/g, ' ');

/** Product 2 of the demo data, which both tabs ask for, and the body of one of its reviews. */
const PRODUCT_NAME = 'Quiet Bamboo Stool';
const REVIEW_BODY = 'Does the job. Looks great in the living room.';

/** Changes a demo subgraph's fault switch through its admin API (subgraphs/kit/admin-api.ts), as an operator would. */
async function setFaults(subgraphUrl: string, patch: Partial<FaultSettings>): Promise<void> {
  const response = await fetch(new URL('/admin/faults', subgraphUrl), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(patch) });
  expect(response.status, await response.text()).toBe(200);
}

/** Pushes a stock change through the inventory subgraph's admin API; every subscription watching the product gets it. */
async function pushStock(inventoryUrl: string, productId: string, inStock: number): Promise<void> {
  const response = await fetch(new URL('/admin/inventory', inventoryUrl), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ productId, inStock }) });
  expect(response.status).toBe(200);
  // Reached the one subscription the router holds upstream, so the event cannot have been lost on the way.
  expect(((await response.json()) as { delivered: number }).delivered).toBe(1);
}

/** Subscriptions open at the inventory subgraph (the router's upstream ones). */
async function openAtInventory(inventoryUrl: string): Promise<number> {
  return ((await (await fetch(new URL('/admin/subscriptions', inventoryUrl))).json()) as { open: number }).open;
}

/** The CSP as directive → sources. */
function directives(csp: string): Record<string, string[]> {
  return Object.fromEntries(
    csp
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .filter((d) => d[0])
      .map(([name, ...sources]) => [name, sources]),
  );
}

/** Every path the page links (src, href) and the editor worker URLs in its settings block. */
function linkedPaths(html: string): string[] {
  const attributes = [...html.matchAll(/\s(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
  const settings = JSON.parse(/<script type="application\/json" id="graphiql-settings">([\s\S]*?)<\/script>/.exec(html)![1]);
  return [...attributes, ...Object.values<string>(settings.workers)];
}

describe(`GraphiQL (${databaseKind} database)`, () => {
  let store: TestStore;
  let demo: RunningDemo;
  beforeAll(async () => {
    store = await createTestStore();
    // No stock moves of its own: only the test's pushes reach the subscription tab.
    demo = await startDemo({ config: testConfig(store), subgraphPortBase: 0, subgraphEnv: { INVENTORY_TICK_MS: '0' } });
  });
  afterAll(async () => {
    await demo?.close();
    await store?.destroy();
  });

  describe('over HTTP', () => {
    it('answers a browser at /graphql with a page that is never cached and whose CSP admits only its own origin', async () => {
      const response = await openAsBrowser(demo.router.url);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      const csp = directives(response.headers.get('content-security-policy') ?? '');
      expect(csp).toMatchObject({
        'default-src': ["'none'"],
        'script-src': ["'self'"],
        'worker-src': ["'self'"],
        'connect-src': ["'self'"],
        'frame-ancestors': ["'none'"],
      });
      // No host, scheme wildcard or blob: anywhere: only the page's origin (and data: fonts and icons).
      for (const sources of Object.values(csp)) for (const source of sources) expect(["'none'", "'self'", "'unsafe-inline'", 'data:']).toContain(source);
      expect(csp['style-src']).toEqual(["'self'", "'unsafe-inline'"]);
      const html = await response.text();
      expect(html).toContain('<title>Switchyard</title>');
      for (const linked of linkedPaths(html)) expect(linked).toMatch(VERSIONED);
    });

    it('serves every file the page links from the router, with its content type and immutable caching', async () => {
      const html = await (await openAsBrowser(demo.router.url)).text();
      const expected: Record<string, RegExp> = { '.js': /^text\/javascript; charset=utf-8$/, '.css': /^text\/css; charset=utf-8$/, '.ico': /^image\// };
      const paths = linkedPaths(html);
      expect(paths.map((p) => path.extname(p)).sort()).toEqual(['.css', '.ico', '.js', '.js', '.js', '.js', '.js']);
      for (const linked of paths) {
        const response = await fetch(new URL(linked, demo.router.url));
        expect(response.status, linked).toBe(200);
        expect(response.headers.get('content-type'), linked).toMatch(expected[path.extname(linked)]);
        expect(response.headers.get('cache-control'), linked).toBe(IMMUTABLE);
        expect((await response.arrayBuffer()).byteLength, linked).toBeGreaterThan(0);
      }
    });

    it('answers 404 for a file of another version (an old page after an upgrade reloads, it never mixes versions)', async () => {
      const response = await fetch(new URL('/graphiql/0.0.0-000000000000/graphiql.js', demo.router.url));
      expect(response.status).toBe(404);
      expect(response.headers.get('cache-control')).not.toBe(IMMUTABLE);
    });

    it('shows no GraphiQL in production (page nor files) unless SWITCHYARD_GRAPHIQL turns it on', async () => {
      const html = await (await openAsBrowser(demo.router.url)).text();
      const script = linkedPaths(html).find((p) => p.endsWith('/graphiql.js'))!;
      const production = await startRouter({ config: testConfig(store, { nodeEnv: 'production', authMode: 'off' }) });
      const enabled = await startRouter({ config: testConfig(store, { nodeEnv: 'production', authMode: 'off', graphiql: true }) });
      try {
        // Every body is read: an unread one keeps its connection busy, and the router's drain waits for it.
        const page = await openAsBrowser(production.url);
        expect(page.headers.get('content-type')).not.toMatch(/text\/html/);
        expect(await page.text()).not.toContain('<html');
        const file = await fetch(new URL(script, production.url));
        expect(file.status).toBe(404);
        await file.arrayBuffer();

        const shown = await openAsBrowser(enabled.url);
        expect(shown.status).toBe(200);
        expect(shown.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
        // Production accepts no development tokens: the page does not suggest minting one.
        expect(await shown.text()).not.toContain('token mint');
        const served = await fetch(new URL(script, enabled.url));
        expect(served.headers.get('cache-control')).toBe(IMMUTABLE);
        await served.arrayBuffer();
      } finally {
        await Promise.all([production.close(), enabled.close()]);
      }
    });
  });

  describe.skipIf(browserMissing)(`in a headless browser${browserMissing ? ` (skipped: no ${CHROMIUM}; apt-get install -y chromium)` : ''}`, () => {
    let userDataDir: string;
    let context: BrowserContext;
    let page: Page;
    /** Every request the page or its workers made to another origin (local ones are let through, the rest blocked). */
    const foreign: string[] = [];
    /** Console errors and uncaught exceptions: a CSP violation or a script error shows up here. */
    const pageErrors: string[] = [];

    beforeAll(async () => {
      expect(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install -y chromium`).toBe(true);
      const origin = new URL(demo.router.url).origin;
      userDataDir = await mkdtemp(path.join(tmpdir(), 'switchyard-chromium-'));
      context = await chromium.launchPersistentContext(userDataDir, {
        executablePath: CHROMIUM,
        headless: true,
        viewport: { width: 1400, height: 900 },
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      });
      // As on a machine without internet access: only this machine answers.
      await context.route('**/*', (route) => {
        const { hostname } = new URL(route.request().url());
        return ['127.0.0.1', 'localhost', '[::1]'].includes(hostname) ? route.continue() : route.abort('internetdisconnected');
      });
      // Seen for the page and its workers alike, blocked or not.
      context.on('request', (request) => {
        const url = new URL(request.url());
        if (url.protocol !== 'data:' && url.protocol !== 'blob:' && url.origin !== origin) foreign.push(request.url());
      });
      page = context.pages()[0] ?? (await context.newPage());
      page.on('console', (message) => {
        if (message.type() === 'error') pageErrors.push(message.text());
      });
      page.on('pageerror', (error) => pageErrors.push(String(error)));
      await page.goto(demo.router.url);
    }, 60_000);

    afterAll(async () => {
      await context?.close();
      if (userDataDir) await rm(userDataDir, { recursive: true, force: true });
    });

    const region = (name: string) => page.getByRole('region', { name, exact: true });
    /** A GraphiQL tab by its title (the operation's name), selected or not. */
    const tab = (title: string, selected?: boolean) => page.getByRole('tab', { selected }).filter({ has: page.getByRole('button', { name: title, exact: true }) });
    /**
     * Selects a tab from the keyboard: its button focused, then Enter. Not a click: GraphiQL's tabs can be
     * dragged to reorder them (framer-motion), and every tab but the last carries a stale translateX that
     * GraphiQL's CSS hides until the tab has focus; the mousedown focuses it, the tab jumps from under
     * the pointer, and the mouseup lands elsewhere, so a first click on such a tab selects nothing.
     */
    const selectTab = async (title: string) => {
      await tab(title).getByRole('button', { name: title, exact: true }).press('Enter', WAIT);
      await tab(title, true).waitFor(WAIT);
    };

    it('renders the editor on the product page query and its variables, saying how to get a development token and where it goes', async () => {
      // The page has loaded (goto waits for it): a script or stylesheet from elsewhere would be listed here.
      expect(foreign).toEqual([]);
      const editor = region('Operation Editor');
      await editor.filter({ hasText: 'query ProductPage($id: ID!)' }).waitFor(WAIT);
      const text = readable(await editor.innerText());
      expect(text).toContain('npx switchyard token mint');
      expect(text).toContain('Headers tab');
      expect(text).toContain('{"authorization": "Bearer <the token>"}');
      await region('Variables').filter({ hasText: '"id": "2"' }).waitFor(WAIT);
      // Beside it, not selected, the same page with its reviews deferred, then the stock subscription.
      await tab('ProductPage', true).waitFor(WAIT);
      await tab('ProductPageDeferred', false).waitFor(WAIT);
      await tab('StockUpdates', false).waitFor(WAIT);
      expect(await page.title()).toBe('Switchyard');
      expect(foreign).toEqual([]);
      expect(pageErrors).toEqual([]);
    });

    it('loads the schema documentation: the docs explorer opens on the root types and walks to a product’s fields', async () => {
      await page.getByRole('button', { name: 'Show Documentation Explorer' }).click();
      const docs = page.locator('.graphiql-doc-explorer');
      await docs.getByText('Query', { exact: true }).click(WAIT);
      await docs.getByText('product', { exact: true }).first().click(WAIT);
      // The product's type, then its fields, which come from all three subgraphs.
      await docs.getByText('Product', { exact: true }).first().click(WAIT);
      for (const field of ['name', 'reviews', 'inventory']) await docs.getByText(field, { exact: true }).first().waitFor(WAIT);
      await mkdir(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: path.join(ARTIFACTS, 'graphiql-docs.png') });
      expect(foreign).toEqual([]);
      expect(pageErrors).toEqual([]);
    });

    it('runs the opening query and shows the product page in the result pane', async () => {
      await page.getByRole('button', { name: 'Execute query (Ctrl-Enter)' }).click();
      const result = region('Result Window');
      await result.filter({ hasText: PRODUCT_NAME }).waitFor(WAIT);
      const text = readable(await result.innerText());
      expect(text).toContain('"price": 6399');
      expect(text).toContain(REVIEW_BODY);
      expect(text).toContain('"warehouse": "Leipzig"');
      await page.screenshot({ path: path.join(ARTIFACTS, 'graphiql.png') });
      expect(foreign).toEqual([]);
      expect(pageErrors).toEqual([]);
    });

    it('streams the deferred tab: the product shows at once, its reviews when their subgraph answers, 500 ms later', async () => {
      const reviews = demo.subgraphs.find((subgraph) => subgraph.name === 'reviews')!;
      await setFaults(reviews.url, { latencyMs: 500 });
      try {
        await selectTab('ProductPageDeferred');
        await region('Operation Editor').filter({ hasText: '@defer(label: "reviews")' }).waitFor(WAIT);
        await region('Variables').filter({ hasText: '"id": "2"' }).waitFor(WAIT);
        // The new tab has no result yet: from here on, a product name in the pane is this tab's answer, not the first tab's.
        await page.waitForFunction(
          (name) => !((globalThis as any).document.querySelector('section[aria-label="Result Window"]')?.innerText ?? '').replace(/\u00a0/g, ' ').includes(name),
          PRODUCT_NAME,
          WAIT,
        );
        const answered = page.waitForResponse((response) => response.url() === demo.router.url && response.request().method() === 'POST', WAIT);
        await page.getByRole('button', { name: 'Execute query (Ctrl-Enter)' }).click();
        expect((await answered).headers()['content-type']).toMatch(/^multipart\/mixed;.*deferSpec=20220824/);

        // The pane's text in the first animation frame that shows the product's name. Streamed, that is
        // the first payload, without reviews; answered whole (no streaming), that frame would already
        // hold the reviews, which fit in the pane beside the name (the last check), and this would fail.
        const first = await page.waitForFunction(
          (name) => {
            const text: string = ((globalThis as any).document.querySelector('section[aria-label="Result Window"]')?.innerText ?? '').replace(/\u00a0/g, ' ');
            return text.includes(name) && text;
          },
          PRODUCT_NAME,
          { ...WAIT, polling: 'raf' },
        );
        const initial = readable(String(await first.jsonValue()));
        expect(initial).toContain(`"name": "${PRODUCT_NAME}"`);
        expect(initial).toContain('"warehouse": "Leipzig"');
        expect(initial).not.toContain('"reviews"');
        expect(initial).not.toContain(REVIEW_BODY);

        // Then the reviews, merged into the same product by GraphiQL.
        const result = region('Result Window');
        await result.filter({ hasText: REVIEW_BODY }).waitFor(WAIT);
        const whole = readable(await result.innerText());
        expect(whole).toContain(`"name": "${PRODUCT_NAME}"`);
        expect(whole).toContain('"reviews": [');
        expect(whole).toContain('"warehouse": "Leipzig"');
        await page.screenshot({ path: path.join(ARTIFACTS, 'graphiql-defer.png') });
        expect(foreign).toEqual([]);
        expect(pageErrors).toEqual([]);
      } finally {
        await setFaults(reviews.url, { latencyMs: 0 });
      }
    });

    it('runs the subscription tab over SSE with the Headers tab’s token: each pushed change shows with its product, and the stop button ends it on the router', async () => {
      const inventory = demo.subgraphs.find((subgraph) => subgraph.name === 'inventory')!;
      const token = await mintDevToken(demo.router.keyRing, { sub: 'alice' });
      await selectTab('StockUpdates');
      const editor = region('Operation Editor');
      await editor.filter({ hasText: 'subscription StockUpdates($id: ID)' }).waitFor(WAIT);
      expect(readable(await editor.innerText())).toContain('about once a second');
      await region('Variables').filter({ hasText: '"id": "2"' }).waitFor(WAIT);
      // The new tab has no result yet: from here on, a product name in the pane is an event of this tab.
      await page.waitForFunction(
        (name) => !((globalThis as any).document.querySelector('section[aria-label="Result Window"]')?.innerText ?? '').replace(/\u00a0/g, ' ').includes(name),
        PRODUCT_NAME,
        WAIT,
      );

      // As the editor's hint says: the token in the Headers tab. Typed as one insertion, so the editor adds no closing brackets of its own.
      await page.getByRole('button', { name: 'Headers', exact: true }).click(WAIT);
      await region('Headers').click(WAIT);
      await page.keyboard.press('Control+A');
      await page.keyboard.insertText(`{"authorization": "Bearer ${token}"}`);
      await region('Headers').filter({ hasText: token.slice(-16) }).waitFor(WAIT);

      const endpoint = new URL(demo.router.url).pathname;
      const subscribed = page.waitForRequest((request) => new URL(request.url()).pathname === endpoint && request.headers().accept === 'text/event-stream', WAIT);
      await page.getByRole('button', { name: 'Execute query (Ctrl-Enter)' }).click();
      // A POST with a JSON body (the GET GraphiQL sends unless told a method is refused as a possible CSRF),
      // carrying the Headers tab's token as an HTTP header.
      const request = await subscribed;
      expect(request.method()).toBe('POST');
      expect(request.headers()['content-type']).toMatch(/^application\/json/);
      expect(request.headers().authorization).toBe(`Bearer ${token}`);
      expect(request.postDataJSON()).toMatchObject({ operationName: 'StockUpdates', variables: { id: '2' } });
      const answered = await request.response();
      expect(answered?.status()).toBe(200);
      expect(answered?.headers()['content-type']).toMatch(/^text\/event-stream/);
      await page.getByRole('button', { name: 'Stop query (Ctrl-Enter)' }).waitFor(WAIT);
      await eventually(() => demo.router.subscriptions.size === 1, { what: 'the subscription open on the router' });
      await eventually(async () => (await openAtInventory(inventory.url)) === 1, { what: 'the subscription open at the inventory subgraph' });
      expect(await readMetric(demo.router, 'switchyard_subscriptions_active', { operation: 'StockUpdates' })).toBe(1);

      // Two changes, each shown as it arrives, completed with the product's name, price and reviews from the other subgraphs.
      const result = region('Result Window');
      await pushStock(inventory.url, '2', 17);
      await result.filter({ hasText: '"inStock": 17' }).waitFor(WAIT);
      await pushStock(inventory.url, '2', 23);
      await result.filter({ hasText: '"inStock": 23' }).waitFor(WAIT);
      const latest = readable(await result.innerText());
      expect(latest).toContain(`"name": "${PRODUCT_NAME}"`);
      expect(latest).toContain('"price": 6399');
      expect(latest).toContain('"rating": ');
      expect(latest).not.toContain('"errors"');
      await page.screenshot({ path: path.join(ARTIFACTS, 'graphiql-subscription.png') });

      // The same button stops it: the browser aborts the stream, and the router lets the subscription go.
      await page.getByRole('button', { name: 'Stop query (Ctrl-Enter)' }).click();
      await page.getByRole('button', { name: 'Execute query (Ctrl-Enter)' }).waitFor(WAIT);
      await eventually(() => demo.router.subscriptions.size === 0, { what: 'the router to close the subscription' });
      expect(await readMetric(demo.router, 'switchyard_subscriptions_active', { operation: 'StockUpdates' })).toBe(0);
      await eventually(async () => (await openAtInventory(inventory.url)) === 0, { what: 'the upstream subscription released' });
      expect(foreign).toEqual([]);
      expect(pageErrors).toEqual([]);
    });
  });
});
