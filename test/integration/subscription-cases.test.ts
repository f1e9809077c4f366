// Federated subscription cases, one supergraph each: every event through graphql-ws against its hand-written answer, completed by _entities queries on one shared upstream subscription.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ExecutionResult } from 'graphql';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { startRouter, type RunningRouter } from '../../src/cli/start-router.js';
import { eventually } from '../helpers/http.js';
import { readMetric } from '../helpers/stack.js';
import { byPath, errorsOf, startCaseSupergraph } from '../helpers/case-supergraph.js';
import type { FixtureRequest, RunningFixture } from '../helpers/fixture-subgraph.js';
import { SUBSCRIPTION_CASES, type CaseEvent } from '../fixtures/federation-cases/index.js';

/** Clients of each subscription, each on its own WebSocket: they share one upstream subscription and one completion per event. */
const CLIENTS = 2;
/** How long an expected event may take to reach a client, in ms, before the test says which one did not come. */
const EVENT_TIMEOUT_MS = 5_000;

/** The events one client receives, in order: `next()` rejects when its subscription ended or no event came in time. */
interface Received {
  next(): Promise<ExecutionResult>;
}

function receive(client: Client, query: string, variables: Record<string, unknown> | undefined): Received {
  const queue: ExecutionResult[] = [];
  const waiting: { resolve: (event: ExecutionResult) => void; reject: (error: Error) => void }[] = [];
  let ended: Error | undefined;
  const end = (error: Error) => {
    ended = error;
    for (const w of waiting.splice(0)) w.reject(error);
  };
  client.subscribe(
    { query, variables },
    {
      next: (event) => {
        const w = waiting.shift();
        if (w) w.resolve(event as ExecutionResult);
        else queue.push(event as ExecutionResult);
      },
      error: (error) => end(new Error(`the subscription failed: ${JSON.stringify(error)}`)),
      complete: () => end(new Error('the subscription completed')),
    },
  );
  return {
    next() {
      const event = queue.shift();
      if (event) return Promise.resolve(event);
      if (ended) return Promise.reject(ended);
      return new Promise<ExecutionResult>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no event within ${EVENT_TIMEOUT_MS} ms`)), EVENT_TIMEOUT_MS);
        waiting.push({
          resolve: (e) => (clearTimeout(timer), resolve(e)),
          reject: (e) => (clearTimeout(timer), reject(e)),
        });
      });
    },
  };
}

/** Requests the router sent to each subgraph since `from` (an earlier count per subgraph). */
function requestsSince(fixtures: Map<string, RunningFixture>, from: Map<string, number>): Map<string, FixtureRequest[]> {
  return new Map([...fixtures].map(([name, f]) => [name, f.requests.slice(from.get(name) ?? 0)]));
}
const countsOf = (fixtures: Map<string, RunningFixture>) => new Map([...fixtures].map(([name, f]) => [name, f.requests.length]));

/** An entity fetch: a query over HTTP whose root fields are `_entities` (aliased or not). */
const isEntityFetch = (r: FixtureRequest) => r.transport === 'http' && /^\s*(query\b[^{]*)?\{\s*(\w+\s*:\s*)?_entities\s*\(/.test(r.query);

/** `_entities` queries per subgraph, only the subgraphs that got some; every request that is not one shows as itself. */
function fetchesOf(requests: Map<string, FixtureRequest[]>): { entityFetches: Record<string, number>; others: string[] } {
  const entityFetches: Record<string, number> = {};
  const others: string[] = [];
  for (const [name, list] of requests) {
    for (const r of list) {
      if (isEntityFetch(r)) entityFetches[name] = (entityFetches[name] ?? 0) + 1;
      else others.push(`${name} (${r.transport}): ${r.query.replace(/\s+/g, ' ')}`);
    }
  }
  return { entityFetches, others };
}

/** The hand-written errors as compared: path and code (a code the case does not pin is taken from the answer got). */
function expectedErrors(event: CaseEvent, got: ReturnType<typeof errorsOf>) {
  return (event.expected?.errors ?? [])
    .map((e) => ({ path: e.path, code: e.code ?? got.find((g) => JSON.stringify(g.path) === JSON.stringify(e.path))?.code }))
    .sort(byPath);
}

describe('Federation v2 subscription cases, each on its own supergraph (graphql-ws to the router, graphql-ws upstream)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'switchyard-subscription-cases-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  for (const subscriptionCase of SUBSCRIPTION_CASES) {
    describe(`${subscriptionCase.name}: ${subscriptionCase.title}`, () => {
      let router: RunningRouter | undefined;
      const fixtures = new Map<string, RunningFixture>();
      beforeAll(async () => {
        const { subgraphs, supergraphFile } = await startCaseSupergraph(subscriptionCase.name, subscriptionCase.subgraphs, dir);
        subscriptionCase.subgraphs.forEach((s, i) => fixtures.set(s.name, subgraphs[i]));
        // Authentication off: every client is anonymous, so the clients of one subscription form one group.
        // `verify`: each event's answer from graphql-js too, compared with the compiled projection's (asserted per event).
        // The section cache is on, as by default; the fixtures give no cache hints, so every event's look-ups reach the subgraphs.
        router = await startRouter({
          config: loadConfig({ port: 0, logLevel: 'silent', supergraphFile, dataDir: dir, authMode: 'off', answerProjection: 'verify' }, {}),
        });
      });
      afterAll(async () => {
        await router?.close();
        await Promise.all([...fixtures.values()].map((f) => f.close()));
      });

      for (const subscription of subscriptionCase.subscriptions) {
        // A known router bug: the right answers must fail today; once they pass, the entry goes.
        const test = subscription.knownRouterBug === undefined ? it : it.fails;
        test(subscription.knownRouterBug === undefined ? subscription.name : `${subscription.name} (known router bug, expected to fail)`, async () => {
          const eventSubgraph = fixtures.get(subscription.subgraph);
          expect(eventSubgraph, `subgraph ${subscription.subgraph} of the case`).toBeDefined();
          const atStart = countsOf(fixtures);
          const mismatchesBefore = await readMetric(router!, 'switchyard_projection_mismatches_total', {});
          const clients = Array.from({ length: CLIENTS }, () =>
            createClient({ url: router!.url.replace(/^http/, 'ws'), webSocketImpl: WebSocket, retryAttempts: 0, lazy: true }),
          );
          try {
            const received = clients.map((client) => receive(client, subscription.query, subscription.variables));
            await subscription.source.whenListening();
            // Every client joined before the first event (the first to subscribe opened the upstream).
            await eventually(() => router!.subscriptions.size === CLIENTS, { what: `${CLIENTS} subscriptions open on the router` });

            for (const event of subscription.events) {
              const before = countsOf(fixtures);
              event.publish();
              // An event the subgraph filters out never comes: the next one's answer shows it was skipped.
              if (!event.expected) continue;
              const answers = await Promise.all(received.map((r) => r.next().catch((error: Error) => ({ errors: [{ message: error.message }] }) as unknown as ExecutionResult)));
              const context = `event "${event.name}"`;
              answers.forEach((answer, i) => {
                expect.soft(answer.data ?? null, `${context}, client ${i + 1}: data`).toEqual(event.expected!.data);
                const errors = errorsOf(answer);
                expect.soft(errors, `${context}, client ${i + 1}: errors (${answer.errors?.map((e) => e.message).join(' | ') ?? 'none'})`).toEqual(expectedErrors(event, errors));
              });
              const { entityFetches, others } = fetchesOf(requestsSince(fixtures, before));
              expect.soft(others, `${context}: subgraph requests that are not _entities queries`).toEqual([]);
              expect.soft(entityFetches, `${context}: _entities queries by subgraph, once for ${CLIENTS} clients`).toEqual(event.entityFetches);
            }

            // One subscription request, at the event's subgraph, for every client; nothing but entity fetches besides
            // (no root query, before or between events: the run was the plan's).
            const { others } = fetchesOf(requestsSince(fixtures, atStart));
            expect.soft(others, `requests other than _entities queries: one subscription, at ${subscription.subgraph}`).toEqual([
              expect.stringMatching(new RegExp(`^${subscription.subgraph} \\(websocket\\): subscription\\b`)),
            ]);
            const mismatches = (await readMetric(router!, 'switchyard_projection_mismatches_total', {})) - mismatchesBefore;
            expect.soft(mismatches, 'answers of the compiled projection that differ from graphql-js').toBe(0);
          } finally {
            await Promise.all(clients.map((client) => client.dispose()));
          }
          // Leaving releases everything: the router's subscriptions, its upstream share, the subgraph's listener.
          await eventually(() => router!.subscriptions.size === 0 && router!.upstreams.counts().upstreams === 0 && subscription.source.listeners === 0, {
            what: 'the clients gone, the upstream subscription ended, the subgraph without listeners',
          });
        });
      }
    });
  }
});
