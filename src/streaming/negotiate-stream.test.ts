import { describe, expect, it } from 'vitest';
import { incrementalStreamOf, subscriptionFramingOf } from './negotiate-stream.js';

describe('the stream a deferred query is answered in', () => {
  it.each([
    ['multipart/mixed;deferSpec=20220824,application/json', 'defer-20220824', 'multipart'],
    ['multipart/mixed', 'defer-20220824', 'multipart'],
    ['application/json, multipart/mixed; incrementalSpec=v0.2', 'incremental-v0.2', 'multipart'],
    ['text/event-stream', 'defer-20220824', 'sse'],
    ['text/event-stream;incrementalSpec=v0.2', 'incremental-v0.2', 'sse'],
    // Multipart wins over an event stream, as yoga writes a stream in it.
    ['text/event-stream;incrementalSpec=v0.2, multipart/mixed', 'defer-20220824', 'multipart'],
    // The format is read from the named entries, the framing as yoga's processors choose it: a wildcard admits multipart.
    ['text/event-stream, */*', 'defer-20220824', 'multipart'],
  ])('%s reads %s in %s', (accept, format, framing) => {
    expect(incrementalStreamOf(accept)).toEqual({ format, framing });
  });

  it.each([['application/json'], ['application/graphql-response+json'], ['*/*'], [''], [null], ['multipart/*'], ['multipart/mixed;charset=latin1']])('%s reads none: one answer', (accept) => {
    expect(incrementalStreamOf(accept)).toBeUndefined();
  });
});

describe('the framing a subscription over HTTP is written in', () => {
  it.each([
    ['multipart/mixed;subscriptionSpec=1.0,application/json', 'multipart'],
    ['multipart/mixed; subscriptionSpec="1.0"', undefined],
    ['text/event-stream', 'sse'],
    ['multipart/mixed, text/event-stream', 'sse'],
    ['text/event-stream, multipart/mixed;subscriptionSpec=1.0', 'multipart'],
    ['application/json', undefined],
    ['*/*', undefined],
    [null, undefined],
  ])('%s reads %s', (accept, framing) => {
    expect(subscriptionFramingOf(accept)).toBe(framing);
  });
});
