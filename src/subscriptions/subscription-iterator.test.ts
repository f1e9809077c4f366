import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { requestError } from '../errors/client-error.js';
import type { QueryPlan } from '../gateway/plan/plan-types.js';
import { RequestState } from '../request/request-state.js';
import { ClientSubscription, type SubscriptionOwner } from './client-subscription.js';
import { SubscriptionIterator } from './subscription-iterator.js';

function opened() {
  const counts = { out: 0, dropped: 0, forgotten: [] as string[] };
  const owner: SubscriptionOwner = {
    forget: (_subscription, reason) => void counts.forgotten.push(reason),
    eventOut: () => void counts.out++,
    eventDropped: () => void counts.dropped++,
  };
  const state = new RequestState();
  const subscription = new ClientSubscription({ args: { document: parse('subscription { ticks }') }, state, plan: {} as QueryPlan }, owner);
  return { subscription, state, counts, iterator: new SubscriptionIterator(subscription) };
}

describe('SubscriptionIterator', () => {
  it('yields the events completed before and after its first pull, then an error end as a last payload naming its code', async () => {
    const { subscription, state, counts, iterator } = opened();
    subscription.push({ data: { ticks: 1 } });
    expect(await iterator.next()).toEqual({ value: { data: { ticks: 1 } }, done: false });
    subscription.push({ data: { ticks: 2 } });
    subscription.end('FORBIDDEN', requestError('FORBIDDEN', 'no more'));
    expect(await iterator.next()).toEqual({ value: { data: { ticks: 2 } }, done: false });
    const last = await iterator.next();
    expect(last.value).toMatchObject({ errors: [{ message: 'no more' }], extensions: { subscription: { ended: 'FORBIDDEN' } } });
    expect(await iterator.next()).toEqual({ value: undefined, done: true });
    await state.stream!.ended;
    expect(state.stream).toMatchObject({ payloads: 2, endReason: 'FORBIDDEN', errorCodes: ['FORBIDDEN'], complete: false });
    expect(counts).toEqual({ out: 2, dropped: 0, forgotten: ['FORBIDDEN'] });
  });

  it('at SHUTTING_DOWN the stream is cut (the pull throws), so its client reconnects elsewhere', async () => {
    const { subscription, iterator } = opened();
    const pulled = iterator.next();
    subscription.end('SHUTTING_DOWN', requestError('SHUTTING_DOWN', 'bye'));
    await expect(pulled).rejects.toThrow('bye');
  });

  it('return() ends the subscription as the client leaving', async () => {
    const { subscription, state, counts, iterator } = opened();
    subscription.push({ data: { ticks: 1 } });
    expect(await iterator.return()).toEqual({ value: undefined, done: true });
    await state.stream!.ended;
    expect(state.stream?.endReason).toBe('client');
    expect(counts.forgotten).toEqual(['client']);
    subscription.push({ data: { ticks: 2 } });
    expect(await iterator.next()).toEqual({ value: undefined, done: true });
  });
});
