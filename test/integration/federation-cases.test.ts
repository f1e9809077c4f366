// Federation v2 cases, one supergraph each: every query's data and errors against hand-written answers, and the engine that ran it.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeSupergraph } from '../../src/gateway/compose.js';
import { loadConfig } from '../../src/config/load-config.js';
import { startRouter, type RunningRouter } from '../../src/cli/start-router.js';
import { postGraphQL } from '../helpers/http.js';
import { readMetric } from '../helpers/stack.js';
import { startFixtureSubgraph, type RunningFixture } from '../helpers/fixture-subgraph.js';
import { FEDERATION_CASES, type FederationCase } from '../fixtures/federation-cases/index.js';

/**
 * Every query must run on a plan (issue 13: plans cover every Federation v2 case, mutations included).
 * SWITCHYARD_QUERY_PLANS=false runs the same cases by stitching alone, to tell a planner failure from a
 * fixture mistake; the router then counts no executions (the query-plans plugin is not installed) and
 * the engine is not checked.
 */
const QUERY_PLANS = loadConfig({}, { SWITCHYARD_QUERY_PLANS: process.env.SWITCHYARD_QUERY_PLANS }).queryPlans;
const ENGINES = ['plan', 'stitching', 'plan_error'] as const;

/** A case's subgraphs on ephemeral ports and a router serving their supergraph from a file (no registry). */
async function startCase(federationCase: FederationCase, dir: string) {
  const subgraphs: RunningFixture[] = [];
  try {
    for (const s of federationCase.subgraphs) subgraphs.push(await startFixtureSubgraph({ sdl: s.sdl, resolvers: s.resolvers }));
    const outcome = composeSupergraph(federationCase.subgraphs.map((s, i) => ({ name: s.name, url: subgraphs[i].url, sdl: s.sdl })));
    if (!outcome.ok) throw new Error(`case ${federationCase.name} does not compose:\n${outcome.errors.map((e) => `${e.code}: ${e.message}`).join('\n')}`);
    const file = path.join(dir, `${federationCase.name}.graphql`);
    await writeFile(file, outcome.supergraphSdl);
    // `verify`: answers from graphql-js, each compared with the compiled projection's (asserted per query).
    const router = await startRouter({ config: loadConfig({ port: 0, logLevel: 'silent', supergraphFile: file, dataDir: dir, queryPlans: QUERY_PLANS, answerProjection: 'verify' }, {}) });
    // The other engine on the same subgraphs: a plan must never cost more subgraph requests than stitching.
    const stitching = QUERY_PLANS && !federationCase.stitchingCannotRun ? await startRouter({ config: loadConfig({ port: 0, logLevel: 'silent', supergraphFile: file, dataDir: dir, queryPlans: false }, {}) }) : undefined;
    return { router, stitching, subgraphs };
  } catch (error) {
    await Promise.all(subgraphs.map((s) => s.close()));
    throw error;
  }
}

/** How many operations each engine ran so far. */
async function executions(router: RunningRouter): Promise<Record<(typeof ENGINES)[number], number>> {
  const [plan, stitching, planError] = await Promise.all(ENGINES.map((engine) => readMetric(router, 'switchyard_executions_total', { path: engine })));
  return { plan, stitching, plan_error: planError };
}

describe(`Federation v2 cases, each on its own supergraph (${QUERY_PLANS ? 'query plans' : 'stitching only'})`, () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'switchyard-cases-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  for (const federationCase of FEDERATION_CASES) {
    describe(`${federationCase.name}: ${federationCase.title}`, () => {
      let started: Awaited<ReturnType<typeof startCase>> | undefined;
      beforeAll(async () => {
        started = await startCase(federationCase, dir);
      });
      afterAll(async () => {
        await started?.router.close();
        await started?.stitching?.close();
        await Promise.all(started?.subgraphs.map((s) => s.close()) ?? []);
      });

      for (const q of federationCase.queries) {
        it(q.name, async () => {
          const router = started!.router;
          const before = await executions(router);
          const mismatchesBefore = await readMetric(router, 'switchyard_projection_mismatches_total', {});
          const requests = () => started!.subgraphs.reduce((sum, s) => sum + s.requests.length, 0);
          const requestsBefore = requests();
          const { body } = await postGraphQL(router.url, q.query, { variables: q.variables });
          const planRequests = requests() - requestsBefore;
          const after = await executions(router);
          // Soft: a wrong engine and wrong data are both reported for the same query.
          expect.soft(body.data ?? null, 'data').toEqual(q.expected.data);
          // Errors compared by path (in path order) and by code where the case pins one.
          const byPath = (a: { path?: unknown }, b: { path?: unknown }) => String(JSON.stringify(a.path)).localeCompare(String(JSON.stringify(b.path)));
          const errors = (body.errors ?? []).map((e) => ({ path: e.path, code: e.extensions?.code })).sort(byPath);
          const expectedErrors = (q.expected.errors ?? [])
            .map((e) => ({ path: e.path, code: e.code ?? errors.find((got) => JSON.stringify(got.path) === JSON.stringify(e.path))?.code }))
            .sort(byPath);
          expect.soft(errors, `errors (${body.errors?.map((e) => e.message).join(' | ') ?? 'none'})`).toEqual(expectedErrors);
          if (QUERY_PLANS) {
            const mismatches = (await readMetric(router, 'switchyard_projection_mismatches_total', {})) - mismatchesBefore;
            expect.soft(mismatches, 'answers of the compiled projection that differ from graphql-js').toBe(0);
            const engine = ENGINES.filter((e) => after[e] > before[e]).join('+') || 'none';
            expect.soft(engine, 'engine (switchyard_executions_total{path})').toBe('plan');
            if (q.subgraphRequests !== undefined) expect.soft(planRequests, 'subgraph requests of the plan').toBe(q.subgraphRequests);
          }
          // Mutations change the fixtures' data: they run once, on the plan. A query stitching answers
          // wrong (a few here) says nothing about what the right answer costs.
          if (started!.stitching && !federationCase.stitchingCannotRun && !/^\s*mutation\b/.test(q.query)) {
            const stitchedBefore = requests();
            const stitched = await postGraphQL(started!.stitching.url, q.query, { variables: q.variables });
            const stitchedRequests = requests() - stitchedBefore;
            if (JSON.stringify(stitched.body.data ?? null) === JSON.stringify(q.expected.data)) {
              expect.soft(planRequests, 'subgraph requests of the plan, at most those of stitching').toBeLessThanOrEqual(stitchedRequests);
            }
          }
        });
      }
    });
  }
});
