// `switchyard serve --workers N`: several router processes on one port, replaced when they crash, reloaded on SIGHUP, stopped on SIGTERM.
import { request } from 'node:http';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeSupergraph } from '../../src/gateway/compose.js';
import { demoSubgraphs, type RunningSubgraph } from '../../subgraphs/index.js';
import { runCli, startCli, type CliProcess } from '../helpers/cli.js';
import { createTestStore, TEST_DATABASE_URL, type TestStore } from '../helpers/database.js';
import { eventually } from '../helpers/http.js';
import { startFixtureSubgraph, type RunningFixture } from '../helpers/fixture-subgraph.js';

const PRODUCT_PAGE = '{ product(id: "3") { name price reviews { rating } inventory { inStock } } }';

interface Answer {
  status: number;
  body: string;
}

/**
 * One HTTP request on a connection of its own (no keep-alive pool): the primary hands every new
 * connection to the next worker, so a series of these reaches each worker in turn.
 */
function fresh(url: string, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: body ? 'POST' : 'GET', agent: false, headers: body ? { 'content-type': 'application/json', accept: 'application/graphql-response+json' } : {} }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.on('error', reject);
    });
    // A request the router never answers is a failure of its own, not a test that hangs.
    req.setTimeout(10_000, () => req.destroy(new Error('no answer within 10 s')));
    req.on('error', reject);
    req.end(body);
  });
}

const query = (url: string, text: string) => fresh(url, JSON.stringify({ query: text }));

/** The `worker` label of the process that answered a scrape of /metrics. */
async function scrapeWorker(metricsUrl: string): Promise<string> {
  const { status, body } = await fresh(metricsUrl);
  expect(status).toBe(200);
  const label = /^switchyard_process_start_time_seconds\{worker="(\d+)"\}/m.exec(body);
  if (!label) throw new Error(`no worker label in:\n${body.slice(0, 500)}`);
  return label[1]!;
}

/** The primary's JSON log lines with this message, in order. */
function logLines(cli: CliProcess, msg: string): Record<string, any>[] {
  return cli
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{') && line.includes(`"msg":"${msg}"`))
    .map((line) => JSON.parse(line) as Record<string, any>);
}

/** Resolves once the primary has logged `msg` more than `seen` times, with that line; watches the output as it comes. */
function nextLogLine(cli: CliProcess, msg: string, seen: number, timeoutMs = 30_000): Promise<Record<string, any>> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const lines = logLines(cli, msg);
      if (lines.length <= seen) return;
      done();
      resolve(lines[seen]!);
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`timed out waiting for log line "${msg}" number ${seen + 1}`));
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      cli.child.stdout!.off('data', check);
    };
    // Registered after the helper's own listener, so output() already holds the chunk.
    cli.child.stdout!.on('data', check);
    check();
  });
}

/** The pid now serving each worker slot, from the primary's "worker listening" lines. */
function workerPids(cli: CliProcess): Map<number, number> {
  const pids = new Map<number, number>();
  for (const line of logLines(cli, 'worker listening')) pids.set(line.worker, line.pid);
  return pids;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('switchyard serve --workers 2 --supergraph FILE', () => {
  let store: TestStore;
  let subgraphs: RunningSubgraph[] = [];
  let router: CliProcess;
  let url: string;
  let metricsUrl: string;
  beforeAll(async () => {
    store = await createTestStore();
    subgraphs = await Promise.all((['product', 'reviews', 'inventory'] as const).map((name) => demoSubgraphs[name]({ env: {} }).listen(0)));
    const composed = composeSupergraph(subgraphs.map((s) => ({ name: s.name, url: s.url, sdl: demoSubgraphs[s.name as 'product']({ env: {} }).sdl })));
    if (!composed.ok) throw new Error('demo subgraphs must compose');
    const file = path.join(store.dataDir, 'supergraph.graphql');
    await writeFile(file, composed.supergraphSdl);
    // Log level info: the primary's lines (worker listening, exited, reload complete) are the events the tests await.
    router = startCli(['serve', '--workers', '2', '--port', '0', '--supergraph', file], { SWITCHYARD_DATA_DIR: store.dataDir, LOG_LEVEL: 'info' });
    url = (await router.waitFor(/Switchyard router on (http:\/\/\S+\/graphql) \(2 worker processes\)/, 60_000))[1]!;
    metricsUrl = url.replace(/\/graphql$/, '/metrics');
  }, 90_000);
  afterAll(async () => {
    await router?.stop();
    for (const s of subgraphs) await s.close();
    await store?.destroy();
  });

  it('announces one URL, on a real port, once both workers listen', async () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:[1-9]\d*\/graphql$/);
    const ready = await nextLogLine(router, 'all workers listening', 0);
    expect(logLines(router, 'all workers listening')).toHaveLength(1);
    expect(ready).toMatchObject({ workers: 2, port: Number(new URL(url).port) });
    expect(workerPids(router).size).toBe(2);
  });

  it('answers queries, from both workers, each labelling its metrics', async () => {
    for (let i = 0; i < 6; i++) {
      const { status, body } = await query(url, PRODUCT_PAGE);
      expect(status).toBe(200);
      const parsed = JSON.parse(body);
      expect(parsed.errors).toBeUndefined();
      expect(parsed.data.product).toMatchObject({ name: expect.any(String), reviews: expect.any(Array), inventory: { inStock: expect.any(Number) } });
    }
    const seen = new Set<string>();
    for (let i = 0; i < 10 && seen.size < 2; i++) seen.add(await scrapeWorker(metricsUrl));
    expect([...seen].sort()).toEqual(['1', '2']);
    // Every series carries the label, the router's own as well as the process metrics.
    const { body } = await fresh(metricsUrl);
    const series = body.split('\n').filter((line) => line.startsWith('switchyard_requests_total'));
    expect(series.length).toBeGreaterThan(0);
    for (const line of series) expect(line).toMatch(/worker="[12]"/);
  });

  it('replaces a worker killed with SIGKILL, and the port keeps answering', async () => {
    const before = workerPids(router);
    const exits = logLines(router, 'worker exited; replacing it').length;
    const listening = logLines(router, 'worker listening').length;
    process.kill(before.get(1)!, 'SIGKILL');
    const exited = await nextLogLine(router, 'worker exited; replacing it', exits);
    expect(exited).toMatchObject({ worker: 1, pid: before.get(1), signal: 'SIGKILL' });
    // The other worker serves meanwhile.
    for (let i = 0; i < 4; i++) expect((await query(url, PRODUCT_PAGE)).status).toBe(200);
    const replaced = await nextLogLine(router, 'worker listening', listening);
    expect(replaced.worker).toBe(1);
    expect(replaced.pid).not.toBe(before.get(1));
    expect(alive(before.get(2)!)).toBe(true);
    const seen = new Set<string>();
    for (let i = 0; i < 10 && seen.size < 2; i++) seen.add(await scrapeWorker(metricsUrl));
    expect([...seen].sort()).toEqual(['1', '2']);
  });

  it('reloads on SIGHUP, replacing every worker, without one failed request', async () => {
    const before = workerPids(router);
    const reloads = logLines(router, 'reload complete').length;
    const answers: Answer[] = [];
    const failures: string[] = [];
    let loading = true;
    // Two clients, each sending one request after another on new connections, for the whole reload.
    const client = async () => {
      while (loading) {
        try {
          answers.push(await query(url, PRODUCT_PAGE));
        } catch (error) {
          failures.push((error as Error).message);
        }
      }
    };
    const clients = [client(), client()];
    process.kill(router.child.pid!, 'SIGHUP');
    await nextLogLine(router, 'reload complete', reloads, 60_000);
    loading = false;
    await Promise.all(clients);
    expect(failures).toEqual([]);
    expect(answers.length).toBeGreaterThan(10);
    expect(answers.filter((a) => a.status !== 200)).toEqual([]);
    const after = workerPids(router);
    expect(after.size).toBe(2);
    for (const slot of [1, 2]) {
      expect(after.get(slot)).not.toBe(before.get(slot));
      expect(alive(before.get(slot)!)).toBe(false);
    }
    expect((await query(url, PRODUCT_PAGE)).status).toBe(200);
  }, 90_000);

  it('stops every worker on SIGTERM and exits 0', async () => {
    const pids = [...workerPids(router).values()];
    expect(await router.stop()).toBe(0);
    for (const pid of pids) expect(alive(pid)).toBe(false);
  });
});

describe.runIf(TEST_DATABASE_URL)('switchyard serve --workers 2 on PostgreSQL (registry mode)', () => {
  let store: TestStore;
  let product: RunningSubgraph;
  let fixture: RunningFixture;
  let router: CliProcess | undefined;
  afterAll(async () => {
    await router?.stop();
    await fixture?.close();
    await product?.close();
    await store?.destroy();
  });

  it('serves the registry from both workers, and both follow a publish', async () => {
    store = await createTestStore();
    const env = { DATABASE_URL: store.databaseUrl! };
    product = await demoSubgraphs.product({ env: {} }).listen(0);
    expect((await runCli(['subgraph', 'publish', 'product', '--url', product.url], env)).code).toBe(0);
    router = startCli(['serve', '--workers', '2', '--port', '0'], env);
    const url = (await router.waitFor(/Switchyard router on (http:\/\/\S+\/graphql) \(2 worker processes\)/, 60_000))[1]!;
    const seen = new Set<string>();
    for (let i = 0; i < 10 && seen.size < 2; i++) seen.add(await scrapeWorker(url.replace(/\/graphql$/, '/metrics')));
    expect([...seen].sort()).toEqual(['1', '2']);

    fixture = await startFixtureSubgraph({
      sdl: 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])\ntype Product @key(fields: "id") { id: ID! rank: Int! }',
      resolvers: { Product: { __resolveReference: (ref: { id: string }) => ({ id: ref.id, rank: 100 - Number(ref.id) }) } },
    });
    expect((await runCli(['subgraph', 'publish', 'ranks', '--url', fixture.url], env)).code).toBe(0);
    // Four fresh connections in a row reach both workers: each must serve the new field.
    const rankOf = async () => JSON.parse((await query(url, '{ product(id: "1") { rank } }')).body).data?.product?.rank;
    await eventually(async () => (await Promise.all([rankOf(), rankOf(), rankOf(), rankOf()])).every((rank) => rank === 99), { what: 'both workers to serve the publish' });
    expect(await router.stop()).toBe(0);
  }, 90_000);
});

describe('switchyard serve --workers without a shared database', () => {
  let store: TestStore;
  beforeAll(async () => {
    store = await createTestStore();
  });
  afterAll(async () => {
    await store?.destroy();
  });

  it('refuses the embedded database with a message that says what to set', async () => {
    const { code, stderr } = await runCli(['serve', '--workers', '2', '--port', '0'], { SWITCHYARD_DATA_DIR: store.dataDir });
    expect(code).toBe(2);
    expect(stderr).toContain('workers (SWITCHYARD_WORKERS): 2 router processes cannot share the embedded database');
    expect(stderr).toMatch(/set DATABASE_URL .*--supergraph/);
  });

  it('refuses a worker count that is neither a number nor auto', async () => {
    const { code, stderr } = await runCli(['serve', '--port', '0'], { SWITCHYARD_WORKERS: 'many', SWITCHYARD_DATA_DIR: store.dataDir });
    expect(code).toBe(2);
    expect(stderr).toContain('workers (SWITCHYARD_WORKERS): must be "auto" or an integer from 1 to 256 (got "many")');
  });
});
