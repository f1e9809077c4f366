import { describe, expect, it } from 'vitest';
import { backoffMs, endpointOf } from './upstream-hub.js';

describe('endpointOf', () => {
  it('subscribes over WebSocket at the subgraph URL by default, ws: for http: and wss: for https:', () => {
    expect(endpointOf({ subgraph: 'a', url: 'http://a.internal:4001/graphql', route: {} })).toEqual({ protocol: 'ws', url: 'ws://a.internal:4001/graphql' });
    expect(endpointOf({ subgraph: 'a', url: 'https://a.internal/graphql', route: {} })).toEqual({ protocol: 'ws', url: 'wss://a.internal/graphql' });
  });

  it("follows the route's protocol and path (a path on the subgraph's origin, or an absolute URL)", () => {
    expect(endpointOf({ subgraph: 'a', url: 'http://a.internal:4001/graphql', route: { subscriptions: { protocol: 'sse', path: '/stream' } } })).toEqual({ protocol: 'sse', url: 'http://a.internal:4001/stream' });
    expect(endpointOf({ subgraph: 'a', url: 'http://a.internal:4001/graphql', route: { subscriptions: { path: 'wss://events.internal/ws' } } })).toEqual({ protocol: 'ws', url: 'wss://events.internal/ws' });
    expect(endpointOf({ subgraph: 'a', url: 'https://a.internal/graphql', route: { subscriptions: { protocol: 'sse', path: 'wss://events.internal/sse' } } })).toEqual({ protocol: 'sse', url: 'https://events.internal/sse' });
  });
});

describe('backoffMs', () => {
  it('doubles from the first delay up to the most, half of it random', () => {
    expect(backoffMs(0, 250, 5_000, () => 0)).toBe(125);
    expect(backoffMs(0, 250, 5_000, () => 1)).toBe(250);
    expect(backoffMs(3, 250, 5_000, () => 1)).toBe(2_000);
    expect(backoffMs(10, 250, 5_000, () => 1)).toBe(5_000);
    expect(backoffMs(10, 250, 5_000, () => 0)).toBe(2_500);
  });
});
