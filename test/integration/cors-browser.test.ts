// CORS by allow-list in a real headless Chromium: a page from an allowed origin reads the router's answer cross-origin, one from a refused origin cannot.
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningRouter } from '../../src/cli/start-router.js';
import { setCorsRule } from '../../src/registry/cors-store.js';
import { databaseKind } from '../helpers/database.js';
import { eventually } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/stack.js';

/** Debian's Chromium (`apt-get install chromium`; .ci/run installs it), driven by playwright-core, as the ops page's test. */
const CHROMIUM = '/usr/bin/chromium';
// CI must run the browser test; a machine without Chromium skips it, saying why.
const browserMissing = !existsSync(CHROMIUM) && !process.env.CI;

/** A site of its own: a blank page on its own port, so its origin differs from the router's and the other site's. */
async function startSite(): Promise<{ origin: string; close(): Promise<void> }> {
  const server: Server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>a site</title><p>a site</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** What the page's script gets from a cross-origin POST to the router (JSON, so the browser sends a preflight first), with cookies. */
type Outcome = { ok: true; status: number; body: unknown } | { ok: false; error: string; name: string };

function fetchFromPage(page: Page, url: string): Promise<Outcome> {
  return page.evaluate(async (target) => {
    try {
      const response = await fetch(target, {
        method: 'POST',
        credentials: 'include',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ query: '{ products(first: 1) { id } }' }),
      });
      return { ok: true as const, status: response.status, body: await response.json() };
    } catch (error) {
      return { ok: false as const, error: String(error), name: (error as Error).name };
    }
  }, url);
}

describe.skipIf(browserMissing)(`CORS in a headless browser (${databaseKind} database)${browserMissing ? ` (skipped: no ${CHROMIUM}; apt-get install -y chromium)` : ''}`, () => {
  let stack: Stack;
  let router: RunningRouter;
  let allowedSite: Awaited<ReturnType<typeof startSite>>;
  let refusedSite: Awaited<ReturnType<typeof startSite>>;
  let userDataDir: string;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    expect(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install -y chromium`).toBe(true);
    stack = await startStack();
    // Production: no origin is allowed until ops allow one.
    router = await stack.startRouter({ nodeEnv: 'production', authMode: 'off' });
    [allowedSite, refusedSite] = [await startSite(), await startSite()];
    await setCorsRule(stack.db, { origin: allowedSite.origin, credentials: true, maxAgeSeconds: 0 });
    await eventually(async () => (await fetch(router.url, { method: 'OPTIONS', headers: { origin: allowedSite.origin, 'access-control-request-method': 'POST' } })).headers.has('access-control-allow-origin'), {
      what: 'the rule to reach the router',
    });
    userDataDir = await mkdtemp(path.join(tmpdir(), 'switchyard-chromium-'));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    page = context.pages()[0] ?? (await context.newPage());
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    if (userDataDir) await rm(userDataDir, { recursive: true, force: true });
    await allowedSite?.close();
    await refusedSite?.close();
    await stack?.close();
  });

  it('a page from an allowed origin reads the answer, cookies included', async () => {
    await page.goto(`${allowedSite.origin}/`);
    const outcome = await fetchFromPage(page, router.url);
    expect(outcome).toEqual({ ok: true, status: 200, body: { data: { products: [{ id: expect.any(String) }] } } });
  });

  it('a page from a refused origin gets a network error (TypeError), never the answer', async () => {
    await page.goto(`${refusedSite.origin}/`);
    const outcome = await fetchFromPage(page, router.url);
    expect(outcome).toMatchObject({ ok: false, name: 'TypeError' });
  });
});
