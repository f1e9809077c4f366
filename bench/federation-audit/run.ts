// The public federation compatibility suite (graphql-hive/federation-gateway-audit) against Switchyard or a peer: score per suite, and subgraph calls per query.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import { loadConfig } from '../../src/config/load-config.js';
import { startRouter, type RunningRouter } from '../../src/cli/start-router.js';
import { freePort } from '../lib/free-port.js';
import { ensurePeersInstalled, PEERS_DIR } from '../gateways/peer-install.js';

const USAGE = `Usage: npm run federation-audit -- --audit-dir DIR [options]

  --audit-dir DIR   a checkout of graphql-hive/federation-gateway-audit with its dependencies installed
                    (npm install there); without it, or when DIR does not hold the suite, the run says so
                    and exits 0 (CI has no copy of the suite)
  --suite ID        run only this suite (repeatable)
  --gateway NAME    switchyard (default) or hive-gateway (bench/peers' install), for comparing call counts
  --punish          PUNISH_FOR_POOR_PLANS=1: the suite's subgraphs fail calls a good plan would not make
  --verbose         print each failing query with what was expected and what came back
  --json FILE       write every query's outcome and subgraph calls to FILE
  --markdown FILE   write the score as a Markdown table (suite, passed, total, subgraph calls) to FILE`;

/** One query of a suite: what the suite expects (`errors` true/false when it pins them, absent when it does not care). */
interface AuditTest {
  query: string;
  expected: { data?: unknown; errors?: boolean };
}

interface QueryOutcome {
  suite: string;
  index: number;
  passed: boolean;
  /** Subgraph requests the gateway made for this query. */
  calls: number;
  /** Operations this query ran by stitching (Switchyard only): must stay 0. */
  stitched: number;
  query: string;
  expected: unknown;
  received: unknown;
}

interface Gateway {
  url: string;
  /** Operations executed by stitching so far (Switchyard's `switchyard_executions_total{path="stitching"}`); 0 for a peer. */
  stitched(): Promise<number>;
  close(): Promise<void>;
}

/** Node 20 has no Promise.withResolvers, which the suite's server uses: its own server is started through this shim. */
const SERVE_SHIM = `
if (!Promise.withResolvers) Promise.withResolvers = function () { let resolve, reject; const promise = new Promise((a, b) => { resolve = a; reject = b; }); return { promise, resolve, reject }; };
const [dir, port] = process.argv.slice(-2);
const { serve } = await import(dir + '/src/index.ts');
await serve(Number(port));
console.log('audit server ready on ' + port);
`;

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      'audit-dir': { type: 'string' },
      suite: { type: 'string', multiple: true },
      gateway: { type: 'string', default: 'switchyard' },
      punish: { type: 'boolean', default: false },
      verbose: { type: 'boolean', default: false },
      json: { type: 'string' },
      markdown: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const auditDir = values['audit-dir'] ? path.resolve(values['audit-dir']) : undefined;
  if (!auditDir || !existsSync(path.join(auditDir, 'src', 'test-suites')) || !existsSync(path.join(auditDir, 'node_modules', 'tsx'))) {
    console.log(`federation audit skipped: ${auditDir ? `${auditDir} holds no installed copy of the suite (src/test-suites and node_modules/tsx)` : 'no --audit-dir'}.`);
    console.log('Fetch graphql-hive/federation-gateway-audit into a folder outside this repo, run npm install there, and pass it as --audit-dir.');
    return 0;
  }
  if (values.gateway !== 'switchyard' && values.gateway !== 'hive-gateway') throw new Error(`unknown --gateway ${values.gateway}\n\n${USAGE}`);

  const work = await mkdtemp(path.join(tmpdir(), 'switchyard-audit-'));
  const auditPort = await freePort();
  const server = await startAuditServer(auditDir, auditPort, work, values.punish);
  const counter = await startCountingProxy(auditPort);
  const outcomes: QueryOutcome[] = [];
  try {
    const ids = (await (await fetch(`${counter.url}/ids`)).json()) as string[];
    const chosen = values.suite && values.suite.length > 0 ? ids.filter((id) => values.suite!.includes(id)) : ids;
    for (const id of chosen) {
      // Through the proxy: the supergraph's subgraph URLs take the origin it was asked from, so every call is counted.
      const supergraph = await (await fetch(`${counter.url}/${id}/supergraph`)).text();
      const tests = (await (await fetch(`${counter.url}/${id}/tests`)).json()) as AuditTest[];
      const file = path.join(work, `${id}.graphql`);
      await writeFile(file, supergraph);
      const gateway = values.gateway === 'switchyard' ? await startSwitchyard(file, work) : await startHiveGateway(file, work);
      try {
        for (const [index, test] of tests.entries()) {
          const callsBefore = counter.calls;
          const stitchedBefore = await gateway.stitched();
          const received = await ask(gateway.url, test.query);
          const calls = counter.calls - callsBefore;
          const stitched = (await gateway.stitched()) - stitchedBefore;
          const errorsPinned = typeof test.expected.errors === 'boolean';
          const got = { data: received.data ?? null, errors: errorsPinned ? Boolean(received.errors?.length) : null };
          const want = { data: test.expected.data ?? null, errors: errorsPinned ? test.expected.errors : null };
          const passed = isDeepStrictEqual(got, want) && stitched === 0;
          outcomes.push({ suite: id, index, passed, calls, stitched, query: test.query, expected: want, received });
          if (!passed && values.verbose) {
            console.log(`\n✗ ${id} #${index}${stitched > 0 ? ' (ran by stitching)' : ''}\n${test.query.trim()}\n  expected ${JSON.stringify(want)}\n  received ${JSON.stringify(received)}`);
          }
        }
      } finally {
        await gateway.close();
      }
      const mine = outcomes.filter((o) => o.suite === id);
      console.log(`${mine.every((o) => o.passed) ? '✓' : '✗'} ${id.padEnd(40)} ${mine.filter((o) => o.passed).length}/${mine.length}  calls ${mine.map((o) => o.calls).join(' ')}`);
    }
  } finally {
    await counter.close();
    server.kill();
    await rm(work, { recursive: true, force: true });
  }
  const suites = new Set(outcomes.map((o) => o.suite));
  const passedSuites = [...suites].filter((id) => outcomes.filter((o) => o.suite === id).every((o) => o.passed)).length;
  const passed = outcomes.filter((o) => o.passed).length;
  console.log(`\n${values.gateway}${values.punish ? ' (PUNISH_FOR_POOR_PLANS=1)' : ''}: ${passed} of ${outcomes.length} queries, ${passedSuites} of ${suites.size} suites; subgraph calls ${outcomes.reduce((n, o) => n + o.calls, 0)}`);
  if (values.json) await writeFile(values.json, JSON.stringify(outcomes, null, 2));
  if (values.markdown) await writeFile(values.markdown, markdownTable(outcomes));
  return 0;
}

/** The table the field publishes: one row per suite, and the totals. */
function markdownTable(outcomes: readonly QueryOutcome[]): string {
  const rows = ['| suite | passed | total | subgraph calls |', '|---|---:|---:|---:|'];
  for (const suite of [...new Set(outcomes.map((o) => o.suite))]) {
    const mine = outcomes.filter((o) => o.suite === suite);
    rows.push(`| ${suite} | ${mine.filter((o) => o.passed).length} | ${mine.length} | ${mine.reduce((n, o) => n + o.calls, 0)} |`);
  }
  rows.push(`| **all** | **${outcomes.filter((o) => o.passed).length}** | **${outcomes.length}** | **${outcomes.reduce((n, o) => n + o.calls, 0)}** |`);
  return `${rows.join('\n')}\n`;
}

/** The suite's own server (subgraphs, supergraphs and tests), from its checkout, with its own tsx. */
async function startAuditServer(auditDir: string, port: number, work: string, punish: boolean): Promise<ChildProcess> {
  const shim = path.join(work, 'serve-audit.mjs');
  await writeFile(shim, SERVE_SHIM);
  const child = spawn(process.execPath, ['--import', 'tsx', shim, auditDir, String(port)], {
    cwd: auditDir,
    env: { ...process.env, PUNISH_FOR_POOR_PLANS: punish ? '1' : '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('audit server ready')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the suite's server exited (${code}) before it was ready:\n${out}`)));
  });
  return child;
}

/** A reverse proxy in front of the suite's server that counts the subgraph requests a gateway makes. */
async function startCountingProxy(targetPort: number): Promise<{ url: string; calls: number; close(): Promise<void> }> {
  const state = { calls: 0 };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'POST') state.calls += 1;
    const upstream = httpRequest({ host: '127.0.0.1', port: targetPort, path: req.url, method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', (error) => {
      res.writeHead(502).end(String(error));
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get calls() {
      return state.calls;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Switchyard in this process, serving the suite's supergraph file with no authentication and no registry. */
async function startSwitchyard(file: string, work: string): Promise<Gateway> {
  const router: RunningRouter = await startRouter({
    config: loadConfig({ port: 0, host: '127.0.0.1', logLevel: 'silent', supergraphFile: file, dataDir: work, authMode: 'off', answerProjection: 'verify' }, {}),
  });
  return {
    url: router.url,
    async stitched() {
      const text = await (await fetch(new URL('/metrics', router.url))).text();
      const line = text.split('\n').find((l) => l.startsWith('switchyard_executions_total{') && l.includes('path="stitching"'));
      return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
    },
    close: () => router.close(),
  };
}

/** Hive Gateway from the bench's peers install, with its defaults. */
async function startHiveGateway(file: string, work: string): Promise<Gateway> {
  await ensurePeersInstalled(console.log);
  const port = await freePort();
  const bin = path.join(PEERS_DIR, 'node_modules', '@graphql-hive', 'gateway', 'dist', 'bin.js');
  const child = spawn(process.execPath, [bin, 'supergraph', file, '--host', '127.0.0.1', '--port', String(port)], { cwd: work, env: { ...process.env, NODE_ENV: 'production' }, stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}/graphql`;
  for (let attempt = 0; ; attempt++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthcheck`)).ok) break;
    } catch {
      // not listening yet
    }
    if (attempt > 300 || child.exitCode !== null) throw new Error('hive-gateway did not start');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    stitched: async () => 0,
    close: async () => {
      child.kill();
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

async function ask(url: string, query: string): Promise<{ data?: unknown; errors?: unknown[] }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
    signal: AbortSignal.timeout(10_000),
  });
  try {
    return (await response.json()) as { data?: unknown; errors?: unknown[] };
  } catch {
    return { errors: [{ message: `HTTP ${response.status}, not JSON` }] };
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(2);
  },
);
