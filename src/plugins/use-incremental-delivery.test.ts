import { describe, expect, it } from 'vitest';
import { incrementalFormatOf } from './use-incremental-delivery.js';

describe('the incremental format a client reads', () => {
  it.each([
    ['multipart/mixed;deferSpec=20220824,application/json', 'defer-20220824'],
    ['multipart/mixed', 'defer-20220824'],
    ['application/json, multipart/mixed; incrementalSpec=v0.2', 'incremental-v0.2'],
    ['text/event-stream', 'defer-20220824'],
    ['text/event-stream;incrementalSpec=v0.2', 'incremental-v0.2'],
    // Multipart wins over an event stream, as yoga writes a stream in it.
    ['text/event-stream;incrementalSpec=v0.2, multipart/mixed', 'defer-20220824'],
  ])('%s reads %s', (accept, format) => {
    expect(incrementalFormatOf(accept)).toBe(format);
  });

  it.each([['application/json'], ['application/graphql-response+json'], ['*/*'], [''], [null], ['multipart/*'], ['multipart/mixed;charset=latin1']])('%s reads none: one answer', (accept) => {
    expect(incrementalFormatOf(accept)).toBeUndefined();
  });
});
