import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { APPLICATION_JSON, EVENT_STREAM, GRAPHQL_RESPONSE_JSON, incrementalFormatOf, mediaType, MULTIPART_MIXED, negotiate, parseAccept, refusalMediaType, resultMediaType } from './media-type.js';

/** Accept headers clients send, and the awkward ones: order, wildcards, weights, charsets, parameters, case. */
const ACCEPT_HEADERS = [
  '',
  '*/*',
  'application/json',
  'application/graphql-response+json',
  'application/json, application/graphql-response+json',
  'application/graphql-response+json, application/json',
  'application/graphql-response+json;q=1.0, application/json;q=0.9',
  'application/json;q=0.1, application/graphql-response+json',
  'application/json;q=0, application/graphql-response+json',
  'application/*',
  'application/*;q=0.9, application/graphql-response+json',
  'text/html, */*;q=0.8',
  'APPLICATION/GRAPHQL-RESPONSE+JSON',
  'application/graphql-response+json; charset=utf-8',
  'application/graphql-response+json; charset=UTF-8, application/json',
  'application/graphql-response+json; charset=iso-8859-1, application/json',
  'application/graphql-response+json; charset="utf-8", application/json',
  'multipart/mixed;deferSpec=20220824, application/json',
  'multipart/mixed; deferSpec=20220824',
  'text/event-stream',
  'text/event-stream, multipart/mixed',
  'text/*',
  'text/html',
  'application/xml, application/json',
];

describe('content negotiation (one rule for results, refusals and streams)', () => {
  it('chooses the media type graphql-yoga itself answers a result in, for every kind of Accept header', async () => {
    const yoga = createYoga({ schema: createSchema({ typeDefs: 'type Query { a: Int }', resolvers: { Query: { a: () => 1 } } }), logging: false });
    for (const accept of ACCEPT_HEADERS) {
      const response = await yoga.fetch('http://router.test/graphql', { method: 'POST', headers: { 'content-type': 'application/json', accept }, body: '{"query":"{ a }"}' });
      await response.arrayBuffer();
      const yogas = response.status === 406 ? undefined : response.headers.get('content-type')?.split(';')[0];
      expect({ accept, type: resultMediaType(accept)?.text }).toEqual({ accept, type: yogas });
    }
  });

  it('answers refusals in the JSON type a result gets, and in application/json to a client that accepts only streams', () => {
    expect(refusalMediaType('application/json, application/graphql-response+json')).toBe(APPLICATION_JSON);
    expect(refusalMediaType('text/event-stream, application/graphql-response+json')).toBe(GRAPHQL_RESPONSE_JSON);
    expect(refusalMediaType('text/event-stream')).toBe(APPLICATION_JSON);
    expect(refusalMediaType(undefined)).toBe(APPLICATION_JSON);
  });

  it('reads weights and parameters, so that a caller can tell them apart', () => {
    expect(parseAccept('multipart/mixed; deferSpec=20220824; q=0.5, Text/Event-Stream')).toEqual([
      { type: 'multipart', subtype: 'mixed', params: new Map([['deferspec', '20220824']]), q: 0.5 },
      { type: 'text', subtype: 'event-stream', params: new Map(), q: 1 },
    ]);
    expect(parseAccept('json, /x, application/json;q=2')).toEqual([{ type: 'application', subtype: 'json', params: new Map(), q: 1 }]);
    expect(parseAccept(null)).toEqual([{ type: '*', subtype: '*', params: new Map(), q: 1 }]);
  });

  it('offers a media type with parameters only to a client that names them, and one without to any client that accepts its type', () => {
    const apolloDefer = mediaType('multipart/mixed; deferSpec=20220824');
    const streams = [[apolloDefer], [MULTIPART_MIXED], [EVENT_STREAM]];
    expect(negotiate('multipart/mixed;deferSpec=20220824', streams)).toBe(apolloDefer);
    expect(negotiate('multipart/mixed', streams)).toBe(MULTIPART_MIXED);
    expect(negotiate('multipart/mixed;deferSpec=20990101', streams)).toBe(MULTIPART_MIXED);
    expect(negotiate('text/event-stream', streams)).toBe(EVENT_STREAM);
    expect(negotiate('application/json', streams)).toBeUndefined();
    expect(() => mediaType('application/*')).toThrow(/not a media type/);
  });
});

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
