// The docker-compose.yml topology without Docker: the services and commands are read from the compose file, so the two stay in step.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli, runCli, type CliProcess } from '../helpers/cli.js';
import { createTestStore, TEST_DATABASE_URL, type TestStore } from '../helpers/database.js';
import { eventually, postGraphQL } from '../helpers/http.js';

const TEST_REDIS_URL = process.env.TEST_REDIS_URL || undefined;
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

interface ComposeService {
  build?: string;
  image?: string;
  entrypoint?: string[];
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, unknown>;
}

/** Services the compose file runs from images; CI has no Docker, so each is replaced or left out, as said here. */
const IMAGE_SERVICES = {
  postgres: 'replaced by the test database (TEST_DATABASE_URL, a fresh schema)',
  redis: "replaced by TEST_REDIS_URL's Redis when set; else a port where nothing listens, and the routers must serve on their own buckets",
  'otel-collector': 'left out: the routers export to a port where nothing listens, which must fail no request',
  jaeger: 'left out (only the collector talks to it)',
} as const;

const compose = parse(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, ComposeService> };
/** The image's `ENV` and `ENTRYPOINT` (what every service built from `.` runs with). */
const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
const imageEnv = Object.fromEntries([...dockerfile.matchAll(/^ENV\s+(.+)$/gm)].flatMap((m) => m[1].trim().split(/\s+/).map((pair) => pair.split('=') as [string, string])));
const imageEntrypoint = JSON.parse(/^ENTRYPOINT\s+(\[.*\])$/m.exec(dockerfile)![1]) as string[];

/** A free port on loopback (bound, then released); never the demo's 4000-4003. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

// The compose stack runs PostgreSQL. On the embedded database, separate processes share the store only
// through the socket a running router serves, and compose's publish step migrates and publishes before
// any router need exist: that topology has no embedded equivalent, so this file runs on PostgreSQL only.
describe.skipIf(!TEST_DATABASE_URL)('the docker-compose.yml stack without Docker (PostgreSQL only: set TEST_DATABASE_URL)', () => {
  const services = compose.services;
  const built = Object.entries(services).filter(([, s]) => s.build === '.');
  /** The one-shot step (`sh -c` entrypoint): everything else built from the image runs for good. */
  const [publishName, publish] = built.find(([, s]) => s.entrypoint?.[0] === 'sh')!;
  const longRunning = built.filter(([name]) => name !== publishName);
  const routerNames = longRunning.filter(([, s]) => s.command?.[0] === 'serve').map(([name]) => name);
  const subgraphNames = longRunning.filter(([, s]) => s.command?.[0] === 'subgraph').map(([name]) => name);

  let store: TestStore;
  const hostPort = new Map<string, number>();
  const processes = new Map<string, CliProcess>();
  let redisUrl: string;
  const routerUrl = (name: string) => `http://127.0.0.1:${hostPort.get(name)}/graphql`;

  /** Compose's addresses as this machine reaches them: `service:port` → 127.0.0.1 and the port given to that service; the database → the test store. */
  function translate(text: string): string {
    let out = text.replace(/postgres(ql)?:\/\/[^\s]*@postgres:5432\/[^\s]*/g, store.databaseUrl!);
    out = out.replace(/redis:\/\/redis:6379/g, redisUrl);
    for (const [service, port] of hostPort) out = out.replace(new RegExp(`\\b${service}:\\d+`, 'g'), `127.0.0.1:${port}`);
    // Every interface is right in a container; on a CI machine, loopback only.
    return out.replace(/\b0\.0\.0\.0\b/g, '127.0.0.1');
  }
  function envOf(service: ComposeService): Record<string, string> {
    const env: Record<string, string> = { ...imageEnv, ...service.environment };
    for (const key of Object.keys(env)) env[key] = translate(String(env[key]));
    return { ...env, HOST: '127.0.0.1' };
  }
  function argsOf(service: ComposeService, port: number): string[] {
    const args = (service.command ?? []).map((arg) => translate(arg));
    const at = args.indexOf('--port');
    if (at >= 0) args[at + 1] = String(port);
    return args;
  }

  beforeAll(async () => {
    // A compose service this test does not know about must be added here (or to IMAGE_SERVICES) on purpose.
    const images = Object.entries(services).filter(([, s]) => s.build !== '.').map(([name]) => name);
    expect(images.sort()).toEqual(Object.keys(IMAGE_SERVICES).sort());
    expect(imageEntrypoint.slice(0, 2)).toEqual(['node', 'bin/switchyard.js']);
    store = await createTestStore();
    for (const [name] of longRunning) hostPort.set(name, await freePort());
    hostPort.set('otel-collector', await freePort());
    redisUrl = TEST_REDIS_URL ?? `redis://127.0.0.1:${await freePort()}`;
    // Subgraphs and routers start together, as `docker compose up` starts them; the routers have no graph until publish.
    for (const [name, service] of longRunning) {
      processes.set(name, startCli(argsOf(service, hostPort.get(name)!), { LOG_LEVEL: 'warn', ...envOf(service) }));
    }
    await Promise.all(subgraphNames.map((name) => processes.get(name)!.waitFor(/subgraph on http/)));
    await Promise.all(routerNames.map((name) => processes.get(name)!.waitFor(/router on http/)));
  }, 60_000);

  afterAll(async () => {
    for (const running of processes.values()) await running.stop();
    await store?.destroy();
  });

  it('has the services the smoke test runs: three subgraphs requiring router tokens, a publish step, two routers', () => {
    expect(subgraphNames.sort()).toEqual(['inventory', 'product', 'reviews']);
    expect(routerNames).toHaveLength(2);
    for (const name of subgraphNames) expect(services[name].environment?.ROUTER_JWKS_URL).toMatch(/^http:\/\/router-1:\d+\/\.well-known\/jwks\.json$/);
    for (const name of routerNames) expect(services[name].environment?.REDIS_URL).toBe('redis://redis:6379');
  });

  it('the image gives the user it runs as the data folder (where the audit log spills), and only that', () => {
    const user = /^USER\s+(\S+)$/m.exec(dockerfile)?.[1];
    expect(user).toBe('node');
    // `.switchyard` is SWITCHYARD_DATA_DIR's default, relative to the WORKDIR /app; no service overrides it.
    expect(dockerfile).toMatch(new RegExp(`mkdir -p /app/\\.switchyard && chown ${user}:${user} /app/\\.switchyard`));
    for (const [, service] of built) expect(service.environment?.SWITCHYARD_DATA_DIR).toBeUndefined();
  });

  it('the subgraphs refuse a request without a router token, _service included', async () => {
    for (const name of subgraphNames) {
      const answer = await postGraphQL(`http://127.0.0.1:${hostPort.get(name)}/graphql`, '{ _service { sdl } }');
      expect(answer.status).toBe(401);
    }
  });

  it('the publish step, exactly as compose runs it, publishes the three subgraphs', async () => {
    const script = translate(publish.command![0]);
    const result = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
      const child = spawn(publish.entrypoint![0], [...publish.entrypoint!.slice(1), script], { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'warn', ...envOf(publish) }, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, output }));
    });
    expect(result.output).toMatch(/published product[\s\S]*published reviews[\s\S]*published inventory/);
    expect(result.code).toBe(0);
  }, 60_000);

  it('each router serves the product page', async () => {
    for (const name of routerNames) {
      await eventually(async () => (await fetch(routerUrl(name).replace(/graphql$/, 'readyz'))).status === 200, { what: `${name} to serve the published graph` });
      const page = await postGraphQL(routerUrl(name), 'query ProductPage($id: ID!) { product(id: $id) { name price reviews { rating author } inventory { inStock warehouse } } }', { variables: { id: '2' } });
      expect(page.status).toBe(200);
      expect(page.body.errors).toBeUndefined();
      expect(page.body.data.product).toMatchObject({ name: 'Quiet Bamboo Stool', reviews: expect.any(Array), inventory: { inStock: expect.any(Number) } });
      expect(page.headers.get('switchyard-completed')).toBe('true');
    }
  });

  it('a token from `token mint` (run with a router’s environment) authenticates a request on either router; a forged one is 401', async () => {
    const [first, second] = routerNames;
    const minted = await runCli(['token', 'mint', '--sub', 'alice', '--scope', 'reviews:read'], envOf(services[first]));
    expect(minted.code).toBe(0);
    const token = minted.stdout.trim();
    for (const name of [first, second]) {
      const page = await postGraphQL(routerUrl(name), '{ product(id: "2") { name reviews { rating } } }', { headers: { authorization: `Bearer ${token}` } });
      expect(page.status).toBe(200);
      expect(page.body.errors).toBeUndefined();
      expect(page.body.data.product.reviews.length).toBeGreaterThan(0);
    }
    const forged = await postGraphQL(routerUrl(second), '{ product(id: "2") { name } }', { headers: { authorization: `Bearer ${token.slice(0, -4)}AAAA` } });
    expect(forged.status).toBe(401);
    expect(forged.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});
