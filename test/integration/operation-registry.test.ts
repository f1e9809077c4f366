// The operation registry and checks against real traffic: what routers record, `operations list`, `subgraph check`, and the check that guards `subgraph publish`.
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintDevToken } from '../../src/security/authentication/dev-token.js';
import { publishSubgraph } from '../../src/registry/subgraph-store.js';
import { compositionCheck } from '../../src/cli/registry-commands.js';
import { PACKAGE_ROOT } from '../../src/config/paths.js';
import { readMetric, startStack, type Stack } from '../helpers/stack.js';
import { startFixtureSubgraph, type RunningFixture } from '../helpers/fixture-subgraph.js';
import { runCli } from '../helpers/cli.js';
import type { RunningRouter } from '../../src/cli/start-router.js';
import { databaseKind, type TestStore } from '../helpers/database.js';
import { queryAudit } from '../../src/registry/audit-store.js';
import { eventually } from '../helpers/http.js';

const storeEnv = (store: TestStore) => (store.databaseUrl ? { DATABASE_URL: store.databaseUrl } : { SWITCHYARD_DATA_DIR: store.dataDir });

// A subgraph with an enum argument and an input type, for the changes the demo graph has no room for.
const SHELF_SDL = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
  type Query { shelf(sort: ShelfSort = NAME): [String!]! }
  type Mutation { tag(input: TagInput!): String! }
  enum ShelfSort { NAME NEWEST PRICE }
  input TagInput { label: String! note: String }
`;

const PRODUCT_PAGE = 'query ProductPage { product(id: "1") { name reviews { body rating } } }';
// The same document with other whitespace, commas and a comment: one operation, not two.
const PRODUCT_PAGE_REFORMATTED = `# the product page
query ProductPage {
  product(id: "1") { name, reviews { body, rating } }
}`;

/** The unlabelled counter's value in Prometheus text. */
function recordedTotal(text: string): number {
  const line = text.split('\n').find((l) => l.startsWith('switchyard_operations_recorded_total '));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

interface ListedOperation {
  operationName: string | null;
  operationType: string;
  clientName: string;
  clientVersion: string;
  count: number;
  hash: string;
  normalised: string;
}

describe(`operation registry and schema checks against real traffic (${databaseKind} database)`, () => {
  let stack: Stack;
  let shelf: RunningFixture;
  let env: Record<string, string | undefined>;
  let mobileToken: string;
  const file = (name: string) => path.join(stack.store.dataDir, name);
  const candidate = async (name: string, sdl: string) => {
    await writeFile(file(name), sdl);
    return file(name);
  };
  const reviewsSdl = () => readFile(path.join(PACKAGE_ROOT, 'schema', 'reviews.graphql'), 'utf8');
  const productSdl = () => readFile(path.join(PACKAGE_ROOT, 'schema', 'product.graphql'), 'utf8');
  async function listed(args: string[] = []): Promise<ListedOperation[]> {
    const { code, stdout, stderr } = await runCli(['operations', 'list', '--json', ...args], env);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    return JSON.parse(stdout) as ListedOperation[];
  }

  beforeAll(async () => {
    stack = await startStack();
    env = storeEnv(stack.store);
    shelf = await startFixtureSubgraph({
      sdl: SHELF_SDL,
      resolvers: { Query: { shelf: (_: unknown, args: { sort: string }) => [`sorted by ${args.sort}`] }, Mutation: { tag: (_: unknown, args: { input: { label: string } }) => args.input.label } },
    });
    const swapped = stack.nextSwap();
    await publishSubgraph(stack.db, { name: 'shelf', url: shelf.url, sdl: SHELF_SDL }, compositionCheck);
    await swapped;
    mobileToken = await mintDevToken(stack.router.keyRing, { sub: 'alice', clientId: 'mobile-app' });

    const web = { 'graphql-client-name': 'web', 'graphql-client-version': '1.2.0' };
    for (const query of [PRODUCT_PAGE, PRODUCT_PAGE_REFORMATTED, PRODUCT_PAGE]) {
      const { body } = await stack.query(query, { headers: web });
      expect(body.errors).toBeUndefined();
    }
    const ios = await stack.query('query Shelf { shelf(sort: NEWEST) }', { headers: { 'apollographql-client-name': 'ios', 'apollographql-client-version': '5.0' } });
    expect(ios.body.data).toEqual({ shelf: ['sorted by NEWEST'] });
    const tag = await stack.query('mutation Tag($input: TagInput!) { tag(input: $input) }', {
      variables: { input: { label: 'gift' } },
      headers: { 'graphql-client-name': 'android', 'graphql-client-version': '3.1' },
    });
    expect(tag.body.data).toEqual({ tag: 'gift' });
    // The token's client claim wins over the header.
    const catalogue = await stack.query('query Catalogue { products(first: 2) { name } }', {
      headers: { authorization: `Bearer ${mobileToken}`, 'graphql-client-name': 'pretender' },
    });
    expect(catalogue.body.errors).toBeUndefined();
    await eventually(async () => recordedTotal(await (await fetch(stack.router.url.replace(/graphql$/, 'metrics'))).text()) >= 6, { what: 'the router to count the executions' });
    await eventually(async () => (await listed()).length >= 4, { what: 'the operations to be written' });
  }, 60_000);

  afterAll(async () => {
    await stack?.close();
    await shelf?.close();
  });

  describe('recording what runs', () => {
    it('records each distinct document per client, with its name, type, client version and count', async () => {
      const operations = await listed();
      const summary = operations.map(({ operationName, operationType, clientName, clientVersion, count }) => ({ operationName, operationType, clientName, clientVersion, count }));
      expect(summary).toEqual(
        expect.arrayContaining([
          { operationName: 'ProductPage', operationType: 'query', clientName: 'web', clientVersion: '1.2.0', count: 3 },
          { operationName: 'Shelf', operationType: 'query', clientName: 'ios', clientVersion: '5.0', count: 1 },
          { operationName: 'Tag', operationType: 'mutation', clientName: 'android', clientVersion: '3.1', count: 1 },
          { operationName: 'Catalogue', operationType: 'query', clientName: 'mobile-app', clientVersion: '', count: 1 },
        ]),
      );
      expect(summary).toHaveLength(4);
      const page = operations.find((o) => o.operationName === 'ProductPage')!;
      expect(page.hash).toMatch(/^[0-9a-f]{64}$/);
      expect(page.normalised).not.toContain('#');
      expect(page.normalised).toContain('reviews {');
    });

    it('filters by client and prints a table for people', async () => {
      expect((await listed(['--client', 'ios'])).map((o) => o.operationName)).toEqual(['Shelf']);
      const { code, stdout } = await runCli(['operations', 'list', '--since', '1d'], env);
      expect(code).toBe(0);
      expect(stdout).toMatch(/ProductPage\s+query\s+web 1\.2\.0\s+3\s/);
      expect(stdout).toMatch(/Catalogue\s+query\s+mobile-app\s+1\s/);
    });

    it('writes what it counted when a router shuts down', async () => {
      const second = await stack.startRouter();
      const { body } = await fetch(second.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'graphql-client-name': 'shutdown-probe' },
        body: JSON.stringify({ query: 'query Price { product(id: "2") { price } }' }),
      }).then(async (response) => ({ body: await response.json() }));
      expect(body.errors).toBeUndefined();
      await second.close();
      expect((await listed(['--client', 'shutdown-probe'])).map((o) => [o.operationName, o.count])).toEqual([['Price', 1]]);
    });

    it('serves new documents past the client’s hourly limit without recording them, and counts them', async () => {
      const limited = await stack.startRouter({ operationDiscoveryLimitPerHour: 2 });
      for (let n = 1; n <= 4; n += 1) {
        const response = await fetch(limited.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'graphql-client-name': 'script' },
          body: JSON.stringify({ query: `{ page${n}: product(id: "1") { name } }` }),
        });
        expect(response.status).toBe(200);
        expect((await response.json()).errors).toBeUndefined();
      }
      await limited.close();
      expect((await listed(['--client', 'script'])).map((o) => o.normalised.match(/page\d/)?.[0]).sort()).toEqual(['page1', 'page2']);
      const text = await limited.metrics.registry.metrics();
      expect(text).toContain('switchyard_operations_unrecorded_total{client="script",reason="discovery_limit"} 2');
    });

    it('refuses a window it cannot read with exit code 2', async () => {
      const { code, stderr } = await runCli(['operations', 'list', '--since', 'last tuesday'], env);
      expect(code).toBe(2);
      expect(stderr).toMatch(/--since must be a duration/);
    });
  });

  describe('subgraph check', () => {
    it('fails when a field an operation reads is removed, naming the operation, client and why', async () => {
      const schema = await candidate('reviews-no-body.graphql', (await reviewsSdl()).replace(/\n\s*body: String!/, ''));
      const { code, stdout } = await runCli(['subgraph', 'check', 'reviews', '--schema', schema], env);
      expect(code).toBe(1);
      expect(stdout).toMatch(/BREAKING\s+FIELD_REMOVED\s+Field 'body' was removed from object type 'Review'/);
      expect(stdout).toMatch(/ProductPage\s+client web 1\.2\.0\s+last seen \S+\s+count 3/);
      expect(stdout).toMatch(/Cannot query field "body" on type "Review"\. \(line \d+, column \d+\)/);
      expect(stdout).not.toMatch(/Shelf|Catalogue|Tag/);
    });

    it('fails when an input field an operation sends in a variable becomes non-null', async () => {
      const schema = await candidate('shelf-note-required.graphql', SHELF_SDL.replace('note: String', 'note: String!'));
      const { code, stdout } = await runCli(['subgraph', 'check', 'shelf', '--schema', schema, '--json'], env);
      expect(code).toBe(1);
      const report = JSON.parse(stdout);
      expect(report.ok).toBe(false);
      expect(report.changes).toContainEqual(expect.objectContaining({ level: 'breaking', type: 'INPUT_FIELD_TYPE_CHANGED', path: 'TagInput.note' }));
      expect(report.brokenOperations).toEqual([
        expect.objectContaining({ name: 'Tag', client: 'android', version: '3.1', count: 1, problems: [expect.objectContaining({ message: expect.stringMatching(/\$input.*TagInput/) })] }),
      ]);
    });

    it('fails when an enum value an operation uses is removed', async () => {
      const schema = await candidate('shelf-no-newest.graphql', SHELF_SDL.replace(' NEWEST ', ' '));
      const { code, stdout } = await runCli(['subgraph', 'check', 'shelf', '--schema', schema], env);
      expect(code).toBe(1);
      expect(stdout).toMatch(/BREAKING\s+ENUM_VALUE_REMOVED/);
      expect(stdout).toMatch(/Shelf\s+client ios 5\.0/);
      expect(stdout).toMatch(/Value "NEWEST" does not exist in "ShelfSort" enum/);
    });

    it('fails when a required argument is added to a field an operation reads', async () => {
      const schema = await candidate('product-region.graphql', (await productSdl()).replace('products(first: Int = 10)', 'products(first: Int = 10, region: String!)'));
      const { code, stdout } = await runCli(['subgraph', 'check', 'product', '--schema', schema], env);
      expect(code).toBe(1);
      expect(stdout).toMatch(/BREAKING\s+FIELD_ARGUMENT_ADDED/);
      expect(stdout).toMatch(/Catalogue\s+client mobile-app\s+last seen/);
      expect(stdout).toMatch(/argument "region" of type "String!" is required/);
    });

    it('passes a safe change and lists it', async () => {
      const schema = await candidate('reviews-title.graphql', (await reviewsSdl()).replace(/\n\s*rating: Int!/, '\n  rating: Int!\n  title: String'));
      const { code, stdout } = await runCli(['subgraph', 'check', 'reviews', '--schema', schema], env);
      expect(stdout).toMatch(/SAFE\s+FIELD_ADDED\s+Field 'title' was added to object type 'Review'/);
      expect(stdout).toMatch(/No operation seen since \S+ breaks \(\d+ checked\)/);
      expect(code).toBe(0);
    });

    it('reports but allows removing a field nobody queried in the window', async () => {
      const schema = await candidate('reviews-no-author.graphql', (await reviewsSdl()).replace(/\n\s*author: String\n/, '\n').replace(', author: String)', ')'));
      const { code, stdout } = await runCli(['subgraph', 'check', 'reviews', '--schema', schema], env);
      expect(stdout).toMatch(/BREAKING\s+FIELD_REMOVED\s+Field 'author' was removed from object type 'Review'/);
      expect(stdout).toMatch(/touch nothing clients used in that window: allowed/);
      expect(code).toBe(0);
    });

    it('prints composition errors as publish does', async () => {
      const schema = await candidate('reviews-clash.graphql', 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])\ntype Product @key(fields: "id") { id: ID! name: Int! }\n');
      const { code, stdout } = await runCli(['subgraph', 'check', 'clash', '--schema', schema], env);
      expect(code).toBe(1);
      expect(stdout).toMatch(/the subgraphs would not compose/);
      expect(stdout).toMatch(/Product\.name/);
    });

    it('reads the candidate from a running subgraph with --url', async () => {
      const { code, stdout } = await runCli(['subgraph', 'check', 'shelf', '--url', shelf.url], env);
      expect(stdout).toMatch(/No change to the API schema\./);
      expect(code).toBe(0);
    });

    it('answers bad input with exit code 2', async () => {
      expect((await runCli(['subgraph', 'check', 'reviews'], env)).code).toBe(2);
      expect((await runCli(['subgraph', 'check', 'reviews', '--schema', file('missing.graphql')], env)).code).toBe(2);
    });
  });

  describe('subgraph publish runs the check first', () => {
    it('refuses a change that breaks an operation in use and stores nothing', async () => {
      const schema = await candidate('reviews-no-body-publish.graphql', (await reviewsSdl()).replace(/\n\s*body: String!/, ''));
      const url = stack.subgraphs.reviews.running.url;
      const { code, stderr } = await runCli(['subgraph', 'publish', 'reviews', '--url', url, '--schema', schema], env);
      expect(code).toBe(1);
      expect(stderr).toMatch(/publish of "reviews" refused: operations in use would break/);
      expect(stderr).toMatch(/ProductPage\s+client web 1\.2\.0/);
      const supergraph = await runCli(['supergraph'], env);
      expect(supergraph.stdout).toMatch(/body: String!/);
      expect((await stack.query(PRODUCT_PAGE)).body.errors).toBeUndefined();
    });

    it('publishes a safe change', async () => {
      const schema = await candidate('reviews-title-publish.graphql', (await reviewsSdl()).replace(/\n\s*rating: Int!/, '\n  rating: Int!\n  title: String'));
      const { code, stdout } = await runCli(['subgraph', 'publish', 'reviews', '--url', stack.subgraphs.reviews.running.url, '--schema', schema], env);
      expect(code).toBe(0);
      expect(stdout).toContain('published reviews');
    });

    it('publishes a breaking change with --force and writes the operations it breaks to the audit log', async () => {
      const schema = await candidate('reviews-no-body-forced.graphql', (await reviewsSdl()).replace(/\n\s*body: String!/, ''));
      const url = stack.subgraphs.reviews.running.url;
      const { code, stdout, stderr } = await runCli(['subgraph', 'publish', 'reviews', '--url', url, '--schema', schema, '--force'], env);
      expect(code).toBe(0);
      expect(stdout).toContain('published reviews');
      expect(stderr).toMatch(/operations in use break \(--force\); written to the audit log/);
      await eventually(async () => (await stack.query(PRODUCT_PAGE)).status === 400, { what: 'the router to serve the forced publish' });
      const audit = await runCli(['audit', '--json', '--operation', 'subgraph publish --force'], env);
      const [row] = JSON.parse(audit.stdout);
      expect(row).toMatchObject({ client: 'switchyard-cli', subgraphs: ['reviews'], errorCodes: ['BREAKING_CHANGE_FORCED'] });
      expect(row.detail.brokenOperations).toContainEqual(expect.objectContaining({ name: 'ProductPage', client: 'web', version: '1.2.0', problems: ['Cannot query field "body" on type "Review".'] }));
    });

    it('does not hold the next publish hostage to operations the served graph already breaks', async () => {
      const schema = await candidate('reviews-no-body-title.graphql', (await reviewsSdl()).replace(/\n\s*body: String!/, '').replace(/\n\s*rating: Int!/, '\n  rating: Int!\n  title: String'));
      const check = await runCli(['subgraph', 'check', 'reviews', '--schema', schema], env);
      expect(check.stdout).toMatch(/operations? seen in the window already fails? against the graph served now/);
      expect(check.code).toBe(0);
      const { code } = await runCli(['subgraph', 'publish', 'reviews', '--url', stack.subgraphs.reviews.running.url, '--schema', schema], env);
      expect(code).toBe(0);
    });
  });
});

const PRODUCT_NAME = 'query ProductName($id: ID!) { product(id: $id) { name } }';
const PRODUCT_NAME_ID = createHash('sha256').update(PRODUCT_NAME).digest('hex');
const REVIEW_RATING = 'query ReviewRating { review(id: "r-1") { rating } }';
const REVIEW_RATING_HASH = createHash('sha256').update(REVIEW_RATING).digest('hex');

/** A GraphQL request by id or text, POST or GET, as client libraries send it. */
async function send(url: string, method: 'POST' | 'GET', params: Record<string, unknown>, extraHeaders: Record<string, string> = {}) {
  const headers = { accept: 'application/graphql-response+json', 'graphql-require-preflight': '1', ...extraHeaders };
  let response: Response;
  if (method === 'POST') response = await fetch(url, { method, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(params) });
  else {
    const search = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
    response = await fetch(`${url}?${search}`, { method, headers });
  }
  return { status: response.status, body: (await response.json()) as { data?: any; errors?: { message: string; extensions?: Record<string, any> }[] } };
}

describe(`trusted documents (${databaseKind} database)`, () => {
  let stack: Stack;
  let env: Record<string, string | undefined>;
  let allow: RunningRouter;
  let enforce: RunningRouter;
  let off: RunningRouter;
  const file = (name: string) => path.join(stack.store.dataDir, name);

  beforeAll(async () => {
    stack = await startStack({ config: { trustedDocuments: 'allow' } });
    env = storeEnv(stack.store);
    allow = stack.router;
    enforce = await stack.startRouter({ trustedDocuments: 'enforce' });
    off = await stack.startRouter({ trustedDocuments: 'off' });
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('registers an Apollo manifest and a Relay manifest, live on both routers while they run', async () => {
    await writeFile(file('apollo.json'), JSON.stringify({ format: 'apollo-persisted-query-manifest', version: 1, operations: [{ id: PRODUCT_NAME_ID, name: 'ProductName', type: 'query', body: PRODUCT_NAME }] }));
    await writeFile(file('relay.json'), JSON.stringify({ 'relay-review-rating': REVIEW_RATING }));
    const apollo = await runCli(['operations', 'publish', '--client', 'web', '--version', '2.0.0', file('apollo.json')], env);
    expect({ code: apollo.code, stderr: apollo.stderr }).toEqual({ code: 0, stderr: '' });
    expect(apollo.stdout).toMatch(/published 1 document for web 2\.0\.0 \(1 new, 0 already registered\)/);
    const relay = await runCli(['operations', 'publish', '--client', 'ios', file('relay.json')], env);
    expect(relay.code).toBe(0);
    for (const router of [allow, enforce]) {
      await eventually(async () => (await send(router.url, 'POST', { documentId: 'relay-review-rating' })).status === 200, { what: `${router.url} to know the Relay document` });
      await eventually(async () => (await send(router.url, 'POST', { documentId: PRODUCT_NAME_ID, variables: { id: '1' } })).status === 200, { what: `${router.url} to know the Apollo document` });
    }
  });

  it('runs a document by documentId and by persisted-query hash, over POST and GET', async () => {
    const apq = (hash: string) => ({ extensions: { persistedQuery: { version: 1, sha256Hash: hash } } });
    for (const method of ['POST', 'GET'] as const) {
      const byId = await send(enforce.url, method, { documentId: PRODUCT_NAME_ID, variables: { id: '1' } });
      expect(byId, method).toMatchObject({ status: 200, body: { data: { product: { name: expect.any(String) } } } });
      const byRelayId = await send(enforce.url, method, { documentId: 'relay-review-rating' });
      expect(byRelayId, method).toMatchObject({ status: 200, body: { data: { review: { rating: expect.any(Number) } } } });
      const byHash = await send(enforce.url, method, { ...apq(PRODUCT_NAME_ID), variables: { id: '2' } });
      expect(byHash, method).toMatchObject({ status: 200, body: { data: { product: { name: expect.any(String) } } } });
      // A Relay document is found by its body's SHA-256 too, as APQ clients compute it.
      const relayByHash = await send(enforce.url, method, apq(REVIEW_RATING_HASH));
      expect(relayByHash, method).toMatchObject({ status: 200, body: { data: { review: { rating: expect.any(Number) } } } });
    }
  });

  it('enforce: free text is DOCUMENT_NOT_TRUSTED and an unknown id PERSISTED_DOCUMENT_NOT_FOUND, both 400', async () => {
    for (const method of ['POST', 'GET'] as const) {
      const text = await send(enforce.url, method, { query: '{ product(id: "1") { name } }' });
      expect(text.status, method).toBe(400);
      expect(text.body.errors?.[0].extensions?.code).toBe('DOCUMENT_NOT_TRUSTED');
      const unknown = await send(enforce.url, method, { documentId: 'no-such-document' });
      expect(unknown.status, method).toBe(400);
      expect(unknown.body.errors?.[0].extensions?.code).toBe('PERSISTED_DOCUMENT_NOT_FOUND');
    }
    // Ops see the refusals by code.
    const refusals = (code: string) => readMetric(enforce, 'switchyard_trusted_document_refusals_total', { code });
    expect({ notTrusted: await refusals('DOCUMENT_NOT_TRUSTED'), notFound: await refusals('PERSISTED_DOCUMENT_NOT_FOUND') }).toEqual({ notTrusted: 2, notFound: 2 });
  });

  it('allow: registered ids and free text both run; an unknown id is PERSISTED_DOCUMENT_NOT_FOUND', async () => {
    expect(await send(allow.url, 'POST', { query: '{ product(id: "1") { name } }' })).toMatchObject({ status: 200, body: { data: { product: { name: expect.any(String) } } } });
    expect(await send(allow.url, 'GET', { documentId: PRODUCT_NAME_ID, variables: { id: '3' } })).toMatchObject({ status: 200 });
    const unknown = await send(allow.url, 'POST', { documentId: 'no-such-document' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors?.[0].extensions?.code).toBe('PERSISTED_DOCUMENT_NOT_FOUND');
  });

  it('off: free text runs and document ids are not accepted', async () => {
    expect(await send(off.url, 'POST', { query: '{ product(id: "1") { name } }' })).toMatchObject({ status: 200 });
    const byId = await send(off.url, 'POST', { documentId: PRODUCT_NAME_ID, variables: { id: '1' } });
    expect(byId.status).toBe(400);
    expect(byId.body.data).toBeUndefined();
  });

  it('refuses a manifest that gives a registered id another document, and one it cannot read, storing nothing', async () => {
    await writeFile(file('clash.json'), JSON.stringify({ 'relay-review-rating': 'query ReviewRating { review(id: "2") { rating } }', 'relay-new': '{ products { name } }' }));
    const clash = await runCli(['operations', 'publish', '--client', 'ios', file('clash.json')], env);
    expect(clash.code).toBe(2);
    expect(clash.stderr).toMatch(/already registered with another document: relay-review-rating/);
    expect((await send(enforce.url, 'POST', { documentId: 'relay-new' })).body.errors?.[0].extensions?.code).toBe('PERSISTED_DOCUMENT_NOT_FOUND');
    await writeFile(file('broken.json'), JSON.stringify({ format: 'apollo-persisted-query-manifest', version: 1, operations: [{ id: 'x', body: 'query {' }] }));
    const broken = await runCli(['operations', 'publish', '--client', 'web', file('broken.json')], env);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/document x does not parse/);
  });

  it('subgraph check validates the trusted documents too', async () => {
    await writeFile(file('reviews-no-rating.graphql'), (await readFile(path.join(PACKAGE_ROOT, 'schema', 'reviews.graphql'), 'utf8')).replace(/\n\s*"1 to 5\."\n\s*rating: Int!/, '').replace(', rating: Int!', ''));
    const { code, stdout } = await runCli(['subgraph', 'check', 'reviews', '--schema', file('reviews-no-rating.graphql')], env);
    expect(code).toBe(1);
    expect(stdout).toMatch(/ReviewRating\s+client ios\s+trusted document relay-review-rating/);
    expect(stdout).toMatch(/Cannot query field "rating" on type "Review"/);
  });

  describe('no document runs under a name that is not its own, in every mode', () => {
    // A text that borrows the names of registered documents; it must never run, nor be recorded under them.
    const SMUGGLED = 'query Smuggled { products(first: 3) { name price } }';
    const UNKNOWN_HASH = createHash('sha256').update('{ never { published } }').digest('hex');
    const apq = (hash: string) => ({ extensions: { persistedQuery: { version: 1, sha256Hash: hash } } });
    /** Each request that names its document twice, and the code it is refused with. */
    const TWICE_NAMED: [string, Record<string, unknown>, string][] = [
      ['a registered hash with another text', { query: SMUGGLED, ...apq(PRODUCT_NAME_ID) }, 'PERSISTED_QUERY_HASH_MISMATCH'],
      ['an unknown hash with a text', { query: SMUGGLED, ...apq(UNKNOWN_HASH) }, 'PERSISTED_QUERY_HASH_MISMATCH'],
      ['an unknown documentId with a text', { documentId: 'no-such-document', query: SMUGGLED }, 'AMBIGUOUS_DOCUMENT'],
      ['a registered documentId with another text', { documentId: 'relay-review-rating', query: SMUGGLED }, 'AMBIGUOUS_DOCUMENT'],
      ['a registered documentId with its own text', { documentId: PRODUCT_NAME_ID, query: PRODUCT_NAME, variables: { id: '1' } }, 'AMBIGUOUS_DOCUMENT'],
    ];
    const CLIENT = 'identity-probe';
    const modes = () => [['off', off], ['allow', allow], ['enforce', enforce]] as const;
    const refusedIds = new Map<string, string>();
    let since: Date;

    beforeAll(() => {
      since = new Date();
    });

    it('refuses each with 400 and its code, over POST and GET, calling nothing', async () => {
      for (const [mode, router] of modes()) {
        for (const method of ['POST', 'GET'] as const) {
          for (const [index, [what, params, code]] of TWICE_NAMED.entries()) {
            const requestId = `identity-${mode}-${method}-${index}`;
            const answer = await send(router.url, method, params, { 'x-request-id': requestId, 'graphql-client-name': CLIENT });
            expect({ status: answer.status, code: answer.body.errors?.[0].extensions?.code, data: answer.body.data }, `${mode} ${method}: ${what}`).toEqual({ status: 400, code, data: undefined });
            refusedIds.set(requestId, code);
          }
        }
        const refusals = (code: string) => readMetric(router, 'switchyard_trusted_document_refusals_total', { code });
        expect({ mismatch: await refusals('PERSISTED_QUERY_HASH_MISMATCH'), ambiguous: await refusals('AMBIGUOUS_DOCUMENT') }, mode).toEqual({ mismatch: 4, ambiguous: 6 });
      }
      const [refused] = (await send(allow.url, 'POST', TWICE_NAMED[0][1])).body.errors!;
      expect(refused.message).toMatch(/not the SHA-256 of the query text/);
      const [ambiguous] = (await send(allow.url, 'POST', TWICE_NAMED[2][1])).body.errors!;
      expect(ambiguous.message).toMatch(/both a documentId and the query text/);
    });

    it('lets a hash come with its own text (Apollo’s APQ registration): the text runs as itself where free text may run', async () => {
      const registration = { query: PRODUCT_NAME, variables: { id: '1' }, ...apq(PRODUCT_NAME_ID) };
      for (const method of ['POST', 'GET'] as const) {
        for (const router of [off, allow]) {
          expect(await send(router.url, method, registration, { 'graphql-client-name': CLIENT }), `${router.url} ${method}`).toMatchObject({ status: 200, body: { data: { product: { name: expect.any(String) } } } });
        }
        const requestId = `identity-enforce-${method}-registration`;
        const enforced = await send(enforce.url, method, registration, { 'x-request-id': requestId });
        expect({ status: enforced.status, code: enforced.body.errors?.[0].extensions?.code }, method).toEqual({ status: 400, code: 'DOCUMENT_NOT_TRUSTED' });
        refusedIds.set(requestId, 'DOCUMENT_NOT_TRUSTED');
      }
    });

    it('writes each refusal to the audit log as a refusal, claiming no document', async () => {
      const rowsOf = async () => (await queryAudit(stack.db, { since, limit: 1000 })).filter((row) => refusedIds.has(row.requestId));
      await eventually(async () => (await rowsOf()).length === refusedIds.size, { what: `${refusedIds.size} audit rows` });
      for (const row of await rowsOf()) {
        const code = refusedIds.get(row.requestId);
        expect({ status: row.status, errorCodes: row.errorCodes, operationHash: row.operationHash, operationName: row.operationName, subgraphs: row.subgraphs }, row.requestId).toEqual({
          status: 400,
          errorCodes: [code],
          // A text refused by enforce is hashed as sent: its own hash, the name it came with.
          operationHash: code === 'DOCUMENT_NOT_TRUSTED' ? PRODUCT_NAME_ID : null,
          operationName: null,
          subgraphs: [],
        });
      }
    });

    it('records none of them in the operation registry', async () => {
      // A marker through each router after the refusals: once all three are written, anything recorded before them is too.
      for (const [mode, router] of modes()) {
        const marker = await send(router.url, 'POST', mode === 'enforce' ? { documentId: 'relay-review-rating' } : { query: `query IdentityMarker_${mode} { product(id: "2") { name } }` }, { 'graphql-client-name': CLIENT });
        expect(marker.status, mode).toBe(200);
      }
      const recorded = async () => {
        const { code, stdout, stderr } = await runCli(['operations', 'list', '--json', '--client', CLIENT], env);
        expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
        return (JSON.parse(stdout) as ListedOperation[]).map((operation) => operation.operationName).sort();
      };
      await eventually(async () => (await recorded()).filter((name) => name === 'ReviewRating' || name?.startsWith('IdentityMarker_')).length === 3, { what: 'the markers to be recorded' });
      // ProductName ran under its own hash (the APQ registration above); Smuggled never ran, under any name.
      expect(await recorded()).toEqual(['IdentityMarker_allow', 'IdentityMarker_off', 'ProductName', 'ReviewRating']);
    });
  });
});
