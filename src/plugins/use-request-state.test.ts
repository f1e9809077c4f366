import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { GraphHolder } from '../gateway/served-graph.js';
import { Supergraph } from '../gateway/supergraph/supergraph.js';
import { requestStateOf, type RequestState } from '../request/request-state.js';
import { useRequestState } from './use-request-state.js';

function servedGraph(answer: string) {
  return { schema: createSchema({ typeDefs: 'type Query { hello: String }', resolvers: { Query: { hello: () => answer } } }), supergraph: Supergraph.fromSdl('type Query { hello: String }'), subgraphs: [], routes: new Map(), source: 'test' };
}

/** A yoga on the request state alone, with a plugin that runs at execution start (after the state's). */
function miniRouter(graph: GraphHolder, atExecute: (state: RequestState) => void) {
  const probe: Plugin = {
    onExecute({ args }) {
      atExecute(requestStateOf(args.contextValue));
    },
  };
  return createYoga({ schema: (context) => requestStateOf(context).graph.schema, plugins: [useRequestState(graph), probe], logging: false });
}

const post = (body: string) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body });

describe('useRequestState', () => {
  it('answers 503 SCHEMA_NOT_READY while no graph is served', async () => {
    const yoga = miniRouter(new GraphHolder(), () => {});
    const response = await yoga.fetch('http://router.test/graphql', post('{"query":"{ hello }"}'));
    expect(response.status).toBe(503);
    expect(((await response.json()) as { errors: { extensions: { code: string } }[] }).errors[0].extensions.code).toBe('SCHEMA_NOT_READY');
  });

  it('gives every request one state on the graph it started on, with its operation, whatever swap happens meanwhile', async () => {
    const graph = new GraphHolder();
    const first = graph.swap(servedGraph('first'))!;
    let seen: RequestState | undefined;
    const yoga = miniRouter(graph, (state) => {
      seen = state;
      graph.swap(servedGraph('second'));
    });
    const response = await yoga.fetch('http://router.test/graphql', post('{"query":"query Hi { hello }"}'));
    expect(await response.json()).toEqual({ data: { hello: 'first' } });
    expect(seen?.graph).toBe(first);
    expect(seen?.operationName).toBe('Hi');
    expect(seen?.operation?.operation).toBe('query');
    // No deadline plugin: calls get the default deadline, and nothing was collected.
    expect(seen?.deadlineAt).toBeUndefined();
    expect(seen?.subgraphsCalled).toBeUndefined();
  });

  it('aborts the signal of a request whose client goes away, without any resilience plugin', async () => {
    const graph = new GraphHolder();
    graph.swap(servedGraph('ok'));
    // The execution holds until the client goes away; the test waits for it to start, not for a time.
    let executing!: (signal: AbortSignal) => void;
    const started = new Promise<AbortSignal>((resolve) => (executing = resolve));
    const hold: Plugin = {
      onExecute({ args }) {
        const signal = requestStateOf(args.contextValue).signal;
        executing(signal);
        return new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve())) as never;
      },
    };
    const yoga = createYoga({ schema: (context) => requestStateOf(context).graph.schema, plugins: [useRequestState(graph), hold], logging: false });
    const server = createServer(yoga);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const controller = new AbortController();
      const request = fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`, { ...post('{"query":"{ hello }"}'), signal: controller.signal }).catch(() => undefined);
      const signal = await started;
      expect(signal.aborted).toBe(false);
      controller.abort();
      // The server notices the closed connection on its own time: await the abort (the test times out without it).
      if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve));
      expect(signal.aborted).toBe(true);
      await request;
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
