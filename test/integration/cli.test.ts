// The `switchyard` command as users run it: demo, registry commands against a running demo, serve, config errors.
import { writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeSupergraph } from '../../src/gateway/compose.js';
import { demoSubgraphs, type RunningSubgraph } from '../../subgraphs/index.js';
import { runCli, startCli, type CliProcess } from '../helpers/cli.js';
import { createTestStore, databaseKind, TEST_DATABASE_URL, type TestStore } from '../helpers/database.js';
import { eventually, postGraphQL } from '../helpers/http.js';
import { startFixtureSubgraph, type RunningFixture } from '../helpers/fixture-subgraph.js';

const storeEnv = (store: TestStore) => (store.databaseUrl ? { DATABASE_URL: store.databaseUrl } : { SWITCHYARD_DATA_DIR: store.dataDir });

describe(`switchyard demo and the registry commands (${databaseKind} database)`, () => {
  let store: TestStore;
  let demo: CliProcess;
  let routerUrl: string;
  let fixture: RunningFixture;
  beforeAll(async () => {
    store = await createTestStore();
    fixture = await startFixtureSubgraph({
      sdl: /* GraphQL */ `
        extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
        type Product @key(fields: "id") { id: ID! giftWrap: Boolean! }
      `,
      resolvers: { Product: { __resolveReference: (ref: { id: string }) => ({ id: ref.id, giftWrap: Number(ref.id) % 2 === 0 }) } },
    });
    demo = startCli(['demo', '--port', '0', '--subgraph-port-base', '0'], storeEnv(store));
    routerUrl = (await demo.waitFor(/router\s+(http:\/\/\S+\/graphql)/, 60_000))[1];
  });
  afterAll(async () => {
    await demo?.stop();
    await fixture?.close();
    await store?.destroy();
  });

  it('serves the product page from the three demo subgraphs', async () => {
    const { body } = await postGraphQL(routerUrl, '{ product(id: "1") { name price reviews { rating } inventory { inStock } } }');
    expect(body.errors).toBeUndefined();
    expect(body.data.product).toMatchObject({ name: expect.any(String), inventory: { inStock: expect.any(Number) } });
  });

  it('lists the published subgraphs while the demo runs', async () => {
    const { code, stdout } = await runCli(['subgraph', 'list'], storeEnv(store));
    expect(code).toBe(0);
    expect(stdout).toMatch(/inventory\s+http:\/\/127\.0\.0\.1:\d+\/graphql/);
    expect(stdout).toMatch(/product\s+http/);
    expect(stdout).toMatch(/reviews\s+http/);
  });

  it('publishes a subgraph read from its _service SDL, served by the running demo within a second', async () => {
    const { code, stdout, stderr } = await runCli(['subgraph', 'publish', 'gifts', '--url', fixture.url], storeEnv(store));
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toContain('published gifts');
    const published = Date.now();
    await eventually(async () => (await postGraphQL(routerUrl, '{ product(id: "4") { giftWrap } }')).body.data?.product?.giftWrap === true, {
      what: 'the demo router to serve the new field',
    });
    expect(Date.now() - published).toBeLessThan(1_000);
  });

  it('refuses a publish that does not compose, printing the errors and storing nothing', async () => {
    const file = path.join(store.dataDir, 'bad.graphql');
    await writeFile(file, 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])\ntype Product @key(fields: "id") { id: ID! name: Int! }\n');
    const { code, stderr } = await runCli(['subgraph', 'publish', 'bad', '--url', 'http://127.0.0.1:9/graphql', '--schema', file], storeEnv(store));
    expect(code).toBe(1);
    expect(stderr).toMatch(/publish of "bad" refused/);
    expect(stderr).toMatch(/Product\.name/);
    const list = await runCli(['subgraph', 'list', '--json'], storeEnv(store));
    expect(JSON.parse(list.stdout).map((s: { name: string }) => s.name)).toEqual(['gifts', 'inventory', 'product', 'reviews']);
  });

  it('prints the composed supergraph', async () => {
    const { code, stdout } = await runCli(['supergraph'], storeEnv(store));
    expect(code).toBe(0);
    expect(stdout).toMatch(/join__graph\(name: "gifts"/);
    expect(stdout).toMatch(/giftWrap: Boolean!/);
  });

  it('removes a subgraph and the router stops serving its fields', async () => {
    const { code } = await runCli(['subgraph', 'remove', 'gifts'], storeEnv(store));
    expect(code).toBe(0);
    await eventually(async () => (await postGraphQL(routerUrl, '{ product(id: "4") { giftWrap } }')).status === 400, { what: 'the field to disappear' });
    const again = await runCli(['subgraph', 'remove', 'gifts'], storeEnv(store));
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/no subgraph named "gifts"/);
  });

  it('stops cleanly on SIGTERM, with an audit row for every request it answered', async () => {
    const answers = await Promise.all(Array.from({ length: 30 }, () => postGraphQL(routerUrl, 'query SigtermProbe { product(id: "1") { name } }')));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    // No wait for the audit writer: SIGTERM must flush what it still holds.
    expect(await demo.stop()).toBe(0);
    const audit = await runCli(['audit', '--json', '--limit', '1000', '--operation', 'SigtermProbe'], storeEnv(store));
    expect(audit.code).toBe(0);
    expect(JSON.parse(audit.stdout)).toHaveLength(30);
  });

  it('releases the embedded database when it stops', async () => {
    expect(existsSync(path.join(store.dataDir, 'server.json'))).toBe(false);
    // The next command opens the database itself and still finds the registry.
    const { code, stdout } = await runCli(['subgraph', 'list'], storeEnv(store));
    expect(code).toBe(0);
    expect(stdout).toMatch(/product/);
  });
});

describe('configuration errors', () => {
  it('stops at start with one clear message naming each wrong setting', async () => {
    const { code, stderr } = await runCli(['serve'], { PORT: 'eighty', SWITCHYARD_SUBGRAPH_TIMEOUT_MS: '-5', NODE_ENV: 'staging' });
    expect(code).toBe(2);
    expect(stderr).toMatch(/Invalid configuration/);
    expect(stderr).toMatch(/port \(PORT\)/);
    expect(stderr).toMatch(/subgraphTimeoutMs \(SWITCHYARD_SUBGRAPH_TIMEOUT_MS\)/);
    expect(stderr).toMatch(/nodeEnv \(NODE_ENV\)/);
    expect(stderr).not.toMatch(/at .*\.js:\d+/); // no stack trace
  });

  it('NODE_ENV=production with no identity provider: names what to set, no AuthConfigError stack trace', async () => {
    const { code, stderr } = await runCli(['serve', '--port', '0', '--supergraph', 'no-such-file.graphql'], { NODE_ENV: 'production' });
    expect(code).toBe(2);
    expect(stderr).toMatch(/^Invalid configuration:/);
    expect(stderr).toMatch(/authMode \(SWITCHYARD_AUTH_MODE\).*set JWKS_URL or JWT_PUBLIC_KEY, or SWITCHYARD_AUTH_MODE=off/);
    expect(stderr).not.toMatch(/AuthConfigError|at .*\.js:\d+/);
  });

  it('commands that only use the store still run in production without an identity provider', async () => {
    const store = await createTestStore();
    try {
      const { code, stdout } = await runCli(['policy', 'list'], { ...storeEnv(store), NODE_ENV: 'production' });
      expect(code).toBe(0);
      expect(stdout).toMatch(/\*.*costLimit=50000/);
    } finally {
      await store.destroy();
    }
  });
});

describe('switchyard serve --supergraph FILE', () => {
  let subgraphs: RunningSubgraph[] = [];
  let router: CliProcess | undefined;
  let store: TestStore;
  beforeAll(async () => {
    store = await createTestStore();
    subgraphs = await Promise.all((['product', 'reviews', 'inventory'] as const).map((name) => demoSubgraphs[name]({ env: {} }).listen(0)));
  });
  afterAll(async () => {
    await router?.stop();
    for (const s of subgraphs) await s.close();
    await store?.destroy();
  });

  it('serves a supergraph composed elsewhere and reloads it when the file changes', async () => {
    const definitions = subgraphs.map((s) => ({ name: s.name, url: s.url, sdl: demoSubgraphs[s.name as 'product']({ env: {} }).sdl }));
    const full = composeSupergraph(definitions);
    const withoutInventory = composeSupergraph(definitions.filter((d) => d.name !== 'inventory'));
    if (!full.ok || !withoutInventory.ok) throw new Error('demo subgraphs must compose');
    const file = path.join(store.dataDir, 'supergraph.graphql');
    await writeFile(file, full.supergraphSdl);
    router = startCli(['serve', '--port', '0', '--supergraph', file], { SWITCHYARD_DATA_DIR: store.dataDir });
    const url = (await router.waitFor(/router on (http:\/\/\S+\/graphql)/))[1];
    const page = await postGraphQL(url, '{ product(id: "5") { name reviews { id } inventory { inStock } } }');
    expect(page.body.errors).toBeUndefined();
    expect(page.body.data.product.inventory.inStock).toEqual(expect.any(Number));

    await writeFile(file, withoutInventory.supergraphSdl);
    await eventually(async () => (await postGraphQL(url, '{ product(id: "5") { inventory { inStock } } }')).status === 400, { what: 'the reload' });
    const after = await postGraphQL(url, '{ product(id: "5") { name } }');
    expect(after.body.data.product.name).toEqual(page.body.data.product.name);
    // No registry: the file mode did not create the embedded database.
    expect(existsSync(path.join(store.dataDir, 'pgdata'))).toBe(false);
  });
});

describe.runIf(TEST_DATABASE_URL)('two router processes on one PostgreSQL', () => {
  let store: TestStore;
  const routers: CliProcess[] = [];
  let fixture: RunningFixture;
  let product: RunningSubgraph;
  afterAll(async () => {
    for (const r of routers) await r.stop();
    await fixture?.close();
    await product?.close();
    await store?.destroy();
  });

  it('both serve a new publish within a second', async () => {
    store = await createTestStore();
    const env = { DATABASE_URL: store.databaseUrl! };
    product = await demoSubgraphs.product({ env: {} }).listen(0);
    expect((await runCli(['subgraph', 'publish', 'product', '--url', product.url], env)).code).toBe(0);
    fixture = await startFixtureSubgraph({
      sdl: 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])\ntype Product @key(fields: "id") { id: ID! rank: Int! }',
      resolvers: { Product: { __resolveReference: (ref: { id: string }) => ({ id: ref.id, rank: 100 - Number(ref.id) }) } },
    });
    for (let i = 0; i < 2; i++) routers.push(startCli(['serve', '--port', '0'], env));
    const urls = await Promise.all(routers.map(async (r) => (await r.waitFor(/router on (http:\/\/\S+\/graphql)/))[1]));
    for (const url of urls) expect((await postGraphQL(url, '{ product(id: "1") { name } }')).status).toBe(200);

    expect((await runCli(['subgraph', 'publish', 'ranking', '--url', fixture.url], env)).code).toBe(0);
    const published = Date.now();
    await Promise.all(
      urls.map((url) => eventually(async () => (await postGraphQL(url, '{ product(id: "7") { rank } }')).body.data?.product?.rank === 93, { what: `${url} to serve the publish` })),
    );
    expect(Date.now() - published).toBeLessThan(1_000);
  });
});
