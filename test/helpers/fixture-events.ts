// Events for fixture subgraphs' Subscription resolvers: `subscribe: () => source.subscribe()`, then `source.publish(value)` from the test.
// The demo kit's event source (subgraphs/kit/event-source.ts, unit-tested there): one implementation of the bounded per-subscriber queue.
export { createEventSource, type EventSource, type EventSourceOptions, type SubscribeOptions } from '../../subgraphs/kit/event-source.js';
