// The in-process event source behind Subscription resolvers: delivery, filters, bounded queues, unsubscribe and close.
import { describe, expect, it, vi } from 'vitest';
import { createEventSource } from './event-source.js';

describe('event source', () => {
  it('delivers values published after subscribing, to waiting and to later reads', async () => {
    const source = createEventSource<number>();
    expect(source.publish(0)).toBe(0);
    const stream = source.subscribe();
    const first = stream.next();
    expect(source.publish(1)).toBe(1);
    source.publish(2);
    source.publish(3);
    expect(await first).toEqual({ value: 1, done: false });
    expect(await stream.next()).toEqual({ value: 2, done: false });
    expect(await stream.next()).toEqual({ value: 3, done: false });
  });

  it('hands each subscriber only what its filter accepts, and counts only those', async () => {
    const source = createEventSource<{ id: string }>();
    const two = source.subscribe({ accept: (event) => event.id === '2' });
    const all = source.subscribe();
    expect(source.publish({ id: '1' })).toBe(1);
    expect(source.publish({ id: '2' })).toBe(2);
    expect(await two.next()).toEqual({ value: { id: '2' }, done: false });
    expect(await all.next()).toEqual({ value: { id: '1' }, done: false });
    expect(await all.next()).toEqual({ value: { id: '2' }, done: false });
  });

  it('keeps at most bufferSize events for a slow reader, dropping the oldest', async () => {
    const source = createEventSource<number>({ bufferSize: 2 });
    const stream = source.subscribe();
    for (const value of [1, 2, 3, 4]) source.publish(value);
    expect(await stream.next()).toEqual({ value: 3, done: false });
    expect(await stream.next()).toEqual({ value: 4, done: false });
    expect(() => createEventSource({ bufferSize: 0 })).toThrow(/bufferSize/);
  });

  it('counts listeners, resolves whenListening, and ends a subscription on return() with onEnd once', async () => {
    const source = createEventSource<number>();
    const listening = source.whenListening(2);
    const onEnd = vi.fn();
    const a = source.subscribe({ onEnd });
    expect(source.listeners).toBe(1);
    const b = source.subscribe();
    await listening;
    await source.whenListening(1);
    const waiting = a.next();
    expect(await a.return!()).toEqual({ value: undefined, done: true });
    expect(await waiting).toEqual({ value: undefined, done: true });
    await a.return!();
    expect(onEnd).toHaveBeenCalledTimes(1);
    expect(source.listeners).toBe(1);
    expect(source.publish(5)).toBe(1);
    expect(await b.next()).toEqual({ value: 5, done: false });
  });

  it('works with for await, and close() ends every stream and every later one', async () => {
    const source = createEventSource<number>();
    const seen: number[] = [];
    const reading = (async () => {
      for await (const value of source.subscribe()) seen.push(value);
    })();
    await source.whenListening();
    source.publish(1);
    source.publish(2);
    await vi.waitFor(() => expect(seen).toEqual([1, 2]));
    source.close();
    await reading;
    expect(source.listeners).toBe(0);
    const late = source.subscribe();
    expect(source.listeners).toBe(0);
    expect(await late.next()).toEqual({ value: undefined, done: true });
  });
});
