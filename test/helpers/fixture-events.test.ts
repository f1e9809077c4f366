// The fixture event source as a Subscription resolver: graphql-js subscribes, a test publishes, leaving releases the listener.
import { buildSchema, parse, subscribe, type ExecutionResult } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createEventSource } from './fixture-events.js';

const schema = buildSchema(/* GraphQL */ `
  type Query { ping: String }
  type Subscription { scored(team: String): Score }
  type Score { team: String! points: Int! }
`);

interface Score {
  team: string;
  points: number;
}

describe('fixture events', () => {
  it('feeds a Subscription field: each subscriber gets what it accepts, and return() releases it', async () => {
    const scores = createEventSource<Score>();
    // What a fixture's resolvers say as `Subscription: { scored: { subscribe, resolve } }`.
    const scored = schema.getSubscriptionType()!.getFields().scored;
    scored.subscribe = (_: unknown, args: { team?: string }) => scores.subscribe({ accept: (score) => args.team === undefined || score.team === args.team });
    scored.resolve = (score: Score) => score;
    const run = async (query: string) => (await subscribe({ schema, document: parse(query) })) as AsyncGenerator<ExecutionResult>;
    const red = await run('subscription { scored(team: "red") { team points } }');
    const all = await run('subscription { scored { points } }');
    expect(scores.listeners).toBe(2);

    expect(scores.publish({ team: 'blue', points: 1 })).toBe(1);
    expect(scores.publish({ team: 'red', points: 2 })).toBe(2);
    expect((await red.next()).value).toEqual({ data: { scored: { team: 'red', points: 2 } } });
    expect((await all.next()).value).toEqual({ data: { scored: { points: 1 } } });
    expect((await all.next()).value).toEqual({ data: { scored: { points: 2 } } });

    await red.return(undefined);
    expect(scores.listeners).toBe(1);
    scores.close();
    expect((await all.next()).done).toBe(true);
  });
});
