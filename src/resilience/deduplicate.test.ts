// Unit tests of in-flight deduplication: who shares a call, who gets a copy, and who calls again.
import type { ExecutionResult } from 'graphql';
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { withDeduplication } from './deduplicate.js';
import { CallAborted, UpstreamFailure, type CallHandler, type SubgraphCall } from './subgraph-call.js';

function makeCall(overrides: Partial<SubgraphCall> = {}): SubgraphCall {
  return {
    subgraph: 'products',
    request: { document: parse('{ product(id: "1") { id } }') },
    isQuery: true,
    signal: new AbortController().signal,
    deadlineAt: 2_000,
    attempt: 'first',
    ...overrides,
  };
}

/** A subgraph whose answers the test releases one by one; counts the calls that reached it. */
function gatedSubgraph() {
  const pending: { resolve: (r: ExecutionResult) => void; reject: (e: unknown) => void }[] = [];
  const handler: CallHandler = () => new Promise((resolve, reject) => pending.push({ resolve, reject }));
  return { handler, pending, calls: () => pending.length };
}

function setup(keyOf: (call: SubgraphCall) => string | undefined = (call) => String(call.request.variables?.id ?? '')) {
  const subgraph = gatedSubgraph();
  const shared: SubgraphCall[] = [];
  const call = withDeduplication({ keyOf, copy: (r) => structuredClone(r), onShared: (c) => shared.push(c), now: () => 0 })(subgraph.handler);
  return { subgraph, shared, call };
}

const answer = (id: string): ExecutionResult => ({ data: { product: { id } } });

describe('deduplication of identical queries in flight', () => {
  it('sends one call for identical queries in flight, and gives each joiner its own copy', async () => {
    const { subgraph, shared, call } = setup();
    const results = [call(makeCall()), call(makeCall()), call(makeCall())];
    expect(subgraph.calls()).toBe(1);
    expect(shared).toHaveLength(2);
    const first = answer('1');
    subgraph.pending[0]!.resolve(first);
    const [a, b, c] = await Promise.all(results);
    expect(a).toBe(first);
    expect(b).toEqual(first);
    expect(c).toEqual(first);
    expect(b).not.toBe(first);
    expect(c).not.toBe(b);
  });

  it('shares nothing once the call has settled: it is no cache', async () => {
    const { subgraph, call } = setup();
    const one = call(makeCall());
    subgraph.pending[0]!.resolve(answer('1'));
    await one;
    const two = call(makeCall());
    expect(subgraph.calls()).toBe(2);
    subgraph.pending[1]!.resolve(answer('1'));
    await two;
  });

  it('never shares mutations, calls with other keys, or calls without a key', async () => {
    const { subgraph, call } = setup((c) => (c.request.variables?.id === 'secret' ? undefined : String(c.request.variables?.id)));
    void call(makeCall({ isQuery: false }));
    void call(makeCall({ isQuery: false }));
    void call(makeCall({ request: { document: parse('{ a }'), variables: { id: '1' } } }));
    void call(makeCall({ request: { document: parse('{ a }'), variables: { id: '2' } } }));
    void call(makeCall({ request: { document: parse('{ a }'), variables: { id: 'secret' } } }));
    void call(makeCall({ request: { document: parse('{ a }'), variables: { id: 'secret' } } }));
    expect(subgraph.calls()).toBe(6);
    for (const p of subgraph.pending) p.resolve(answer('x'));
  });

  it('does not join a call that may run past its own deadline', async () => {
    const { subgraph, call } = setup();
    void call(makeCall({ deadlineAt: 2_000 }));
    void call(makeCall({ deadlineAt: 1_000 }));
    expect(subgraph.calls()).toBe(2);
    for (const p of subgraph.pending) p.resolve(answer('1'));
  });

  it('lets a joiner whose client left stop waiting, while the call goes on for the others', async () => {
    const { subgraph, call } = setup();
    const leaving = new AbortController();
    const leader = call(makeCall());
    const joiner = call(makeCall({ signal: leaving.signal }));
    leaving.abort(new CallAborted('client'));
    await expect(joiner).rejects.toMatchObject({ kind: 'cancelled' });
    subgraph.pending[0]!.resolve(answer('1'));
    await expect(leader).resolves.toEqual(answer('1'));
  });

  it('calls again for a joiner when the shared call was cancelled by its own caller', async () => {
    const { subgraph, call } = setup();
    const leader = call(makeCall());
    const joiner = call(makeCall());
    subgraph.pending[0]!.reject(new UpstreamFailure('REQUEST_CANCELLED', 'cancelled', 'the client went away'));
    await expect(leader).rejects.toMatchObject({ kind: 'cancelled' });
    await Promise.resolve();
    await Promise.resolve();
    expect(subgraph.calls()).toBe(2);
    subgraph.pending[1]!.resolve(answer('1'));
    await expect(joiner).resolves.toEqual(answer('1'));
  });

  it('passes the shared failure on when the subgraph itself failed', async () => {
    const { subgraph, call } = setup();
    const leader = call(makeCall());
    const joiner = call(makeCall());
    subgraph.pending[0]!.reject(new UpstreamFailure('SUBGRAPH_UNAVAILABLE', 'network', 'connection refused'));
    await expect(leader).rejects.toMatchObject({ code: 'SUBGRAPH_UNAVAILABLE' });
    await expect(joiner).rejects.toMatchObject({ code: 'SUBGRAPH_UNAVAILABLE' });
    expect(subgraph.calls()).toBe(1);
  });
});
